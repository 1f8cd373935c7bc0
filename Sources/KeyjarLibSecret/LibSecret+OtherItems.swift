internal import CLibSecret

/// One item of another application's schema, as ``LibSecret/items(ofSchemaNamed:)`` reads it.
package struct LibSecretItem: Sendable {
    /// What became of the item's secret.
    package enum Secret: Sendable {
        /// The secret as UTF-8 text.
        case text(String)
        /// A secret that is not UTF-8 text, or holds a NUL: left in the Secret Service.
        case notText
        /// The item stayed locked (the prompt was dismissed, or could not be shown): no secret.
        case locked
    }

    /// Every attribute, `xdg:schema` included.
    package var attributes: [String: String]
    package var secret: Secret
}

extension LibSecret {
    /// Every item, in every collection, whose `xdg:schema` attribute is `schemaName`: another
    /// application's (git-credential-libsecret's `org.git.Password`, or the schema `secret-tool`
    /// stored under), with its secret. Items in a locked collection are unlocked as git's helper
    /// does: the Secret Service may prompt. An item removed meanwhile is left out.
    /// - Throws: ``LibSecretFailure/Kind/invalidInput`` for a name with a NUL; a failure without
    ///   a message when the listing failed without saying why.
    package static func items(ofSchemaNamed schemaName: String) throws(LibSecretFailure) -> [LibSecretItem] {
        guard !schemaName.utf8.contains(0) else {
            throw LibSecretFailure(.invalidInput, "the schema's name contains a NUL character")
        }
        final class Found {
            var items: [LibSecretItem] = []
        }
        final class Attributes {
            var values: [String: String] = [:]
        }
        let found = Found()
        var error: UnsafeMutablePointer<GError>?
        let listed = keyjar_each_item_of_schema(
            schemaName,
            { context, table, secret, length, locked in
                guard let context, let table else { return }
                let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
                let read = Attributes()
                keyjar_attributes_each(
                    table,
                    { context, name, value in
                        guard let context, let name, let value else { return }
                        Unmanaged<Attributes>.fromOpaque(context).takeUnretainedValue()
                            .values[String(cString: name)] = String(cString: value)
                    },
                    Unmanaged.passUnretained(read).toOpaque()
                )
                let attributes = withExtendedLifetime(read) { read.values }
                guard locked == 0, let secret else {
                    found.items.append(LibSecretItem(attributes: attributes, secret: .locked))
                    return
                }
                // Decoded here, from libsecret's buffer: a secret that is not text is never copied.
                let bytes = UnsafeRawBufferPointer(start: secret, count: Int(length))
                guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
                    found.items.append(LibSecretItem(attributes: attributes, secret: .notText))
                    return
                }
                found.items.append(LibSecretItem(attributes: attributes, secret: .text(text)))
            },
            Unmanaged.passUnretained(found).toOpaque(),
            &error
        )
        if let error { throw LibSecretFailure(consuming: error) }
        guard listed != 0 else { throw LibSecretFailure(.failed, nil) }
        return withExtendedLifetime(found) { found.items }
    }
}
