import Foundation
import KeyjarTestSupport
import Testing

/// A private certificate authority (a company's, a development CA such as mkcert's) is trusted
/// without turning verification off or pinning each server: `keyjar fetch --cacert` and
/// `--capath` as curl has them, and `CURL_CA_BUNDLE`, `SSL_CERT_FILE`, `SSL_CERT_DIR` as curl
/// reads them. The real `keyjar` against an https server on 127.0.0.1 that such a CA certified.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct TrustAnchorTests {
    @Test func aPrivateCAIsTrustedWhereTheUserSaysSo() async throws {
        let keyjar = KeyjarCLI(daemon: try await DaemonProcess())
        let server = try await PrivateCAServer()
        // Not by default: the system's CAs did not issue it.
        let untrusted = try await keyjar.run(["fetch", "-s", server.url], environment: ["SSL_CERT_DIR": ""])
        #expect(untrusted.status == 1 && untrusted.error.contains("is not trusted"), "\(untrusted.error)")

        let trusted: [(String, [String], [String: String])] = [
            ("--cacert", ["--cacert", server.caFile], [:]),
            ("--capath", ["--capath", server.caDirectory], [:]),
            ("CURL_CA_BUNDLE", [], ["CURL_CA_BUNDLE": server.caFile]),
            ("SSL_CERT_FILE", [], ["SSL_CERT_FILE": server.caFile]),
            ("SSL_CERT_DIR", [], ["SSL_CERT_DIR": server.caDirectory]),
        ]
        // None of curl's variables but the one tried (a machine may set them all).
        let unset = ["CURL_CA_BUNDLE": "", "SSL_CERT_FILE": "", "SSL_CERT_DIR": ""]
        for (what, options, environment) in trusted {
            let result = try await keyjar.run(
                ["fetch", "-s"] + options + [server.url],
                environment: unset.merging(environment) { _, tried in tried }
            )
            #expect(result.status == 0 && result.output == "trusted page", "\(what): \(result.error)")
        }
        // Verification stays on: another CA's certificate is still refused, and --cacert wins
        // over the environment, as with curl.
        let other = try await keyjar.run(["fetch", "-s", "--cacert", server.otherCAFile, server.url])
        #expect(other.status == 1 && other.error.contains("is not trusted"), "\(other.error)")
        let overridden = try await keyjar.run(
            ["fetch", "-s", "--cacert", server.otherCAFile, server.url],
            environment: unset.merging(["SSL_CERT_FILE": server.caFile]) { _, tried in tried }
        )
        #expect(overridden.status == 1)
        // Nothing was stored: no exception for the certificate, no credential.
        #expect(try await keyjar.ok("credential", "list").isEmpty)

        let missing = try await keyjar.run(["fetch", "-s", "--cacert", server.directory.path("nope.pem"), server.url])
        #expect(missing.status == 2 && missing.error.contains("is not a file"), "\(missing.error)")
    }
}
