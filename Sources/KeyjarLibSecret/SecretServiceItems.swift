import KeyjarPlatform

/// One item another application keeps in the Secret Service: its attributes (public, by the
/// Secret Service's rules) and its secret. `description` never shows the secret.
package struct SecretServiceItem: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Every attribute, `xdg:schema` included.
    package var attributes: [String: String]
    /// The secret as UTF-8 text.
    package var secret: String

    package init(attributes: [String: String], secret: String) {
        self.attributes = attributes
        self.secret = secret
    }

    package var description: String {
        let shown = attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "SecretServiceItem(\(shown), secret: <hidden>)"
    }
    package var debugDescription: String { description }
}

/// Reads the items of another application's schema from the Secret Service, for
/// `keyjar credential import`: git-credential-libsecret's `org.git.Password`, or the schema a
/// user stored items under with `secret-tool store xdg:schema NAME …`.
///
/// Items are found by their `xdg:schema` attribute, which libsecret stores with every item, in
/// every collection. A locked collection is unlocked the way git-credential-libsecret does it
/// (the Secret Service may prompt); if any item stays locked the read fails with
/// ``LibSecretFailure/Kind/locked`` rather than returning part of the items. Nothing is
/// changed: the items are only read. Here, beside the other libsecret calls, rather than in
/// the daemon's persistence (`KeyjarStore`): only `keyjar credential import` reads them.
///
/// ```swift
/// let items = try SecretServiceItems.items(ofSchema: "org.git.Password")
/// items.first?.attributes["server"]   // "example.com"
/// ```
package enum SecretServiceItems {
    /// Every item whose `xdg:schema` is `schema`, ordered by their attributes so that a run
    /// reads them in the same order every time.
    /// - Throws: ``LibSecretFailure`` with a message that names the schema: no Secret Service,
    ///   a locked item, a secret that is not UTF-8 text or holds a NUL, or another failure of
    ///   the service.
    package static func items(ofSchema schema: String) throws(LibSecretFailure) -> [SecretServiceItem] {
        if let problem = SessionBus.problem() {
            throw LibSecretFailure(.serviceUnavailable, problem)
        }
        guard !schema.isEmpty, !schema.utf8.contains(0) else {
            throw LibSecretFailure(.invalidInput, "a schema name must be non-empty text without NUL")
        }
        let read: [LibSecretItem]
        do {
            read = try LibSecret.items(ofSchemaNamed: schema)
        } catch {
            throw LibSecretFailure(
                error.kind,
                "reading the items of schema \(schema): \(error.message ?? "libsecret gave no reason")"
            )
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
            throw LibSecretFailure(
                .locked,
                "\(locked.count) item(s) of schema \(schema) stay locked, e.g. \(describe(item))"
            )
        }
        if let item = undecodable.first {
            throw LibSecretFailure(
                .failed,
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
