import ArgumentParser
package import KeyjarCodec
package import KeyjarCore

// Command-line spellings of Keyjar's enums: short, lower-case, hyphenated, and each mapped to
// exactly one model value so nothing is guessed.

package enum AcceptPolicyArgument: String, CaseIterable, ExpressibleByArgument {
    case always, never
    case mainDocumentDomain = "main-document-domain"
    case noThirdParty = "no-third-party"
    case grandfatheredThirdParty = "grandfathered-third-party"

    package init(_ policy: CookieAcceptPolicy) {
        switch policy {
        case .always: self = .always
        case .never: self = .never
        case .onlyFromMainDocumentDomain: self = .mainDocumentDomain
        case .noThirdParty: self = .noThirdParty
        case .grandfatheredThirdParty: self = .grandfatheredThirdParty
        }
    }

    package var policy: CookieAcceptPolicy {
        switch self {
        case .always: .always
        case .never: .never
        case .mainDocumentDomain: .onlyFromMainDocumentDomain
        case .noThirdParty: .noThirdParty
        case .grandfatheredThirdParty: .grandfatheredThirdParty
        }
    }
}

extension CookieDomainAction {
    package var argumentName: String {
        switch self {
        case .allow: "allow"
        case .block: "block"
        case .sessionOnly: "session-only"
        }
    }
}

package enum MethodArgument: String, CaseIterable, ExpressibleByArgument {
    case `default`, basic, digest, ntlm, negotiate, bearer
    case htmlForm = "html-form"
    case clientCertificate = "client-certificate"
    case serverTrust = "server-trust"

    package init(_ method: ProtectionSpace.AuthenticationMethod) {
        switch method {
        case .default: self = .default
        case .httpBasic: self = .basic
        case .httpDigest: self = .digest
        case .ntlm: self = .ntlm
        case .negotiate: self = .negotiate
        case .httpBearer: self = .bearer
        case .htmlForm: self = .htmlForm
        case .clientCertificate: self = .clientCertificate
        case .serverTrust: self = .serverTrust
        }
    }

    package var method: ProtectionSpace.AuthenticationMethod {
        switch self {
        case .default: .default
        case .basic: .httpBasic
        case .digest: .httpDigest
        case .ntlm: .ntlm
        case .negotiate: .negotiate
        case .bearer: .httpBearer
        case .htmlForm: .htmlForm
        case .clientCertificate: .clientCertificate
        case .serverTrust: .serverTrust
        }
    }
}

package enum ProxyArgument: String, CaseIterable, ExpressibleByArgument {
    case http, https, ftp, socks

    package var proxyType: ProtectionSpace.ProxyType {
        switch self {
        case .http: .http
        case .https: .https
        case .ftp: .ftp
        case .socks: .socks
        }
    }
}

/// `credential add --persistence`: permanent only. A session credential lives inside the process
/// that stores it, and keyjar exits at once; offering `session` would offer a credential lost
/// as soon as it is stored.
package enum PersistenceArgument: String, CaseIterable, ExpressibleByArgument {
    case permanent
}

package enum FormatArgument: String, CaseIterable, ExpressibleByArgument {
    case netscape, json

    package var format: CookieFileFormat {
        switch self {
        case .netscape: .netscape
        case .json: .json
        }
    }
}
