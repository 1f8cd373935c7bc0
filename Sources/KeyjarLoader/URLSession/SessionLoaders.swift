import Foundation
import FoundationNetworking
import KeyjarLocks

/// Which loader a session's requests go through. A `URLProtocol` is a class that
/// URLSession instantiates itself, so a loader cannot be handed to it: the configuration names
/// one by an entry in `httpAdditionalHeaders`, which the session copies and the protocol reads
/// (and never sends).
enum SessionLoaders {
    static let headerName = "X-Keyjar-Loader"

    private struct Registry {
        var loaders: [String: URLLoader] = [:]
        var names: [ObjectIdentifier: String] = [:]
    }
    private static let registry = Locked(Registry())

    /// The name of `loader` for a configuration (the same for the same loader).
    static func register(_ loader: URLLoader) -> String {
        registry.withLock { registry in
            if let name = registry.names[ObjectIdentifier(loader)] { return name }
            let name = "loader-\(registry.loaders.count + 1)"
            registry.loaders[name] = loader
            registry.names[ObjectIdentifier(loader)] = name
            return name
        }
    }

    /// The loader a session's configuration names, else the process's shared one.
    /// - Throws: what `URLLoader.shared()` throws; `URLError(.unknown)` for a name no loader
    ///   was registered under in this process.
    static func loader(named name: String?) throws -> URLLoader {
        guard let name else { return try URLLoader.shared() }
        guard let loader = registry.withLock({ $0.loaders[name] }) else {
            throw LoaderError.make(
                .unknown,
                "\(headerName): \(name) names no loader of this process (useKeyjar(_:) registers them)",
                url: nil
            )
        }
        return loader
    }
}
