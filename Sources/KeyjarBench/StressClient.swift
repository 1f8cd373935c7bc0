import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol

/// What one stress client did, for the coordinator to check against keyjard's final state.
struct StressReport {
    /// Per cookie name (each client writes its own names only): every attempt in order, its
    /// value (nil: a deletion) and whether keyjard acknowledged it.
    var cookies: [String: [Attempt]] = [:]
    /// Per credential user (each client its own users, on its own host): attempts, `value`
    /// the password stored or nil (removed).
    var credentials: [String: [Attempt]] = [:]
    /// Accept policies written: the value, and the sequence it committed at (nil: no
    /// acknowledgement, so it may or may not have committed).
    var policies: [PolicyAttempt] = []
    var operations = 0
    var errors: [String: Int] = [:]
    /// Replica against keyjard's snapshot, read through the same connection at the end.
    var replicaMatches = false
    var replicaDifference = ""

    struct Attempt {
        var value: String?
        var acknowledged: Bool
    }

    struct PolicyAttempt {
        var policy: String
        var sequence: UInt64?
    }
}

// The report travels from a client's standard output to the coordinator as JSON.
extension StressReport {
    var json: JSONValue {
        func attempts(_ map: [String: [Attempt]]) -> JSONValue {
            .object(map.map { key, attempts in (key, .array(attempts.map(\.json))) })
        }
        return .object([
            ("cookies", attempts(cookies)), ("credentials", attempts(credentials)),
            ("policies", .array(policies.map(\.json))), ("operations", .integer(operations)),
            ("errors", .object(errors.map { ($0.key, .integer($0.value)) })),
            ("replicaMatches", .bool(replicaMatches)), ("replicaDifference", .string(replicaDifference)),
        ])
    }

    init(json: JSONValue) throws(JSONShapeError) {
        func attempts(_ json: JSONValue) throws(JSONShapeError) -> [String: [Attempt]] {
            var map: [String: [Attempt]] = [:]
            for (key, value) in try json.members() { map[key] = try value.elements(Attempt.init) }
            return map
        }
        cookies = try json.required("cookies", attempts)
        credentials = try json.required("credentials", attempts)
        policies = try json.required("policies") { value throws(JSONShapeError) in
            try value.elements(PolicyAttempt.init)
        }
        operations = try json.int("operations")
        for (key, value) in try json.member("errors").members() { errors[key] = try value.decodeInt() }
        replicaMatches = try json.bool("replicaMatches")
        replicaDifference = try json.string("replicaDifference")
    }
}

extension StressReport.Attempt {
    var json: JSONValue { .object([("value", .string(orNull: value)), ("acknowledged", .bool(acknowledged))]) }

    init(json: JSONValue) throws(JSONShapeError) {
        value = try json.optionalString("value")
        acknowledged = try json.bool("acknowledged")
    }
}

extension StressReport.PolicyAttempt {
    var json: JSONValue {
        .object([("policy", .string(policy)), ("sequence", sequence.map(JSONValue.integer) ?? .null)])
    }

    init(json: JSONValue) throws(JSONShapeError) {
        policy = try json.string("policy")
        sequence = try json.optionalInteger("sequence", as: UInt64.self)
    }
}

/// One stress client process: a random mix of writes and lookups against keyjard for the given
/// time, riding out keyjard's deaths (calls fail with `.unreachable` while the client
/// reconnects), then a check of its replica and a report on standard output.
func runStressClient(socketPath: String, id: Int, seconds: Double, seed: UInt64) -> Never {
    var random = StressRandom(state: seed)
    var report = StressReport()
    let deadline = Date().addingTimeInterval(seconds)
    var connected: KeyjarClient?
    while connected == nil, Date() < deadline {
        connected = try? KeyjarClient(
            configuration: .init(socketPath: socketPath, autoStart: false, requestTimeout: 10)
        )
        if connected == nil { usleep(20_000) }
    }
    guard let client = connected else {
        try? FileHandle.standardError.write(contentsOf: Data("stress-client \(id): never connected\n".utf8))
        exit(1)
    }
    let site = "c\(id).stress.example"
    guard let url = URL(string: "https://www.\(site)/") else { preconditionFailure("\(site) makes a URL") }
    let space = ProtectionSpace(host: "c\(id).stress.example", protocol: "https")
    let storage = SharedCookieStorage(client: client)
    // A quarter of the cookie writes are partitioned (CHIPS): this site embedded by another,
    // names of their own (p0…p9), recorded with their key so that a lost key is a lost write.
    guard let topLevel = URL(string: "https://top.stress.example/") else { preconditionFailure("a URL") }
    let partitionKey = CookiePartitionKey(scheme: "https", site: "stress.example")

    func count(_ error: KeyjarClientError) {
        // A refusal by its wire code (Schemas/protocol.md): shuttingDown, secretsUnavailable, …
        report.errors[error.wireCode.map { "refused-\($0)" } ?? "\(error.code)", default: 0] += 1
        // Disconnected: the client reconnects in the background; a program would not spin.
        if error.code == .unreachable { usleep(5_000) }
    }
    func record(_ name: String, _ value: String?, _ acknowledged: Bool) {
        report.cookies[name, default: []].append(.init(value: value, acknowledged: acknowledged))
    }

    while Date() < deadline {
        report.operations += 1
        let name = "k\(Int.random(in: 0..<40, using: &random))"
        let value = "v\(report.operations)"
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<40:
            let partitioned = Int.random(in: 0..<4, using: &random) == 0
            let cookieName = partitioned ? "p\(Int.random(in: 0..<10, using: &random))" : name
            let recorded = partitioned ? stressValue(value, partitionKey) : value
            do {
                let outcomes = try storage.storeCookies(
                    fromResponseHeaders: [
                        "\(cookieName)=\(value); Max-Age=86400; Path=/"
                            + (partitioned ? "; Secure; SameSite=None; Partitioned" : "")
                    ],
                    for: url,
                    mainDocumentURL: partitioned ? topLevel : nil
                )
                record(cookieName, recorded, outcomes == [.stored])
            } catch {
                record(cookieName, recorded, false)
                count(error)
            }
        case 40..<55:
            let partitioned = Int.random(in: 0..<4, using: &random) == 0
            let cookieName = partitioned ? "p\(Int.random(in: 0..<10, using: &random))" : name
            do {
                try storage.deleteCookie(
                    Cookie(
                        name: cookieName,
                        value: "",
                        domain: "www.\(site)",
                        hostOnly: true,
                        path: "/",
                        secure: partitioned,
                        partitionKey: partitioned ? partitionKey : nil
                    )
                )
                record(cookieName, nil, true)
            } catch {
                record(cookieName, nil, false)
                count(error)
            }
        case 55..<62:
            // An import of ten cookies: acknowledged together or not at all.
            let names = (0..<10).map { _ in "k\(Int.random(in: 0..<40, using: &random))" }
            let expiry = Int(Date().timeIntervalSince1970) + 86_400
            let text = names.map { "www.\(site)\tFALSE\t/\tFALSE\t\(expiry)\t\($0)\t\(value)\n" }.joined()
            var acknowledged = false
            do throws(KeyjarClientError) {
                let response = try client.call(.importCookies(format: .netscape, text: text))
                if case .importReport(let imported, _, let problems, _, _, _, _) = response, problems.isEmpty,
                    imported == names.count
                {
                    acknowledged = true
                }
            } catch {
                count(error)
            }
            for name in names { record(name, value, acknowledged) }
        case 62..<67:
            let policies: [CookieAcceptPolicy] = [.always, .onlyFromMainDocumentDomain, .always, .noThirdParty]
            let policy = policies[Int.random(in: 0..<policies.count, using: &random)]
            do {
                let response = try client.call(.setPolicy(policy: CookiePolicy(acceptPolicy: policy)))
                if case .committed(let sequence) = response {
                    report.policies.append(.init(policy: policy.rawValue, sequence: sequence ?? 0))
                }
            } catch {
                report.policies.append(.init(policy: policy.rawValue, sequence: nil))
                count(error)
            }
        case 67..<75:
            let user = "u\(Int.random(in: 0..<5, using: &random))"
            let adding = Bool.random(using: &random)
            do {
                if adding {
                    _ = try client.call(
                        .setCredential(space: space, user: user, password: "pw-\(value)", makeDefault: false)
                    )
                } else {
                    _ = try client.call(.removeCredential(space: space, user: user))
                }
                report.credentials[user, default: []].append(
                    .init(value: adding ? "pw-\(value)" : nil, acknowledged: true)
                )
            } catch {
                report.credentials[user, default: []].append(
                    .init(value: adding ? "pw-\(value)" : nil, acknowledged: false)
                )
                count(error)
            }
        default:
            // Lookups through the replica: never a round trip.
            _ = storage.cookieHeader(for: url, mainDocumentURL: nil)
        }
    }

    // The replica against keyjard's own view, through this connection, once nobody writes any
    // more: the snapshot's reply comes after every event keyjard sent before it, so a replica
    // read at the snapshot's sequence (the same before and after reading it) holds exactly them.
    let checkDeadline = Date().addingTimeInterval(30)
    while Date() < checkDeadline {
        guard case .snapshot(let snapshot)? = try? client.call(.snapshot) else {
            usleep(50_000)
            continue
        }
        let before = client.sequence
        let replica = Set(storage.cookies.map(stressListing))
        let policy = storage.policy
        guard before == snapshot.sequence, client.sequence == before else {
            // Others are still writing: this reading is between two of their changes.
            usleep(50_000)
            continue
        }
        let truth = Set(
            snapshot.cookies.filter { !$0.isExpired(at: Date()) }.map(stressListing)
        )
        report.replicaMatches = replica == truth && policy == snapshot.policy
        if !report.replicaMatches {
            report.replicaDifference =
                "replica-only \(Array(replica.subtracting(truth).prefix(3))); keyjard-only \(Array(truth.subtracting(replica).prefix(3)))"
        }
        break
    }
    FileHandle.standardOutput.write(Data(report.json.encoded()))
    exit(0)
}

/// SplitMix64, for a client's reproducible mix.
struct StressRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A cookie's value as the stress check records it: with its partition key when it has one, so
/// that a cookie stored without its key does not pass for the one written.
func stressValue(_ value: String, _ partitionKey: CookiePartitionKey?) -> String {
    partitionKey.map { value + " in " + $0.serialized } ?? value
}

/// A cookie in the replica check: its whole identity and value.
private func stressListing(_ cookie: Cookie) -> String {
    "\(cookie.name)@\(cookie.hostOnly ? "" : ".")\(cookie.domain)\(cookie.path)=\(stressValue(cookie.value, cookie.partitionKey))"
}
