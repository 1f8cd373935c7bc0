import KeyjarCodec
import KeyjarCore

/// The `format` and `version` members both secrets files start with: a file of another format
/// or version is refused whole (a future keyjard recognises and migrates an older one).
enum SecretsFileFormat {
    /// Checks that `json` is a file of `format` and `version`; `kind` names it in errors.
    /// - Throws: ``SecretStoreError`` `.unreadableFile`.
    static func check(_ json: JSONValue, format: String, version: Int, kind: String, path: String) throws {
        let found: (format: String, version: Int)
        do throws(JSONShapeError) {
            found = (try json.string("format"), try json.int("version"))
        } catch {
            throw SecretStoreError(.unreadableFile, "\(path) is not \(kind) (\(error))")
        }
        guard found.format == format, found.version == version else {
            throw SecretStoreError(
                .unreadableFile,
                "\(path) has format \(found.format) version \(found.version); "
                    + "this keyjard reads \(format) version \(version)"
            )
        }
    }
}

/// Which secret one item of a secrets file holds: the same attributes as a Secret Service item
/// (``LibSecretStore``), and whether it is the password or the refresh token kept beside it. The
/// plain-text file (``FileSecretStore``) and the sealed one (``EncryptedSecretStore``) write it
/// the same way (`Schemas/secret-schema.md`).
package struct SecretFileKey: Hashable, Sendable {
    package var server: String
    package var port: Int
    package var `protocol`: String
    package var realm: String
    package var authtype: String
    package var proxytype: String
    package var user: String
    /// Absent for a password (as in files written before refresh tokens); `refreshToken` for the
    /// refresh token kept beside one.
    package var kind: String?

    init(space: ProtectionSpace, user: String, kind: SecretKind) {
        server = space.host
        port = space.port
        self.protocol = space.protocol
        realm = space.realm ?? ""
        authtype = space.authenticationMethod.rawValue
        proxytype = space.proxyType.rawValue
        self.user = user
        self.kind = kind == .password ? nil : kind.rawValue
    }

    /// Read from an item's members (the item's own value beside them is its owner's to read).
    init(json: JSONValue) throws(JSONShapeError) {
        server = try json.string("server")
        port = try json.int("port")
        self.protocol = try json.string("protocol")
        realm = try json.string("realm")
        authtype = try json.string("authtype")
        proxytype = try json.string("proxytype")
        user = try json.string("user")
        kind = try json.optionalString("kind")
    }

    /// The item as an object: these members and `value` under `valueName`.
    func json(with valueName: String, _ value: JSONValue) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("authtype", .string(authtype)), ("port", .integer(port)), ("protocol", .string(self.protocol)),
            ("proxytype", .string(proxytype)), ("realm", .string(realm)), ("server", .string(server)),
            ("user", .string(user)), (valueName, value),
        ]
        if let kind { members.append(("kind", .string(kind))) }
        return .object(members)
    }

    /// The key as ``SecretStore/keys()`` lists it; nil for what is not a password.
    var passwordKey: SecretStoreKey? {
        guard kind == nil else { return nil }
        return SecretStoreKey(
            server: server,
            port: String(port),
            protocol: self.protocol,
            realm: realm,
            authtype: authtype,
            proxytype: proxytype,
            user: user
        )
    }

    /// The bytes that bind a sealed value to this key (its authenticated data): a value moved to
    /// another item no longer opens. Compact JSON of the members in a fixed order.
    var boundBytes: [UInt8] {
        JSONValue.array([
            .string(server), .integer(port), .string(self.protocol), .string(realm), .string(authtype),
            .string(proxytype), .string(user), .string(orNull: kind),
        ]).encoded()
    }
}
