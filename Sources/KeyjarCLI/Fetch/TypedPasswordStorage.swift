import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCommands
import KeyjarCore

/// The shared credential storage with its stored HTTP passwords hidden, for `keyjar fetch
/// --user`: the typed password alone answers the server (a stored one must not be tried, and
/// fail, first), while trust decisions, client certificates and proxy credentials still come
/// from, and go to, the store.
final class TypedPasswordStorage: URLCredentialStorage, @unchecked Sendable {
    // @unchecked: `shared` is Sendable and immutable.
    private let shared: SharedCredentialStorage

    init(shared: SharedCredentialStorage) {
        self.shared = shared
        super.init()
    }

    private func hides(_ space: URLProtectionSpace) -> Bool {
        let key = ProtectionSpace(space)
        return !key.isProxy && (key.authenticationMethod.isHTTPChallenge || key.authenticationMethod == .default)
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
