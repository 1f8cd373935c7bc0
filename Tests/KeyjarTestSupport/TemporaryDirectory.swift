import Foundation
import Glibc

/// A fresh 0700 directory with a short path (`/tmp/kj-XXXXXX`: socket paths are limited to
/// 107 bytes), removed when released.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        var template = Array("/tmp/kj-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw TestSupportError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        path = String(cString: created)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func path(_ name: String) -> String { path + "/" + name }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// How much longer than usual a wait inside a test may take: ten times under a sanitizer.
public let sanitizerSlowdown: Double = ProcessInfo.processInfo.environment["KEYJAR_SANITIZER"] == nil ? 1 : 10
