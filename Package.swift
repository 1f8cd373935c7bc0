// swift-tools-version: 6.1
// Keyjar: one shared store of HTTP cookies and URL credentials for every program of a Linux user.
// Licensed under the Apache License, Version 2.0 (LICENSE).
import PackageDescription

/// Settings every Keyjar target shares: Swift 6 language mode (strict concurrency) plus the
/// upcoming features the style guide asks for.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Keyjar",
    products: [
        // What a program may import: the client library (and its connection alone, for a tool
        // that needs no FoundationNetworking), the loader, the model; and the executables. Everything else is the service's or the tools' insides.
        .library(name: "Keyjar", targets: ["Keyjar"]),
        .library(name: "KeyjarConnection", targets: ["KeyjarConnection"]),
        .library(name: "KeyjarLoader", targets: ["KeyjarLoader"]),
        .library(name: "KeyjarCore", targets: ["KeyjarCore"]),
        .executable(name: "keyjard", targets: ["KeyjarDaemon"]),
        .executable(name: "keyjar", targets: ["KeyjarFront"]),
        .executable(name: "keyjar-full", targets: ["KeyjarCLI"]),
        .executable(name: "keyjar-bench", targets: ["KeyjarBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // `swift package generate-documentation` for the DocC catalogs (scripts/docs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // System libraries, found through pkg-config (but libsecret); each names its Debian provider.
        .systemLibrary(
            name: "CLibPSL",
            pkgConfig: "libpsl",
            providers: [.apt(["libpsl-dev"])]
        ),
        // IDNA (UTS #46) for a Unicode host, by the library libcurl resolves hosts with: the
        // `keyjar` front links no ICU, and every process names a host the same way.
        .systemLibrary(
            name: "CLibIDN2",
            pkgConfig: "libidn2",
            providers: [.apt(["libidn2-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libsecret without pkg-config: its flags carry -pthread, which SwiftPM refuses with a
        // warning in every package that depends on Keyjar. The shim declares what Keyjar uses
        // (checked against the real headers by scripts/check-libsecret-abi) and the module map
        // links the libraries.
        .systemLibrary(
            name: "CLibSecret",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // libcrypto, for what swift-certificates and swift-crypto do not do: PKCS#12 bundles and
        // encrypted PEM keys of client identities, and Digest's SHA-512/256.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // zlib: gzip files a download is asked to decode; gzip and deflate response bodies.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // brotli and zstd: response bodies in those content codings, which the loader decodes
        // itself (libcurl's decoding fails a whole load on a coding it does not know).
        .systemLibrary(
            name: "CBrotli",
            pkgConfig: "libbrotlidec",
            providers: [.apt(["libbrotli-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),

        // glibc's malloc.h (heap statistics for the benchmark, malloc_trim for the store).
        .systemLibrary(name: "CMallocInfo"),
        // prctl(2) for keyjard (variadic in C).
        .systemLibrary(name: "CProcessControl"),

        // What every module needs of Linux, written once: private and shared directories, XDG
        // directories, a socket's peer, descriptors and their write loop, spawning a child, hex,
        // calendar arithmetic. No C library beyond glibc, so that the front links it.
        .target(name: "KeyjarPlatform", dependencies: ["CProcessControl"], swiftSettings: swiftSettings),

        // A lock that sanitizers see (Synchronization.Mutex is invisible to ThreadSanitizer).
        .target(name: "KeyjarLocks", swiftSettings: swiftSettings),

        // The model: cookie and credential rules as pure values.
        .target(
            name: "KeyjarCore",
            dependencies: ["CLibIDN2", "CLibPSL", "KeyjarPlatform"],
            swiftSettings: swiftSettings
        ),
        // Formats: the model's JSON (events, cookie arrays; hand-written fast paths) and the
        // cookie files (cookies.txt, Keyjar's JSON file). The model itself has no serialization.
        .target(
            name: "KeyjarCodec",
            dependencies: ["KeyjarCore", "KeyjarPlatform"],
            swiftSettings: swiftSettings
        ),
        // SQLite, one connection with its prepared statements: keyjard's store and the loader's
        // response cache each own their database through it.
        .target(
            name: "KeyjarSQLite",
            dependencies: ["CSQLite"],
            swiftSettings: swiftSettings
        ),
        // libsecret's calls as Keyjar makes them, and their errors: the one module that imports
        // CLibSecret, for the store's passwords, import from other applications, and browsers' keys.
        .target(
            name: "KeyjarLibSecret",
            dependencies: ["CLibSecret", "KeyjarPlatform"],
            swiftSettings: swiftSettings
        ),
        // Keys from passphrases (scrypt, bounded) and a key held in memory that is never swapped
        // out or dumped: what the backup file and the encrypted secrets file are sealed with.
        .target(
            name: "KeyjarSealing",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Persistence: SQLite for cookies, policies and credential metadata; the Secret Service
        // (libsecret), or a file sealed under a passphrase, for passwords.
        .target(
            name: "KeyjarStore",
            dependencies: [
                "KeyjarCore", "KeyjarCodec", "KeyjarPlatform", "KeyjarLibSecret", "KeyjarLocks", "KeyjarSealing",
                "KeyjarSQLite", "CMallocInfo", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The wire format between clients and keyjard: frames, versioned messages and their
        // codec, the sequence page's layout, default paths. Both sides link it: no NIO here.
        .target(
            name: "KeyjarProtocol",
            dependencies: ["KeyjarCore", "KeyjarCodec", "KeyjarPlatform"],
            swiftSettings: swiftSettings
        ),
        // keyjard's server: the socket, the connections, the service that owns the store.
        .target(
            name: "KeyjarServer",
            dependencies: [
                "KeyjarCore", "KeyjarCodec", "KeyjarPlatform", "KeyjarProtocol", "KeyjarStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "KeyjarDaemon",
            dependencies: [
                "KeyjarServer", "KeyjarProtocol", "KeyjarCore", "CProcessControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // HTTP caching as pure values (RFC 9111 for a private cache): storability, freshness,
        // what a request gets under its cache policy, validation, invalidation.
        .target(
            name: "KeyjarHTTPCache",
            dependencies: ["KeyjarPlatform"],
            swiftSettings: swiftSettings
        ),
        // An application's response cache: a memory tier and a disk tier (an SQLite index,
        // one file per body), under KeyjarHTTPCache's rules.
        .target(
            name: "KeyjarResponseCache",
            dependencies: ["KeyjarCodec", "KeyjarPlatform", "KeyjarHTTPCache", "KeyjarLocks", "KeyjarSQLite"],
            swiftSettings: swiftSettings
        ),
        // HTTP authentication as pure values: challenge parsing, scheme choice, Basic, Bearer,
        // git's credential protocol. No hashing: the `keyjar` front reads git's requests with
        // it and loads no libcrypto.
        .target(
            name: "KeyjarAuth",
            dependencies: ["KeyjarCodec", "KeyjarCore", "KeyjarPlatform"],
            swiftSettings: swiftSettings
        ),
        // Digest's responses (RFC 7616): the hashes (swift-crypto; SHA-512/256 from libcrypto),
        // the session's nonce counts, the Authorization value.
        .target(
            name: "KeyjarDigest",
            dependencies: [
                "KeyjarAuth", "KeyjarPlatform", "COpenSSL", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // A process's connection to keyjard: the client (its blocking transport, the sequence
        // page's reader, starting keyjard) and its local replica. Foundation without
        // FoundationNetworking, so that a program that needs only the client (the `keyjar`
        // command's front) loads no libcurl.
        .target(
            name: "KeyjarConnection",
            dependencies: [
                "KeyjarCore", "KeyjarCodec", "KeyjarPlatform", "KeyjarLocks", "KeyjarProtocol",
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client library: the connection (re-exported) and the Foundation-shaped storages
        // on it (HTTPCookieStorage's and URLCredentialStorage's contract, URLSession's hooks).
        .target(
            name: "Keyjar",
            dependencies: ["KeyjarConnection", "KeyjarCore", "KeyjarLocks"],
            swiftSettings: swiftSettings
        ),
        // TLS client identities (a certificate and its key, from PEM or PKCS#12) and certificate
        // summaries: read by the loader for a challenge and by `keyjar credential add --identity`.
        .target(
            name: "KeyjarIdentity",
            dependencies: [
                "COpenSSL", "KeyjarPlatform",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // One libcurl transfer and the process's multi handle that drives them all: options,
        // the response head, content codings, body streams, trust anchors. FoundationEssentials
        // only, so that a command that fetches need not load Foundation.
        .target(
            name: "KeyjarTransfer",
            dependencies: ["KeyjarCore", "KeyjarLocks", "KeyjarPlatform", "CBrotli", "CCurl", "CZlib", "CZstd"],
            swiftSettings: swiftSettings
        ),
        // URL loading on libcurl with NSURLConnection's delegate contract, wired to the shared
        // cookie jar and credential storage.
        .target(
            name: "KeyjarLoader",
            dependencies: [
                "Keyjar", "KeyjarAuth", "KeyjarCodec", "KeyjarCore", "KeyjarDigest", "KeyjarPlatform",
                "KeyjarHTTPCache",
                "KeyjarIdentity", "KeyjarLocks", "KeyjarResponseCache", "KeyjarTransfer", "CCurl", "CZlib",
            ],
            swiftSettings: swiftSettings
        ),
        // The backup file (`keyjar backup`, `keyjar restore`): a store's items and secrets,
        // encrypted under a passphrase, written and read as a stream.
        .target(
            name: "KeyjarBackup",
            dependencies: [
                "KeyjarCodec", "KeyjarCore", "KeyjarSealing",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Browsers' cookies (Firefox, the Chromium family): their profiles, a private snapshot of
        // the live database, Chromium's decryption, each row as the cookie the browser would send.
        .target(
            name: "KeyjarBrowserCookies",
            dependencies: [
                "KeyjarCodec", "KeyjarCore", "KeyjarPlatform", "KeyjarLibSecret", "KeyjarSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Browsers' databases as the browsers write them, and their keys where they keep them:
        // for the tests and the benchmark only (never linked into `keyjar`).
        .target(
            name: "KeyjarBrowserFixtures",
            dependencies: [
                "KeyjarBrowserCookies", "KeyjarPlatform", "KeyjarLibSecret", "KeyjarSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `keyjar` command's shared parts: the output and error contract, the options and
        // inputs every command reads, the commands the front runs itself, and which those are.
        // Nothing here loads libcurl, libsecret or SQLite.
        .target(
            name: "KeyjarCommands",
            dependencies: [
                "KeyjarAuth", "KeyjarCodec", "KeyjarConnection", "KeyjarCore", "KeyjarPlatform", "KeyjarLocks",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // `keyjar`, the front: `cookie get`, `git-credential` and `--version` itself, in a few
        // milliseconds; every other command line it hands to keyjar-full.
        .executableTarget(
            name: "KeyjarFront",
            dependencies: [
                "KeyjarCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // keyjar-full: every command of `keyjar`, the user's and scripts' tool for the shared store.
        .executableTarget(
            name: "KeyjarCLI",
            dependencies: [
                "Keyjar", "KeyjarBackup", "KeyjarBrowserCookies", "KeyjarCodec", "KeyjarCommands", "KeyjarCore",
                "KeyjarPlatform", "KeyjarHTTPCache", "KeyjarIdentity", "KeyjarLibSecret", "KeyjarLocks", "KeyjarLoader",
                "KeyjarResponseCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "KeyjarBench",
            dependencies: [
                "Keyjar", "KeyjarBrowserCookies", "KeyjarBrowserFixtures", "KeyjarCodec", "KeyjarConnection",
                "KeyjarCore",
                "KeyjarPlatform",
                "KeyjarProtocol",
                "KeyjarStore", "KeyjarLoader", "CMallocInfo", "CCurl", "KeyjarHTTPCache", "KeyjarResponseCache",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The fuzz targets (scripts/fuzz builds them with libFuzzer); in a normal build a replayer
        // of their inputs. Inside the package because the modules they exercise are not products.
        .executableTarget(
            name: "KeyjarFuzz",
            dependencies: [
                "KeyjarCore", "KeyjarCodec", "KeyjarAuth", "KeyjarBackup", "KeyjarBrowserCookies", "KeyjarHTTPCache",
                "KeyjarProtocol", "KeyjarLoader", "KeyjarSealing", "KeyjarStore",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Fuzz/Sources/KeyjarFuzz",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarCoreTests",
            dependencies: ["KeyjarCore", "KeyjarTestSupport"],
            exclude: ["Conformance/http-state-exceptions.json"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarBackupTests",
            dependencies: ["KeyjarBackup", "KeyjarCore", "KeyjarTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarCodecTests",
            dependencies: ["KeyjarCodec", "KeyjarCore", "KeyjarTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarAuthTests",
            dependencies: ["KeyjarAuth", "KeyjarCore", "KeyjarDigest", "KeyjarTestSupport"],
            swiftSettings: swiftSettings
        ),
        // Real browser databases built with SQLite, the real Secret Service, real inotify.
        .testTarget(
            name: "KeyjarBrowserCookiesTests",
            dependencies: [
                "KeyjarBrowserCookies", "KeyjarBrowserFixtures", "KeyjarCore", "KeyjarSQLite", "KeyjarTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarPlatformTests",
            dependencies: ["KeyjarPlatform", "KeyjarTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarTransferTests",
            dependencies: ["KeyjarTransfer", "KeyjarTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarHTTPCacheTests",
            dependencies: ["KeyjarHTTPCache"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarResponseCacheTests",
            dependencies: [
                "KeyjarResponseCache", "KeyjarHTTPCache", "KeyjarLocks", "KeyjarTestSupport", "KeyjarTestPeer",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarStoreTests",
            dependencies: [
                "KeyjarStore", "KeyjarCodec", "KeyjarCore", "KeyjarLibSecret", "KeyjarPlatform", "KeyjarSealing",
                "KeyjarTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Test helpers shared by the suites that run real processes: temp dirs, a spawned
        // keyjard, a protocol client. A plain target kept under Tests/.
        // A plain `swift test` re-runs the test process inside a private D-Bus session with a
        // throwaway Secret Service and home, as scripts/test does (Tests/CKeyjarTestSession).
        .target(name: "CKeyjarTestSession", path: "Tests/CKeyjarTestSession"),
        .target(
            name: "KeyjarTestSupport",
            dependencies: [
                "CKeyjarTestSession", "Keyjar", "KeyjarCore", "KeyjarPlatform", "KeyjarProtocol", "KeyjarServer",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/KeyjarTestSupport",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "KeyjarTestPeer",
            dependencies: [
                "Keyjar", "KeyjarCore", "KeyjarHTTPCache", "KeyjarLoader", "KeyjarPlatform", "KeyjarResponseCache",
            ],
            path: "Tests/KeyjarTestPeer",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarTests",
            dependencies: [
                "Keyjar", "KeyjarConnection", "KeyjarCodec", "KeyjarCore", "KeyjarLocks", "KeyjarProtocol",
                "KeyjarTestSupport",
                "KeyjarDaemon", "KeyjarTestPeer",
            ],
            swiftSettings: swiftSettings
        ),
        // Runs the built `keyjar` binary against a real keyjard (and real curl and git).
        .testTarget(
            name: "KeyjarCLITests",
            dependencies: [
                "Keyjar", "KeyjarBrowserCookies", "KeyjarBrowserFixtures", "KeyjarCodec", "KeyjarCore",
                "KeyjarLocks", "KeyjarPlatform", "KeyjarProtocol",
                "KeyjarCommands", "KeyjarTestSupport", "KeyjarDaemon", "KeyjarCLI", "KeyjarFront",
                "KeyjarTestPeer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Servers", "Python"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarLoaderTests",
            dependencies: [
                "KeyjarLoader", "Keyjar", "KeyjarAuth", "KeyjarCore", "KeyjarDigest", "KeyjarLocks",
                "KeyjarTestSupport", "KeyjarTransfer",
                "KeyjarDaemon", "KeyjarHTTPCache", "KeyjarResponseCache", "KeyjarTestPeer",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Servers"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarProtocolTests",
            dependencies: ["KeyjarProtocol", "KeyjarCodec", "KeyjarCore", "KeyjarTestSupport"],
            exclude: ["Golden"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeyjarServerTests",
            dependencies: [
                "KeyjarTestSupport", "Keyjar", "KeyjarProtocol", "KeyjarCodec", "KeyjarCore", "KeyjarDaemon",
                "KeyjarServer",
                "KeyjarStore", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
