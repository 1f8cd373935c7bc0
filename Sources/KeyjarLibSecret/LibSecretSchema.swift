internal import CLibSecret

/// The schemas Keyjar stores, moves or reads items under, which the shim defines in C
/// (`Sources/CLibSecret/shim-schemas.h`; Keyjar's own are documented in
/// `Schemas/secret-schema.md`), named so that callers need not import CLibSecret.
package enum LibSecretSchema: Sendable, Hashable, CaseIterable {
    /// `org.keyjar.Credential` with Keyjar's own attribute names (`keyjar-server`, …).
    case credential
    /// `org.keyjar.RefreshToken` with Keyjar's own attribute names.
    case refreshToken
    /// `org.keyjar.Credential` with the common names (`server`, …) items had before.
    case sharedCredential
    /// `org.keyjar.RefreshToken` with the common names.
    case sharedRefreshToken
    /// Chromium's Safe Storage password, keyed by `application`, found without its schema's name.
    case chromiumV2
    /// Chromium's Safe Storage password before version 56: no attributes, found by its name.
    case chromiumV1

    /// The shim's schema, the same immutable instance at every call.
    var pointer: UnsafePointer<SecretSchema>? {
        switch self {
        case .credential: keyjar_credential_schema()
        case .refreshToken: keyjar_refresh_token_schema()
        case .sharedCredential: keyjar_shared_credential_schema()
        case .sharedRefreshToken: keyjar_shared_refresh_token_schema()
        case .chromiumV2: keyjar_chromium_schema_v2()
        case .chromiumV1: keyjar_chromium_schema_v1()
        }
    }
}
