// Secrets travel in a few messages (setCredential, saveCredentials, unlockSecrets and migrateSecrets, the password and
// refreshToken replies, and both halves of a token refresh). Their descriptions hide them, so
// that logging or interpolating a message can never leak one.

extension Request: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        switch self {
        case .setCredential(let space, let user, _, let makeDefault):
            return "setCredential(space: \(space), user: \(user), password: <hidden>, makeDefault: \(makeDefault))"
        case .saveCredentials(let writes):
            return "saveCredentials(writes: \(writes))"
        case .beginTokenRefresh(let space, let user, let rejected):
            return
                "beginTokenRefresh(space: \(space), user: \(user), rejected: \(rejected == nil ? "nil" : "<hidden>"))"
        case .finishTokenRefresh(let space, let user, let outcome):
            return "finishTokenRefresh(space: \(space), user: \(user), outcome: \(outcome))"
        case .migrateSecrets(let backend, let path, let passphrase):
            return
                "migrateSecrets(backend: \(backend), path: \(path ?? "nil"), passphrase: \(passphrase == nil ? "nil" : "<hidden>"))"
        case .unlockSecrets(_, let create, let lockAfterIdle):
            return
                "unlockSecrets(passphrase: <hidden>, create: \(create), lockAfterIdle: \(lockAfterIdle.map(String.init) ?? "nil"))"
        default:
            return Self.plainDescription(of: self)
        }
    }

    public var debugDescription: String { description }

    /// The synthesized form, for the cases that carry no secret.
    private static func plainDescription(of request: Request) -> String {
        let mirror = Mirror(reflecting: request)
        guard let child = mirror.children.first, let label = child.label else { return "request" }
        return "\(label)\(child.value)"
    }
}

extension Response: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        switch self {
        case .password(let password): return password == nil ? "password(nil)" : "password(<hidden>)"
        case .refreshToken(let token): return token == nil ? "refreshToken(nil)" : "refreshToken(<hidden>)"
        case .tokenRefresh(let step): return "tokenRefresh(\(step))"
        default:
            let mirror = Mirror(reflecting: self)
            guard let child = mirror.children.first, let label = child.label else { return "response" }
            return "\(label)\(child.value)"
        }
    }

    public var debugDescription: String { description }
}

extension ServerMessage {
    /// Whether the message holds a password (a `password` reply with one), so that its bytes
    /// are wiped once sent.
    public var carriesPassword: Bool {
        switch self {
        case .reply(_, .password(let password?)), .reply(_, .refreshToken(let password?)): !password.isEmpty
        case .reply(_, .tokenRefresh): true
        default: false
        }
    }
}
