import Foundation
import KeyjarPlatform
import KeyjarTestSupport
import Testing

/// The kernel's session keyring, for real: what is stored reads back, replaces what was there,
/// expires when told, and is gone once removed. Each test names its own key.
@Suite struct SessionKeyringTests {
    private let name = "keyjar-test:\(UUID().uuidString)"

    private func stored() throws -> [UInt8]? {
        try SessionKeyring.withPayload(name) { Array($0) }
    }

    @Test func aKeyReadsBackIsReplacedAndIsGoneOnceRemoved() throws {
        #expect(try stored() == nil)
        try [UInt8](repeating: 7, count: 69).withUnsafeBytes {
            try SessionKeyring.store(name, payload: $0, expiresAfter: nil)
        }
        #expect(try stored() == [UInt8](repeating: 7, count: 69))
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try SessionKeyring.store(name, payload: $0, expiresAfter: 3_600) }
        #expect(try stored() == [1, 2, 3])
        #expect(SessionKeyring.remove(name))
        #expect(try stored() == nil)
        #expect(!SessionKeyring.remove(name))
    }

    @Test func anExpiredKeyIsNone() async throws {
        try [UInt8]([9]).withUnsafeBytes { try SessionKeyring.store(name, payload: $0, expiresAfter: 3_600) }
        try SessionKeyring.setExpiry(name, seconds: 1)
        try await waitUntil("the key to expire") { try stored() == nil }
        SessionKeyring.remove(name)
    }
}
