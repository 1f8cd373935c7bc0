import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCommands
import KeyjarCore
import KeyjarIdentity
import KeyjarLoader
import KeyjarLocks
import Synchronization

/// The load itself: the request built from the options, the loader and its delegate made, the
/// body sent where it goes, and the outcome told (FetchCommand+Outcome).
extension FetchCommand {
    func run() async throws {
        var request = FetchRequest(url: try Self.withoutUser(Self.parseURL(url)), method: method?.uppercased())
        request.headers = try headers.map { header throws(CLIError) in try FetchRequest.header(header) }
        request.body = try FetchRequest.body(data) { () throws(CLIError) in
            try StandardInput.readAll(for: "request body")
        }
        let credential = try effectiveUser.map { name in
            FetchCredential(
                user: name,
                password: passwordStdin
                    ? try PasswordInput.fromStandardInput()
                    : try PasswordInput.prompt("Password for \(name) at \(request.url.host ?? url): "),
                persistence: persistence.persistence
            )
        }

        let client = try global.connect(keepingReplica: true)
        let userCookies = UserCookies.take(
            from: &request.headers,
            origin: request.url,
            client: noCookies ? nil : client
        )
        let shared = SharedCredentialStorage(client: client)
        let scope = CredentialScope(url: request.url, locationTrusted: locationTrusted)
        let loader = URLLoader(
            configuration: .init(
                cookieStorage: SharedCookieStorage(client: client),
                credentialStorage: credential == nil ? shared : TypedPasswordStorage(shared: shared, scope: scope),
                responseCache: cache ? try CacheCommand.open() : nil,
                maximumRedirects: maxRedirects,
                trustAnchors: try trustAnchors()
            )
        )
        let options = FetchOptions(
            includeHead: includeHead,
            failOnHTTPError: fail,
            followRedirects: !noFollow,
            showProgress: ProgressMeter.wanted(
                silent: silent,
                bodyToFile: (output != nil && output != "-") || remoteName
            ),
            userCookies: userCookies,
            trustedAuthorization: locationTrusted
                ? request.headers.last { $0.name.caseInsensitiveCompare("Authorization") == .orderedSame }?.value : nil
        )
        let answerer = ChallengeAnswerer(
            options: .init(
                acceptUntrustedCertificate: insecure,
                pinnedFingerprint: pinnedSHA256.flatMap(CertificateSummary.canonicalFingerprint),
                trustPersistence: persistence.persistence,
                credentialScope: scope
            ),
            credential: credential
        )

        var urlRequest = request.urlRequest(timeout: maxTime, handleCookies: !noCookies)
        if let userCookies { urlRequest = userCookies.apply(to: urlRequest) }
        urlRequest.cachePolicy = (cachePolicy ?? .useProtocol).policy
        let queue = DispatchQueue(label: "keyjar.fetch")
        let outcome: FetchOutcome
        let target = try outputTarget()
        if case .file(let file) = target {
            let resuming = try resumable(file, url: urlRequest.url)
            let saved = Locked<String?>(nil)
            outcome = await load(on: queue) { completion in
                let delegate = FetchDownloadDelegate(options: options, answerer: answerer, file: file) { outcome in
                    completion(outcome)
                }
                delegate.download = loader.download(
                    with: urlRequest,
                    delegate: delegate,
                    delegateQueue: queue,
                    resuming: resuming,
                    startImmediately: false
                )
                // As curl: an error page is saved (and the status 0) unless --fail refuses it.
                delegate.download?.savesErrorResponses = true
                return delegate
            } ended: { receiver in
                saved.withLock { $0 = (receiver as? FetchDownloadDelegate)?.savedPath }
            }
            if case .finished = outcome, remoteName, !silent, let path = saved.withLock({ $0 }) {
                Output.error("saved \(path).")
            }
        } else {
            var descriptor = STDOUT_FILENO
            if case .special(let path) = target {
                // A FIFO or a device: written into as it is, as curl does.
                descriptor = try OutputFile.openSpecial(path, named: output ?? path)
            }
            defer { if descriptor != STDOUT_FILENO { close(descriptor) } }
            let output = descriptor
            outcome = await load(on: queue) { completion in
                let delegate = FetchDelegate(
                    options: options,
                    answerer: answerer,
                    output: output,
                    completion: completion
                )
                delegate.connection = loader.connection(
                    with: urlRequest,
                    delegate: delegate,
                    delegateQueue: queue,
                    startImmediately: false
                )
                return delegate
            } ended: { _ in
            }
        }
        try finish(outcome, answerer: answerer, client: client)
    }

    /// --cacert and --capath, else what curl reads from the environment without them.
    private func trustAnchors() throws(CLIError) -> TrustAnchors {
        guard cacert != nil || capath != nil else { return .fromEnvironment() }
        let cwd = FileManager.default.currentDirectoryPath
        for (option, path, directory) in [("--cacert", cacert, false), ("--capath", capath, true)] {
            guard let path else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: OutputFile.absolute(path, in: cwd), isDirectory: &isDirectory),
                isDirectory.boolValue == directory
            else {
                throw .usage("\(option) '\(UserInput.shown(path))' is not \(directory ? "a directory" : "a file").")
            }
        }
        return .replacing(
            file: cacert.map { OutputFile.absolute($0, in: cwd) },
            directory: capath.map { OutputFile.absolute($0, in: cwd) }
        )
    }

    /// The URL without its user: the user answers the challenge (as --user), never the URL.
    private static func withoutUser(_ url: URL) -> URL {
        guard url.user != nil, var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        parts.user = nil
        return parts.url ?? url
    }

    /// Where the body goes: standard output, a special file written into as it is, or a
    /// regular file saved whole (through a symbolic link, never replacing it).
    private func load(
        on queue: DispatchQueue,
        _ make: (@escaping @Sendable (FetchOutcome) -> Void) -> any FetchReceiver,
        ended: (any FetchReceiver) -> Void
    ) async -> FetchOutcome {
        let maxTime = maxTime
        let holder = Locked<(any FetchReceiver)?>(nil)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<FetchOutcome, Never>) in
            let receiver = make { continuation.resume(returning: $0) }
            holder.withLock { $0 = receiver }
            // Interrupted, the load stops: a download keeps what can be continued, nothing else.
            receiver.signalSources = [SIGINT, SIGTERM, SIGHUP].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    receiver.stop(because: CLIError(message: "interrupted.", status: .init(signal: number)))
                }
                source.resume()
                return source
            }
            if let maxTime {
                queue.asyncAfter(deadline: .now() + maxTime) {
                    receiver.stop(because: .failure("the load took longer than --max-time \(Self.seconds(maxTime))."))
                }
            }
            queue.async { receiver.begin() }
        }
        if let receiver = holder.withLock({ $0 }) { ended(receiver) }
        return outcome
    }
}
