import Foundation

#if KEYJAR_FUZZ
/// SwiftPM links an executable's `main` to `<module>_main`; built for fuzzing (scripts/fuzz:
/// `-DKEYJAR_FUZZ -sanitize=fuzzer,address`) that hands control to libFuzzer's driver.
@_cdecl("KeyjarFuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzOneInput)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt
#else
/// Built as part of the package (no libFuzzer): replays the inputs in the files and directories
/// named, e.g. `KEYJAR_FUZZ_TARGET=set-cookie keyjar-fuzz Fuzz/Corpus/set-cookie`, so that a
/// finding can be rerun under a debugger; the fuzz targets also compile with every build.
@_cdecl("KeyjarFuzz_main")
func replayMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var replayed = 0
    for index in 1..<Int(argc) {
        guard let argument = argv[index].map({ String(cString: $0) }) else { continue }
        let files =
            (try? FileManager.default.contentsOfDirectory(atPath: argument).sorted().map { argument + "/" + $0 })
            ?? [argument]
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            FuzzTarget.selected.run(Array(data))
            replayed += 1
        }
    }
    print("replayed \(replayed) inputs through \(FuzzTarget.selected.rawValue)")
    return 0
}
#endif

/// libFuzzer's entry point: one binary, the target chosen by `KEYJAR_FUZZ_TARGET` (read once).
/// A target must never crash, hang or leak on any input, and checks its own invariants with
/// `fuzzCheck` (a failed check aborts, which libFuzzer records as a crash with its input).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.selected.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

enum FuzzTarget: String, CaseIterable {
    case setCookie = "set-cookie"
    case cookieDate = "cookie-date"
    case challenge
    case frame
    case clientMessage = "client-message"
    case serverMessage = "server-message"
    case netscapeFile = "netscape-file"
    case jsonFile = "json-file"
    case gitCredential = "git-credential"
    case cacheHeaders = "cache-headers"
    case httpDate = "http-date"
    case dataURL = "data-url"
    case contentDisposition = "content-disposition"
    case resumeData = "resume-data"
    case macBinary = "macbinary"
    case binHex = "binhex"
    case browserRow = "browser-row"
    case oauthToken = "oauth-token"
    case netrcFile = "netrc-file"
    case gitCredentialsFile = "git-credentials-file"
    case contentDecoder = "content-decoder"
    case multipartSplitter = "multipart-splitter"
    case backupItem = "backup-item"
    case backupStream = "backup-stream"
    case sealedSecretsFile = "sealed-secrets-file"
    case passEntry = "pass-entry"
    case passCookieEntry = "pass-cookie-entry"

    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["KEYJAR_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("KEYJAR_FUZZ_TARGET must be one of: \(names)\n".utf8))
            exit(2)
        }
        return target
    }()

    func run(_ bytes: [UInt8]) {
        switch self {
        case .setCookie: fuzzSetCookie(bytes)
        case .cookieDate: fuzzCookieDate(bytes)
        case .challenge: fuzzChallenge(bytes)
        case .frame: fuzzFrames(bytes)
        case .clientMessage: fuzzClientMessage(bytes)
        case .serverMessage: fuzzServerMessage(bytes)
        case .netscapeFile: fuzzNetscapeFile(bytes)
        case .jsonFile: fuzzJSONFile(bytes)
        case .gitCredential: fuzzGitCredential(bytes)
        case .dataURL: fuzzDataURL(bytes)
        case .contentDisposition: fuzzContentDisposition(bytes)
        case .resumeData: fuzzResumeData(bytes)
        case .macBinary: fuzzMacBinary(bytes)
        case .binHex: fuzzBinHex(bytes)
        case .cacheHeaders: fuzzCacheHeaders(bytes)
        case .httpDate: fuzzHTTPDate(bytes)
        case .browserRow: fuzzBrowserRow(bytes)
        case .oauthToken: fuzzOAuthTokenResponse(bytes)
        case .netrcFile: fuzzNetrcFile(bytes)
        case .gitCredentialsFile: fuzzGitCredentialsFile(bytes)
        case .contentDecoder: fuzzContentDecoder(bytes)
        case .multipartSplitter: fuzzMultipartSplitter(bytes)
        case .backupItem: fuzzBackupItem(bytes)
        case .backupStream: fuzzBackupStream(bytes)
        case .sealedSecretsFile: fuzzSealedSecretsFile(bytes)
        case .passEntry: fuzzPassEntry(bytes)
        case .passCookieEntry: fuzzPassCookieEntry(bytes)
        }
    }
}

/// An invariant of a target; its failure is a finding.
func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        FileHandle.standardError.write(Data("fuzz check failed: \(message())\n".utf8))
        abort()
    }
}
