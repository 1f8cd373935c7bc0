// swift-tools-version: 6.1
import Foundation
import PackageDescription

// An application that depends on Keyjar, as one would: by the products it uses, built in its own
// package. Every Swift example in README.md, docs/ and the DocC catalogs is (part of) a file here;
// scripts/examples builds them, checks that the documentation quotes them exactly, and runs them
// against a loopback HTTP server and a private keyjard.
//
// Keyjar is the package one directory up. A path dependency is named by its directory (the
// checkout may be called anything), so the name is read from where this manifest is.
let keyjar = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let examples: [(name: String, products: [String])] = [
    ("SharedCookies", ["Keyjar"]),
    ("SharedCredentials", ["Keyjar"]),
    ("OneShotClient", ["Keyjar", "KeyjarCore"]),
    ("WireProtocol", []),
    ("URLSessionCookies", ["Keyjar"]),
    ("LoadURL", ["KeyjarLoader"]),
    ("LoaderDelegate", ["KeyjarLoader"]),
    ("Download", ["KeyjarLoader"]),
    ("ResponseCacheChoice", ["KeyjarLoader"]),
    ("URLSessionKeyjar", ["KeyjarLoader"]),
    ("CookieEngine", ["KeyjarCore"]),
]

let package = Package(
    name: "KeyjarExamples",
    dependencies: [.package(path: "..")],
    targets: examples.map { example in
        .executableTarget(
            name: example.name,
            dependencies: example.products.map { .product(name: $0, package: keyjar) }
        )
    },
    swiftLanguageModes: [.v6]
)
