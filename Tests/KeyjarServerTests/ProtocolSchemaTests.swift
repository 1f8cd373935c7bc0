import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// Real traffic, every request and reply kind, checked against Schemas/protocol.schema.json by
/// an independent JSON Schema validator (Python's jsonschema).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ProtocolSchemaTests {
    static let schemaPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Schemas/protocol.schema.json").path

    @Test func realMessagesMatchTheWrittenSchema() async throws {
        // Passwords in a file of its own (the server in this process): `repairCredentials`
        // removes every Keyjar password that this keyjard has no record of, which on the
        // suite's shared Secret Service are other tests'.
        let server = try await InProcessServer()
        let client = try TestClient(socketPath: server.socketPath, hello: false)
        client.recordedPayloads = []
        let watcher = try TestClient(socketPath: server.socketPath)
        watcher.recordedPayloads = []
        let space = ProtectionSpace(
            host: "schema.example",
            protocol: "https",
            realm: "r",
            authenticationMethod: .httpDigest
        )
        let context = WireCookieContext(url: "https://www.example.com/a", mainDocumentURL: "https://www.example.com/")
        let cookie = Cookie(name: "n", value: "v", domain: "example.com", expires: Date().addingTimeInterval(60))
        let requests: [Request] = [
            .hello(version: ProtocolVersion.current, client: "schema-test"), .subscribe(after: nil),
            .subscribe(after: 0), .status,
            .setCookies(headers: ["a=1; Domain=example.com; SameSite=Lax", "b=2; Domain=com"], context: context),
            .insertCookies(cookies: [cookie]), .cookieHeader(context: context), .cookies(context: context),
            .listCookies(domain: "example.com"), .listCookies(domain: nil),
            .importCookies(format: .netscape, text: "example.org\tFALSE\t/\tTRUE\t0\ts\t1\nbad line\n"),
            .exportCookies(format: .json, includeSameSite: false),
            .exportCookies(format: .netscape, includeSameSite: true),
            .deleteCookies(identities: [cookie.identity]), .removeCookiesCreated(since: 0),
            .clearCookies(domain: "example.org"),
            .clearCookies(domain: nil), .policy,
            .setPolicy(policy: CookiePolicy(acceptPolicy: .noThirdParty, domainRules: ["ads.example": .block])),
            .setCredential(space: space, user: "alice", password: "pw", makeDefault: true), .credentials(space: space),
            .allCredentials, .credentialChoice(space: space), .setDefaultCredential(space: space, user: "alice"),
            .password(space: space, user: "alice"),
            .password(space: space, user: "nobody"), .removeCredential(space: space, user: "alice"),
            .repairCredentials(removeUnpaired: false), .repairCredentials(removeUnpaired: true),
            .snapshot,
            .setDefaultCredential(space: space, user: "nobody"),
            .cookieHeader(context: WireCookieContext(url: "no host")),
        ]
        var lines: [String] = []
        for request in requests {
            lines.append(
                #"{"type":"ClientMessage","message":"#
                    + String(decoding: MessageCoding.encode(ClientMessage(id: 1, request: request)), as: UTF8.self)
                    + "}"
            )
            _ = try? client.call(request)
        }
        while try watcher.receive(timeout: 0.5) != nil {}
        let received = (client.recordedPayloads ?? []) + (watcher.recordedPayloads ?? [])
        for payload in received {
            lines.append(#"{"type":"ServerMessage","message":"# + String(decoding: payload, as: UTF8.self) + "}")
        }
        let messages = server.directory.path("messages.jsonl")
        try lines.joined(separator: "\n").write(toFile: messages, atomically: true, encoding: .utf8)

        let validator = """
            import json, sys
            from jsonschema import Draft202012Validator
            schema = json.load(open(sys.argv[1]))
            validators = {name: Draft202012Validator(dict(schema, **{"$ref": "#/$defs/" + name})) for name in ("ClientMessage", "ServerMessage")}
            kinds, bad = set(), 0
            for line in open(sys.argv[2]):
                entry = json.loads(line)
                message = entry["message"]
                for error in validators[entry["type"]].iter_errors(message):
                    bad += 1; print("INVALID", entry["type"], error.message[:200], json.dumps(message)[:300])
                if entry["type"] == "ClientMessage":
                    kinds.add("ClientMessage.request." + next(iter(message["request"])))
                    continue
                top = next(iter(message))
                inner = message[top]
                detail = {"reply": lambda: next(iter(inner["response"])),
                          "event": lambda: next(iter(inner["event"]["event"]))}.get(top, lambda: "-")()
                kinds.add("ServerMessage." + top + "." + detail)
            print("KINDS", " ".join(sorted(kinds)))
            sys.exit(1 if bad else 0)
            """
        let result = try await runCommand("/usr/bin/env", ["python3", "-c", validator, Self.schemaPath, messages])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        let kinds = Set(
            result.output.split(separator: "\n").first { $0.hasPrefix("KINDS") }?.split(separator: " ").dropFirst().map(
                String.init
            ) ?? []
        )
        // Every response kind and the three event kinds were exercised.
        for expected in [
            "ServerMessage.reply.hello", "ServerMessage.reply.subscribed", "ServerMessage.reply.status",
            "ServerMessage.reply.cookieOutcomes", "ServerMessage.reply.cookieHeader", "ServerMessage.reply.cookies",
            "ServerMessage.reply.importReport", "ServerMessage.reply.exported", "ServerMessage.reply.committed",
            "ServerMessage.reply.policy", "ServerMessage.reply.credentials", "ServerMessage.reply.credentialChoice",
            "ServerMessage.reply.password", "ServerMessage.reply.credentialsRepaired",
            "ServerMessage.reply.snapshot", "ServerMessage.failure.-", "ServerMessage.event.cookies",
            "ServerMessage.event.policy", "ServerMessage.event.credentials",
        ] {
            #expect(kinds.contains(expected), "no \(expected) in \(kinds.sorted())")
        }
    }
}
