import FoundationNetworking
import KeyjarCore
import KeyjarIdentity

/// What a load knows about TLS across its attempts, by host ("host:port"): the certificates
/// the delegate accepted for this load, the servers it has settled, whether the delegate checks
/// every certificate itself, the stored trust decisions already applied, and the client
/// identity sent to each host. The connection's TLS step changes it only through these methods
/// (so that a rule — a server is put to the delegate once, a stored decision is applied once —
/// is written here once); `TLSStateTests` drives it without a handshake.
struct TLSState {
    /// Fingerprint → key pin of each certificate the delegate accepted for this load only.
    private var acceptedCertificates: [String: [String: String]] = [:]
    /// Stored trust decisions already applied, by "host fingerprint".
    private var triedStoredTrust: Set<String> = []
    private var identities: [String: ClientIdentityInUse] = [:]
    private var delegateEvaluates: [String: Bool] = [:]
    private var settledServers: Set<String> = []

    /// What an attempt to `host` is sent with: the key pins of the certificates trusted for it
    /// although they fail verification (accepted in this load, or `trusted` by the loader's
    /// earlier loads), and the client identity to offer — this load's, else the one the
    /// loader `remembered` for the host (taken on as this load's).
    mutating func settings(
        for host: String,
        trusted: [String: String]?,
        remembered: ClientIdentityInUse?
    ) -> (pins: [String], identity: ClientIdentity?) {
        var pins = Set(acceptedCertificates[host, default: [:]].values)
        if let trusted { pins.formUnion(trusted.values) }
        if identities[host] == nil, let remembered { identities[host] = remembered }
        return (pins.sorted(), identities[host]?.identity)
    }

    // MARK: Server trust

    /// Whether the next attempt to `host` first puts the server's certificate to the delegate:
    /// false once the server is settled for this load, else the delegate's answer to whether
    /// it checks every certificate (nil: not asked yet; ``delegate(evaluates:for:)`` records it).
    func putsCertificateToDelegate(_ host: String) -> Bool? {
        settledServers.contains(host) ? false : delegateEvaluates[host]
    }

    /// The delegate's answer for `host`, asked once.
    mutating func delegate(evaluates: Bool, for host: String) {
        delegateEvaluates[host] = evaluates
    }

    /// Whether a stored decision about the certificate `fingerprint` of `host` may answer
    /// unasked: once per certificate, and never when the delegate checks every certificate
    /// itself (its default handling applies the storage).
    mutating func mayApplyStoredTrust(for host: String, fingerprint: String) -> Bool {
        delegateEvaluates[host] != true && triedStoredTrust.insert(host + " " + fingerprint).inserted
    }

    /// The delegate accepted the certificate (`fingerprint`, key `pin`) for this load: its
    /// connections to `host` pin it, and the server is settled.
    mutating func accept(fingerprint: String, pin: String, for host: String) {
        acceptedCertificates[host, default: [:]][fingerprint] = pin
        settledServers.insert(host)
    }

    /// `host`'s certificate is trusted for the rest of the load (verification, or a decision
    /// kept earlier): it is not put to the delegate again.
    mutating func settle(_ host: String) {
        settledServers.insert(host)
    }

    // MARK: Client identities

    /// `identity` is sent to `host` from the next attempt on.
    mutating func send(_ identity: ClientIdentityInUse, to host: String) {
        identities[host] = identity
    }

    /// The identity just sent to `host` was refused: it is not sent again; nil when none was.
    mutating func identityRefused(by host: String) -> ClientIdentityInUse? {
        identities.removeValue(forKey: host)
    }

    /// The identities sent, by host, when the load got through.
    var identitiesSent: [String: ClientIdentityInUse] { identities }
}

/// A client identity being sent to a host.
struct ClientIdentityInUse: Sendable {
    var space: ProtectionSpace
    var identity: ClientIdentity
    var credential: URLCredential
    var source: AuthenticationState.Source
}
