// swift-tools-version: 6.1
// Coverage-guided fuzzing of Keyjar's parsers and decoders with libFuzzer. A package of its own:
// its executable has no `main` (libFuzzer brings one), so it is built only by `scripts/fuzz`,
// with `-sanitize=fuzzer,address`, never by the main package's `swift build`.
import Foundation
import PackageDescription

// A path dependency is named after its directory, whatever the checkout is called.
let keyjar = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "KeyjarFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(
            name: "KeyjarFuzz",
            dependencies: [
                .product(name: "KeyjarCore", package: keyjar),
                .product(name: "KeyjarCodec", package: keyjar),
                .product(name: "KeyjarAuth", package: keyjar),
                .product(name: "KeyjarHTTPCache", package: keyjar),
                .product(name: "KeyjarProtocol", package: keyjar),
                .product(name: "KeyjarLoader", package: keyjar),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ],
    swiftLanguageModes: [.v6]
)
