import Foundation

/// Stores an item as git-credential-libsecret's `keyring_store` does (git's
/// contrib/credential/libsecret): schema `org.git.Password` (libsecret writes its name as the
/// `xdg:schema` attribute), the attributes it sets (`port` and `object` only when git has them),
/// its label `Git: protocol://host[:port]/path`, and the secret
/// `password[\npassword_expiry_utc=…][\noauth_refresh_token=…]`.
///
/// Into the Secret Service of `environment` (a ``PrivateSecretService``'s), or without one into
/// the test process's, which must then be scripts/test's throwaway one
/// (`KEYJAR_TEST_SECRET_SERVICE=private`): never a user's own keyring.
public func storeAsGitCredentialLibsecret(
    protocol: String,
    host: String,
    port: Int? = nil,
    path: String? = nil,
    user: String,
    secret: String,
    environment: [String: String]? = nil
) async throws {
    guard environment != nil || testSessionIsPrivate else {
        throw TestSupportError(
            "refusing to store git's items in a Secret Service that may be the user's: run scripts/test"
        )
    }
    var attributes = ["xdg:schema", "org.git.Password", "user", user, "protocol", `protocol`, "server", host]
    if let port { attributes += ["port", String(port)] }
    if let path { attributes += ["object", path] }
    let label = "Git: \(`protocol`)://\(host)\(port.map { ":\($0)" } ?? "")/\(path ?? "")"
    let result = try await runCommand(
        "/usr/bin/secret-tool",
        ["store", "--label=\(label)"] + attributes,
        environment: environment,
        input: secret
    )
    guard result.status == 0 else { throw TestSupportError("secret-tool store failed: \(result.error)") }
}
