import KeyjarLibSecret
import KeyjarPlatform

/// One item another application keeps in the Secret Service: its attributes (public, by the
/// Secret Service's rules) and its secret. `description` never shows the secret.
public struct SecretServiceItem: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Every attribute, `xdg:schema` included.
    public var attributes: [String: String]
    /// The secret as UTF-8 text.
    public var secret: String

    public init(attributes: [String: String], secret: String) {
        self.attributes = attributes
        self.secret = secret
    }

    public var description: String {
        let shown = attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "SecretServiceItem(\(shown), secret: <hidden>)"
    }
    public var debugDescription: String { description }
}

/// Reads the items of another application's schema from the Secret Service, for
/// `keyjar credential import`: git-credential-libsecret's `org.git.Password`, or the schema a
/// user stored items under with `secret-tool store xdg:schema NAME …`.
///
/// Items are found by their `xdg:schema` attribute, which libsecret stores with every item, in
/// every collection. A locked collection is unlocked the way git-credential-libsecret does it
/// (the Secret Service may prompt); if any item stays locked the read fails with
/// ``SecretStoreError/Code/locked`` rather than returning part of the items. Nothing is
/// changed: the items are only read.
///
/// ```swift
/// let items = try SecretServiceItems.items(ofSchema: "org.git.Password")
/// items.first?.attributes["server"]   // "example.com"
/// ```
public enum SecretServiceItems {
    /// Every item whose `xdg:schema` is `schema`, ordered by their attributes so that a run
    /// reads them in the same order every time.
    /// - Throws: ``SecretStoreError``: no Secret Service, a locked item, a secret that is not UTF-8
    ///   text or holds a NUL, or another failure of the service.
    public static func items(ofSchema schema: String) throws(SecretStoreError) -> [SecretServiceItem] {
        if let problem = SessionBus.problem() {
            throw SecretStoreError(.serviceUnavailable, problem)
        }
        guard !schema.isEmpty, !schema.utf8.contains(0) else {
            throw SecretStoreError(.invalidInput, "a schema name must be non-empty text without NUL")
        }
        let read: [LibSecretItem]
        do {
            read = try LibSecret.items(ofSchemaNamed: schema)
        } catch {
            throw SecretStoreError(error, while: "reading the items of schema \(schema)")
        }
        var items: [SecretServiceItem] = []
        var locked: [[String: String]] = []
        var undecodable: [[String: String]] = []
        for item in read {
            switch item.secret {
            case .text(let secret): items.append(SecretServiceItem(attributes: item.attributes, secret: secret))
            case .locked: locked.append(item.attributes)
            case .notText: undecodable.append(item.attributes)
            }
        }
        if let item = locked.first {
            throw SecretStoreError(
                .locked,
                "\(locked.count) item(s) of schema \(schema) stay locked, e.g. \(describe(item))"
            )
        }
        if let item = undecodable.first {
            throw SecretStoreError(
                .operationFailed,
                "the secret of an item of schema \(schema) is not text (\(describe(item)))"
            )
        }
        return items.sorted { describe($0.attributes) < describe($1.attributes) }
    }

    /// An item's attributes as `name=value` pairs in name order (public, by the Secret Service's
    /// rules: secrets never go into attributes).
    private static func describe(_ attributes: [String: String]) -> String {
        attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}
