import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarTestSupport
import Testing

@testable import KeyjarProtocol

/// The codec, the golden messages and Schemas/protocol.schema.json against one another: every
/// case of the protocol has a golden message; the codec reads each back to its sample and
/// writes the sample as the same JSON; the schema accepts both. Any one of the three changed
/// alone fails here.
@Suite struct GoldenTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static let schemaPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Schemas/protocol.schema.json").path

    static func golden(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name + ".json")))
    }

    static func encode(_ sample: GoldenSample) -> [UInt8] {
        switch sample {
        case .client(let message): MessageCoding.encode(message)
        case .server(let message): MessageCoding.encode(message)
        }
    }

    /// Decodes as the sample's kind and says whether it is the sample.
    static func decodes(_ payload: [UInt8], to sample: GoldenSample) throws(WireError) -> Bool {
        switch sample {
        case .client(let message): try MessageCoding.decode(ClientMessage.self, from: payload) == message
        case .server(let message): try MessageCoding.decode(ServerMessage.self, from: payload) == message
        }
    }

    // MARK: Coverage

    @Test func everyCaseOfTheProtocolHasASample() {
        var requests = Set<RequestCase>()
        var responses = Set<ResponseCase>()
        var serverMessages = Set<ServerMessageCase>()
        for (_, sample) in GoldenSample.all {
            switch sample {
            case .client(let message): requests.insert(RequestCase(message.request))
            case .server(let message):
                serverMessages.insert(ServerMessageCase(message))
                if case .reply(_, let response) = message { responses.insert(ResponseCase(response)) }
            }
        }
        #expect(Set(RequestCase.allCases).subtracting(requests).isEmpty, "requests without a golden message")
        #expect(Set(ResponseCase.allCases).subtracting(responses).isEmpty, "responses without a golden message")
        #expect(
            Set(ServerMessageCase.allCases).subtracting(serverMessages).isEmpty,
            "server messages without a golden message"
        )
    }

    @Test func everySampleHasAGoldenFileAndEveryFileASample() throws {
        let files = Set(
            try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".json") }
                .map { String($0.dropLast(".json".count)) }
        )
        let names = GoldenSample.all.map(\.name)
        #expect(Set(names).count == names.count, "two samples share a name")
        for (name, sample) in GoldenSample.all where !files.contains(name) {
            Issue.record(
                "no Golden/\(name).json; the codec writes: \(String(decoding: Self.encode(sample), as: UTF8.self))"
            )
        }
        #expect(files.subtracting(names).isEmpty, "golden files without a sample")
    }

    // MARK: Codec and goldens

    @Test func theGoldenMessagesDecodeToTheirSamples() throws {
        for (name, sample) in GoldenSample.all {
            #expect(try Self.decodes(try Self.golden(name), to: sample), "Golden/\(name).json")
        }
    }

    /// The codec's members may come in another order than the golden file's, and numbers in
    /// another form (`1600000000.0` for `1600000000`, `/` unescaped): the same JSON value.
    @Test func theCodecWritesTheGoldenMessages() throws {
        for (name, sample) in GoldenSample.all {
            let written = Self.encode(sample)
            let golden = try #require(JSONReader.parse(try Self.golden(name)), "Golden/\(name).json")
            let json = try #require(JSONReader.parse(written), "\(name): the codec's output is not JSON")
            #expect(
                Self.same(json, golden),
                "\(name): the codec writes \(String(decoding: written, as: UTF8.self))"
            )
            #expect(try Self.decodes(written, to: sample), "\(name): read back")
        }
    }

    /// Equal JSON values: objects as sets of members, numbers by value.
    static func same(_ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)):
            return a == b || Decimal(string: String(a)).map { $0 == Decimal(string: String(b)) } == true
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy(same)
        case (.object(let a), .object(let b)):
            return a.count == b.count
                && a.allSatisfy { member in
                    b.first { $0.key == member.key }.map { same(member.value, $0.value) } ?? false
                }
        default: return false
        }
    }

    // MARK: Schema

    /// The golden messages and what the codec writes, checked by an independent JSON Schema
    /// validator (Python's jsonschema).
    // No time limit of its own: one counted from the test's start counts the time it waits
    // behind the rest of the suite (it once failed so on a busy machine); the validator's run
    // has the suite's hang deadline, and the suite its hang limit.
    @Test(.timeLimit(hangLimit)) func theSchemaAcceptsTheGoldenMessagesAndTheCodecsOutput() async throws {
        var lines: [String] = []
        for (name, sample) in GoldenSample.all {
            let type = if case .client = sample { "ClientMessage" } else { "ServerMessage" }
            for (origin, bytes) in [("golden", try Self.golden(name)), ("codec", Self.encode(sample))] {
                lines.append(
                    #"{"name":"\#(name) (\#(origin))","type":"\#(type)","message":"#
                        + String(decoding: bytes, as: UTF8.self) + "}"
                )
            }
        }
        let directory = try TemporaryDirectory()
        let messages = directory.path("golden.jsonl")
        try lines.joined(separator: "\n").write(toFile: messages, atomically: true, encoding: .utf8)
        let validator = """
            import json, sys
            from jsonschema import Draft202012Validator
            schema = json.load(open(sys.argv[1]))
            validators = {name: Draft202012Validator(dict(schema, **{"$ref": "#/$defs/" + name})) for name in ("ClientMessage", "ServerMessage")}
            checked, bad = 0, 0
            for line in open(sys.argv[2]):
                entry = json.loads(line)
                checked += 1
                for error in validators[entry["type"]].iter_errors(entry["message"]):
                    bad += 1; print("INVALID", entry["name"], error.message[:300])
            print("CHECKED", checked)
            sys.exit(1 if bad or not checked else 0)
            """
        let result = try await runCommand("/usr/bin/env", ["python3", "-c", validator, Self.schemaPath, messages])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("CHECKED \(lines.count)"), "\(result.output)")
    }
}
