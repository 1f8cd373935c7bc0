import Foundation
import FoundationNetworking
import Keyjar
import KeyjarLoader
import KeyjarTestSupport
import KeyjarTransfer
import Testing

/// A loader configured with extra trust anchors for one program verifies against the system's
/// CAs and those: a server a private CA certified loads; one of another CA still fails.
@Suite(.timeLimit(hangLimit))
struct TrustAnchorsTests {
    func loader(_ anchors: TrustAnchors) -> URLLoader {
        URLLoader(configuration: .init(cookieStorage: .ephemeral(), trustAnchors: anchors))
    }

    @Test func extraAnchorsAreTrustedBesideTheSystemsAndNothingElse() async throws {
        let server = try await PrivateCAServer()
        let request = URLRequest(url: try #require(URL(string: server.url)))

        let system = await load(request, with: loader(.system))
        #expect(system.error?.code == .serverCertificateUntrusted, "\(system.error.map { "\($0)" } ?? "")")

        let added = await load(request, with: loader(try .adding(file: server.caFile)))
        #expect(added.body == "trusted page", "\(added.error.map { "\($0)" } ?? "")")

        let other = await load(request, with: loader(try .adding(file: server.otherCAFile)))
        #expect(other.error?.code == .serverCertificateUntrusted)

        let replaced = await load(request, with: loader(.replacing(file: server.caFile)))
        #expect(replaced.body == "trusted page")

        #expect(throws: TrustAnchorsError.self) { try TrustAnchors.adding(file: server.directory.path("none.pem")) }
        #expect(throws: TrustAnchorsError.self) { try TrustAnchors.adding(file: "/etc/hostname") }
    }

    /// curl's environment, read as curl reads it.
    @Test func theEnvironmentIsReadAsCurlReadsIt() {
        #expect(TrustAnchors.fromEnvironment([:]) == .system)
        #expect(TrustAnchors.fromEnvironment(["SSL_CERT_FILE": ""]) == .system)
        #expect(
            TrustAnchors.fromEnvironment(["CURL_CA_BUNDLE": "/a.pem", "SSL_CERT_FILE": "/b.pem"])
                == .replacing(file: "/a.pem")
        )
        #expect(
            TrustAnchors.fromEnvironment(["SSL_CERT_FILE": "/b.pem", "SSL_CERT_DIR": "/d"])
                == .replacing(file: "/b.pem", directory: "/d")
        )
    }
}
