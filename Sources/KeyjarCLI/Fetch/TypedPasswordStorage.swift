import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCommands
import KeyjarCore

/// The shared credential storage with its stored HTTP passwords hidden where the typed one
/// answers, for `keyjar fetch --user`: there the typed password alone answers the server (a
/// stored one must not be tried, and fail, first); elsewhere (another origin a redirect leads
/// to, unless `--location-trusted`) the store answers as for any load. Trust decisions, client
/// certificates and proxy credentials still come from, and go to, the store.
final class TypedPasswordStorage: URLCredentialStorage, @unchecked Sendable {
    // @unchecked: `shared` is Sendable and both are immutable.
    private let shared: SharedCredentialStorage
    /// Where the typed password answers.
    private let scope: CredentialScope

    init(shared: SharedCredentialStorage, scope: CredentialScope) {
        self.shared = shared
        self.scope = scope
        super.init()
    }

    private func hides(_ space: URLProtectionSpace) -> Bool {
        let key = ProtectionSpace(space)
        return (key.authenticationMethod.isHTTPChallenge || key.authenticationMethod == .default) && scope.answers(key)
    }

    override func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        hides(space) ? nil : shared.credentials(for: space)
    }

    override func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        hides(space) ? nil : shared.defaultCredential(for: space)
    }

    override func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        shared.set(credential, for: space)
    }

    override func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        shared.setDefaultCredential(credential, for: space)
    }
}
