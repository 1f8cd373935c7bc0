import Foundation
import FoundationNetworking
import KeyjarCore
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// What a load knows about TLS across its attempts, without a handshake: which servers are put
/// to the delegate, which pins and identity an attempt is sent with, and that a stored trust
/// decision answers once.
@Suite("TLS state")
struct TLSStateTests {
    static let host = "intranet.example:443"

    @Test func aServerIsPutToTheDelegateUntilItIsSettled() {
        var tls = TLSState()
        #expect(tls.putsCertificateToDelegate(Self.host) == nil)
        tls.delegate(evaluates: true, for: Self.host)
        #expect(tls.putsCertificateToDelegate(Self.host) == true)
        #expect(tls.putsCertificateToDelegate("other.example:443") == nil)
        tls.settle(Self.host)
        #expect(tls.putsCertificateToDelegate(Self.host) == false)
    }

    @Test func anAcceptedCertificateIsPinnedBesideTheLoadersAndSettlesTheServer() {
        var tls = TLSState()
        tls.delegate(evaluates: true, for: Self.host)
        tls.accept(fingerprint: "AA", pin: "sha256//pin-a", for: Self.host)
        let settings = tls.settings(for: Self.host, trusted: ["BB": "sha256//pin-b"], remembered: nil)
        #expect(settings.pins == ["sha256//pin-a", "sha256//pin-b"])
        #expect(settings.identity == nil)
        #expect(tls.putsCertificateToDelegate(Self.host) == false)
        let elsewhere = tls.settings(for: "other.example:443", trusted: nil, remembered: nil)
        #expect(elsewhere.pins.isEmpty)
    }

    /// Once per certificate, and never while the delegate checks every certificate itself.
    @Test func aStoredTrustDecisionAnswersOnce() {
        var tls = TLSState()
        let first = tls.mayApplyStoredTrust(for: Self.host, fingerprint: "AA")
        let again = tls.mayApplyStoredTrust(for: Self.host, fingerprint: "AA")
        let anotherCertificate = tls.mayApplyStoredTrust(for: Self.host, fingerprint: "BB")
        #expect(first && !again && anotherCertificate)
        var checking = TLSState()
        checking.delegate(evaluates: true, for: Self.host)
        let whileChecking = checking.mayApplyStoredTrust(for: Self.host, fingerprint: "AA")
        #expect(!whileChecking)
    }

    @Test func anIdentityIsSentUntilRefusedAndTheLoadersIsTakenOn() async throws {
        let identities = try await TestIdentities()
        defer { try? FileManager.default.removeItem(atPath: identities.directory) }
        let alice = try ClientIdentity(contentsOf: URL(fileURLWithPath: identities.alicePEM))
        let mallory = try ClientIdentity(contentsOf: URL(fileURLWithPath: identities.malloryPEM))
        let space = ProtectionSpace(
            host: "intranet.example",
            port: 443,
            protocol: "https",
            authenticationMethod: .clientCertificate
        )
        func inUse(_ identity: ClientIdentity, user: String) -> ClientIdentityInUse {
            ClientIdentityInUse(
                space: space,
                identity: identity,
                credential: URLCredential(user: user, password: "", persistence: .forSession),
                source: .storage
            )
        }

        var tls = TLSState()
        // The loader's identity for the host, from an earlier load, is taken on.
        let first = tls.settings(for: Self.host, trusted: nil, remembered: inUse(alice, user: "alice"))
        #expect(first.identity == alice)
        // This load's own is kept over the loader's from then on.
        let later = tls.settings(for: Self.host, trusted: nil, remembered: inUse(mallory, user: "mallory"))
        #expect(later.identity == alice)

        tls.send(inUse(mallory, user: "mallory"), to: Self.host)
        #expect(tls.identitiesSent[Self.host]?.identity == mallory)
        let refused = tls.identityRefused(by: Self.host)
        #expect(refused?.identity == mallory)
        let none = tls.settings(for: Self.host, trusted: nil, remembered: nil)
        #expect(none.identity == nil)
        #expect(tls.identitiesSent.isEmpty)
    }
}
