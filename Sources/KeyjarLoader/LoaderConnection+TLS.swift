import CCurl
import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarTransfer
import Synchronization

extension LoaderConnection {
    /// libcurl's codes for a certificate that failed verification (or a pinned key that did
    /// not match): a server-trust challenge.
    private static let verificationFailures: Set<UInt32> = [
        CURLE_PEER_FAILED_VERIFICATION.rawValue, CURLE_SSL_CACERT_BADFILE.rawValue,
        CURLE_SSL_PINNEDPUBKEYNOTMATCH.rawValue,
    ]
    /// How a handshake (or the first read after it, in TLS 1.3) ends when the server wanted a
    /// client certificate it did not get or did not accept.
    private static let handshakeFailures: Set<UInt32> = [
        CURLE_SSL_CONNECT_ERROR.rawValue, CURLE_RECV_ERROR.rawValue, CURLE_SEND_ERROR.rawValue,
        CURLE_SSL_CERTPROBLEM.rawValue, CURLE_GOT_NOTHING.rawValue,
    ]

    /// The TLS settings of the next attempt: keys of certificates trusted despite failed
    /// verification, and the client identity for this host.
    func prepareTLS(_ request: inout TransferRequest, url: URL) {
        request.trustAnchors = loader.configuration.trustAnchors
        guard ResponseHead.sameFieldName(url.scheme ?? "", "https") else { return }
        let (pins, identity) = tlsSettings(for: Self.hostKey(url))
        request.acceptedKeyPins = pins
        request.clientCertificate = identity.map(ClientCertificate.init)
    }

    /// Keys of certificates trusted for host `key` although they fail verification (accepted in
    /// this load or remembered by the loader), and the client identity to offer it.
    private func tlsSettings(for key: String) -> (pins: [String], identity: ClientIdentity?) {
        let remembered = loader.memory.withLock { memory in
            memory.trustedCertificates.isEmpty && memory.clientIdentities.isEmpty
                ? nil : (memory.trustedCertificates[key], memory.clientIdentities[key])
        }
        return tls.settings(for: key, trusted: remembered?.0, remembered: remembered?.1)
    }

    // MARK: Server trust on every TLS connection

    /// Whether the next attempt to `url` first puts the server's certificate to the delegate:
    /// an https server this load has not settled, and a delegate that says it can authenticate
    /// against server trust (asked once per server).
    func needsServerTrustEvaluation(_ url: URL) -> Bool {
        guard ResponseHead.sameFieldName(url.scheme ?? "", "https"), let host = url.host,
            let legacy = channel.legacyAuthentication
        else { return false }
        let key = Self.hostKey(url)
        if let known = tls.putsCertificateToDelegate(key) { return known }
        let port = url.port ?? 443
        let answer = channel.ask(
            { _ in
                legacy.connection(
                    self,
                    // Equal by value to a space the delegate builds with Foundation's constants.
                    canAuthenticateAgainst: ProtectionSpace(
                        host: host,
                        port: port,
                        protocol: "https",
                        authenticationMethod: .serverTrust
                    ).foundationSpace
                )
            },
            ifNoDelegate: false
        )
        tls.delegate(evaluates: answer, for: key)
        return answer
    }

    /// A handshake with the load's TLS settings and no request, to show the delegate the
    /// certificate before anything is sent; a handshake that fails goes the way a load's would
    /// (a server-trust or client-certificate challenge, else the failure).
    func evaluateServerTrust(_ url: URL) {
        let settings = tlsSettings(for: Self.hostKey(url))
        let probe = TLSProbe.run(
            url,
            verification: .asTheLoad(acceptedKeyPins: settings.pins, anchors: loader.configuration.trustAnchors),
            clientIdentity: settings.identity,
            proxy: loader.configuration.proxy,
            proxyAuthentication: authentication.proxyCredential { proxyAddress(for: url) },
            timeout: currentRequest.timeoutInterval > 0 ? currentRequest.timeoutInterval : 60
        )
        guard probe.result.succeeded, !probe.certificates.isEmpty, let host = url.host else {
            if handleTLSFailure(probe.result, url: url, awaitingHead: true) { return }
            return fail(LoaderError.make(for: probe.result, url: url))
        }
        let trust = ServerTrust(host: host, port: url.port ?? 443, certificates: probe.certificates, failureReason: "")
        present(
            .serverTrust(trust, nil),
            space: ServerTrustProtectionSpace(serverTrust: trust),
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: nil
        )
    }

    /// A load that failed in TLS: a server-trust challenge when the certificate failed
    /// verification, a client-certificate challenge when the server asked for one. False when
    /// the failure is neither (the load then fails with it).
    func handleTLSFailure(_ result: CurlResult, url: URL, awaitingHead: Bool) -> Bool {
        guard ResponseHead.sameFieldName(url.scheme ?? "", "https"), let host = url.host else { return false }
        let isVerification = Self.verificationFailures.contains(result.code)
        guard isVerification || (awaitingHead && Self.handshakeFailures.contains(result.code)) else { return false }
        let probe = TLSProbe.run(
            url,
            proxy: loader.configuration.proxy,
            proxyAuthentication: authentication.proxyCredential { proxyAddress(for: url) },
            timeout: currentRequest.timeoutInterval > 0 ? currentRequest.timeoutInterval : 60
        )
        let port = url.port ?? 443
        if isVerification {
            guard !probe.certificates.isEmpty else { return false }
            considerServerTrust(
                ServerTrust(host: host, port: port, certificates: probe.certificates, failureReason: result.message),
                url: url
            )
            return true
        }
        guard probe.askedForClientCertificate else { return false }
        considerClientCertificate(
            ProtectionSpace(host: host, port: port, protocol: "https", authenticationMethod: .clientCertificate),
            url: url,
            reason: result.message
        )
        return true
    }

    // MARK: Server trust

    private static func trustSpace(_ trust: ServerTrust) -> ProtectionSpace {
        ProtectionSpace(host: trust.host, port: trust.port, protocol: "https", authenticationMethod: .serverTrust)
    }

    private func considerServerTrust(_ trust: ServerTrust, url: URL) {
        guard let leaf = trust.leaf else { return }
        let key = Self.hostKey(url)
        // A decision kept in the storage (this process's or keyjard's) answers unasked, once,
        // unless the delegate checks every certificate itself (its default handling uses it).
        if tls.mayApplyStoredTrust(for: key, fingerprint: leaf.sha256Fingerprint), adoptStoredTrust(trust, key: key) {
            return startAttempt()
        }
        let error = LoaderError.make(
            .serverCertificateUntrusted,
            "The certificate of \(trust.host):\(trust.port) (SHA-256 \(leaf.sha256Fingerprint)) is not trusted: \(trust.failureReason)",
            url: url
        )
        present(
            .serverTrust(trust, error),
            space: ServerTrustProtectionSpace(serverTrust: trust),
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: error
        )
    }

    /// Whether the credential storage keeps a decision to trust this certificate (when the load
    /// may read it); if so the loader remembers its key, pinned by the next attempts.
    private func adoptStoredTrust(_ trust: ServerTrust, key: String) -> Bool {
        guard let leaf = trust.leaf,
            storedCredentials(for: Self.trustSpace(trust))?.keys.contains(leaf.sha256Fingerprint) == true
        else { return false }
        loader.memory.withLock {
            $0.trustedCertificates[key, default: [:]][leaf.sha256Fingerprint] = leaf.publicKeyPin
        }
        return true
    }

    /// The answer to a server-trust challenge. `error` is nil when default handling trusts the
    /// certificate (``ServerTrust/isTrusted``).
    func resolveServerTrust(
        _ challenge: URLAuthenticationChallenge,
        trust: ServerTrust,
        error: URLError?,
        _ disposition: ChallengeDisposition
    ) {
        guard let url = currentRequest.url, let leaf = trust.leaf else {
            return fail(
                error ?? LoaderError.make(.serverCertificateUntrusted, "The server showed no certificate", url: nil)
            )
        }
        let key = Self.hostKey(url)
        switch disposition {
        case .use(let credential):
            // Pinned for this load, so that its connections meet the certificate the delegate
            // saw. Kept beyond it only when it overrides a failed verification: a kept pin
            // replaces the CA checks for that host, and a certificate that passed them needs no
            // decision (kept, it would refuse the server's next key).
            tls.accept(fingerprint: leaf.sha256Fingerprint, pin: leaf.publicKeyPin, for: key)
            if error != nil, credential.persistence != .none {
                loader.memory.withLock {
                    $0.trustedCertificates[key, default: [:]][leaf.sha256Fingerprint] = leaf.publicKeyPin
                }
                // The decision is the certificate's fingerprint, whatever the credential says.
                _ = keepByPersistence(
                    URLCredential(user: leaf.sha256Fingerprint, password: "", persistence: credential.persistence),
                    for: Self.trustSpace(trust)
                )
            }
            startAttempt()
        case .cancel:
            deliverCancellation(of: challenge)
            fail(
                LoaderError.make(
                    .userCancelledAuthentication,
                    "The server-trust challenge was cancelled",
                    url: currentRequest.url,
                    underlying: error
                )
            )
        case .continueWithoutCredential, .performDefaultHandling, .rejectProtectionSpace:
            // Default evaluation: verification, or a decision kept earlier.
            guard let error else {
                tls.settle(key)
                return startAttempt()
            }
            guard adoptStoredTrust(trust, key: key) else { return fail(error) }
            tls.settle(key)
            startAttempt()
        }
    }

    // MARK: Client certificates

    private func considerClientCertificate(_ space: ProtectionSpace, url: URL, reason: String) {
        let key = Self.hostKey(url)
        let sent = tls.identityRefused(by: key)
        if let sent {
            authentication.refused(sent.credential, in: space)
            loader.memory.withLock { _ = $0.clientIdentities.removeValue(forKey: key) }
        }
        // The storage's identity for this server answers unasked, once.
        if startAttemptWithStoredIdentity(space, key: key) { return }
        let error = clientCertificateError(refused: sent != nil, url: url, reason: reason)
        present(
            .clientCertificate(space, error),
            space: space.foundationSpace,
            proposedCredential: authentication.lastFailed[space] ?? proposedStoredCredential(for: space),
            previousFailureCount: authentication.failureCount(in: space),
            failureResponse: nil,
            error: error
        )
    }

    /// Starts another attempt with the identity the storage holds for `space`, the first time
    /// it is asked for that space; false when there is none (or it was tried already).
    private func startAttemptWithStoredIdentity(_ space: ProtectionSpace, key: String) -> Bool {
        guard let stored = authentication.takeStoredCredential(in: space, from: { storedCredential(for: space) }) else {
            return false
        }
        guard let identity = ClientIdentity(credential: stored) else { return false }
        tls.send(ClientIdentityInUse(space: space, identity: identity, credential: stored, source: .storage), to: key)
        startAttempt()
        return true
    }

    private func clientCertificateError(refused: Bool, url: URL, reason: String) -> URLError {
        let host = "\(url.host ?? ""):\(url.port ?? 443)"
        return refused
            ? LoaderError.make(
                .clientCertificateRejected,
                "\(host) refused the client certificate: \(reason)",
                url: url
            )
            : LoaderError.make(.clientCertificateRequired, "\(host) requires a client certificate: \(reason)", url: url)
    }

    func resolveClientCertificate(
        _ challenge: URLAuthenticationChallenge,
        space: ProtectionSpace,
        error: URLError,
        _ disposition: ChallengeDisposition
    ) {
        guard let url = currentRequest.url else { return fail(error) }
        let key = Self.hostKey(url)
        switch disposition {
        case .use(let credential):
            guard let identity = ClientIdentity(credential: credential) else {
                return fail(
                    LoaderError.make(
                        .clientCertificateRejected,
                        "The credential for \(space.host) holds no client certificate and key",
                        url: url
                    )
                )
            }
            tls.send(
                ClientIdentityInUse(space: space, identity: identity, credential: credential, source: .delegate),
                to: key
            )
            startAttempt()
        case .performDefaultHandling:
            if startAttemptWithStoredIdentity(space, key: key) { return }
            fail(error)
        case .cancel:
            deliverCancellation(of: challenge)
            fail(
                LoaderError.make(
                    .userCancelledAuthentication,
                    "The client-certificate challenge was cancelled",
                    url: url,
                    underlying: error
                )
            )
        case .continueWithoutCredential, .rejectProtectionSpace:
            fail(error)
        }
    }

    /// The load got through: identities that worked are kept by their persistence, and (when
    /// stored) sent at once to the same host by this loader's later loads.
    func clientIdentitiesSucceeded() {
        for (key, inUse) in tls.identitiesSent {
            let stored =
                inUse.source == .storage
                || (inUse.source == .delegate && keepByPersistence(inUse.credential, for: inUse.space))
            if stored { loader.memory.withLock { $0.clientIdentities[key] = inUse } }
        }
    }
}
