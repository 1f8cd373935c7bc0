package import FoundationEssentials
import KeyjarCore

/// The proxy libcurl picks from the standard environment variables for a URL, so a 407's
/// protection space names the proxy that sent it.
package enum ProxyEnvironment {
    package static func proxy(
        for url: URL?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL? {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        func variable(_ name: String) -> String? {
            (environment[name] ?? environment[name.uppercased()]).flatMap { $0.isEmpty ? nil : $0 }
        }
        if let noProxy = variable("no_proxy") {
            for entry in noProxy.split(separator: ",").map({ $0.trimmingWhitespace().lowercased() }) {
                if entry == "*" { return nil }
                let domain = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
                if !domain.isEmpty, host == domain || host.hasSuffix("." + domain) { return nil }
            }
        }
        // libcurl reads http_proxy in lower case only (the upper-case form is a CGI hazard).
        let value = scheme == "http" ? environment["http_proxy"] : variable("\(scheme)_proxy")
        guard let text = value ?? variable("all_proxy") else { return nil }
        return URL(string: text.contains("://") ? text : "http://" + text)
    }
}
