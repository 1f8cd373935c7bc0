import Foundation
import KeyjarCore
import Testing

@testable import KeyjarBackup

/// The backup format without a service: what it keeps, and every way a file can be refused.
struct BackupFormatTests {
    static let passphrase = "correct horse battery staple"

    static func cookie(_ index: Int, partitioned: Bool = false) -> Cookie {
        Cookie(
            name: "c\(index)",
            value: String(repeating: "v", count: 100) + "\(index)",
            domain: "site\(index % 7).example",
            hostOnly: index % 2 == 0,
            path: "/",
            expires: Date(timeIntervalSince1970: 1_900_000_000),
            secure: true,
            httpOnly: index % 3 == 0,
            sameSite: .lax,
            creation: Date(timeIntervalSince1970: 1_700_000_000 + Double(index) + 0.25),
            lastAccess: Date(timeIntervalSince1970: 1_700_000_100 + Double(index)),
            partitionKey: partitioned ? CookiePartitionKey(scheme: "https", site: "top.example") : nil
        )
    }

    static let credential = BackedUpCredential(
        record: CredentialRecord(
            space: ProtectionSpace(host: "git.example", protocol: "https", realm: "Team"),
            user: "alice",
            persistence: .permanent,
            isDefault: true,
            created: 1_700_000_000,
            lastUsed: 1_700_000_500,
            expires: 1_900_000_000,
            hasRefreshToken: true,
            tokenRefresh: TokenRefresh(endpoint: "https://git.example/token", clientID: "cli")
        ),
        password: "pässwörd\n\"quoted\"",
        refreshToken: "refresh-1"
    )

    static let items: [BackupItem] =
        [.policy(CookiePolicy(acceptPolicy: .noThirdParty, domainRules: ["ads.example": .block]))]
        + (0..<2_000).map { .cookie(cookie($0, partitioned: $0 % 10 == 0)) } + [.credential(credential)]

    /// A backup of `items`, and where each of its chunks starts and ends.
    static func backup(
        _ items: [BackupItem] = items,
        passphrase: String = passphrase
    ) throws
        -> (bytes: [UInt8], chunks: [Range<Int>])
    {
        var writer = try BackupWriter(passphrase: passphrase)
        var bytes = writer.header
        for item in items { bytes += try writer.add(item) }
        bytes += try writer.finish()
        var chunks: [Range<Int>] = []
        var offset = writer.header.count
        while offset < bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            chunks.append(offset..<offset + 4 + length)
            offset += 4 + length
        }
        return (bytes, chunks)
    }

    static func read(_ bytes: [UInt8], passphrase: String = passphrase) throws(BackupError) -> [BackupItem] {
        var offset = 0
        var reader = try BackupReader(passphrase: passphrase) { count in
            let end = min(offset + count, bytes.count)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
        var items: [BackupItem] = []
        while let item = try reader.next() { items.append(item) }
        return items
    }

    static func refusal(_ bytes: [UInt8], passphrase: String = passphrase) -> BackupError? {
        do {
            _ = try read(bytes, passphrase: passphrase)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyItemReadsBackAsItWasWritten() throws {
        let (bytes, chunks) = try Self.backup()
        #expect(chunks.count >= 4, "the test needs several chunks")
        #expect(try Self.read(bytes) == Self.items)
        #expect(try Self.read(try Self.backup([]).bytes).isEmpty)
    }

    @Test func nothingIsInClear() throws {
        let bytes = Data(try Self.backup().bytes)
        for clear in ["pässwörd", "refresh-1", "git.example", "alice", "site3.example", "vvvvvvvv", "ads.example"] {
            #expect(bytes.range(of: Data(clear.utf8)) == nil, "\(clear)")
        }
    }

    @Test func aWrongPassphraseIsToldFromADamagedFile() throws {
        let (bytes, _) = try Self.backup()
        #expect(Self.refusal(bytes, passphrase: "correct horse battery stapler")?.code == .wrongPassphrase)
    }

    @Test func chunksCannotBeChangedReorderedDroppedCutOffOrMoved() throws {
        let (bytes, chunks) = try Self.backup()
        let header = Array(bytes[..<chunks[0].lowerBound])
        func chunk(_ index: Int) -> [UInt8] { Array(bytes[chunks[index]]) }
        let last = chunks.count - 1
        var changed = bytes
        changed[chunks[1].lowerBound + 10] ^= 0x80
        let variants: [(String, [UInt8])] = [
            ("a changed byte", changed),
            ("two chunks swapped", header + chunk(1) + chunk(0) + (2...last).flatMap(chunk)),
            ("a middle chunk dropped", header + chunk(0) + (2...last).flatMap(chunk)),
            ("the last chunk dropped", header + (0..<last).flatMap(chunk)),
            ("cut inside a chunk", Array(bytes.dropLast(7))),
            ("bytes after the end", bytes + [0]),
            ("a chunk repeated", header + chunk(0) + chunk(0) + (1...last).flatMap(chunk)),
        ]
        for (what, variant) in variants {
            #expect(Self.refusal(variant)?.code == .damaged, "\(what)")
        }
        // Another backup's header (same passphrase, its own salt) before these chunks.
        let other = try Self.backup()
        let otherHeader = Array(other.bytes[..<other.chunks[0].lowerBound])
        #expect(Self.refusal(otherHeader + Array(bytes[chunks[0].lowerBound...]))?.code == .damaged)
    }

    @Test func whatIsNotABackupIsRefusedBeforeAnyKeyIsDerived() throws {
        for text in ["", "hello\n", "keyjar-backup 2\n{}\n", "keyjar-backup 1\nnot json\n", "keyjar-backup 1\n{}\n"] {
            #expect(Self.refusal(Array(text.utf8))?.code == .notABackup, "\(text)")
        }
        #expect(Self.refusal(Array("keyjar-backup 2\n{}\n".utf8))?.description.contains("newer Keyjar") == true)
        // scrypt at 64 GiB: refused by its parameters, not attempted.
        let hostile =
            #"{"kdf":"scrypt","n":1048576,"r":32,"p":16,"salt":"AAAAAAAAAAAAAAAAAAAAAA==","check":"AAAA"}"#
        #expect(Self.refusal(Array("keyjar-backup 1\n\(hostile)\n".utf8))?.code == .notABackup)
    }

    @Test func aHostileChunkLengthIsRefusedUnread() throws {
        let (bytes, chunks) = try Self.backup([])
        let header = Array(bytes[..<chunks[0].lowerBound])
        let error = Self.refusal(header + [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(
            error?.code == .damaged && error?.detail.contains("4294967295 bytes") == true,
            "\(String(describing: error))"
        )
    }

    @Test func theNewerItemWins() {
        let older = Self.cookie(1)
        var newer = older
        newer.lastAccess = older.lastAccess.addingTimeInterval(1)
        #expect(BackupMerge.restores(newer, over: older))
        #expect(!BackupMerge.restores(older, over: newer))
        #expect(!BackupMerge.restores(older, over: older))
        #expect(BackupMerge.restores(older, over: nil))
        var used = Self.credential.record
        used.lastUsed = 1_800_000_000
        #expect(BackupMerge.restores(used, over: Self.credential.record))
        #expect(!BackupMerge.restores(Self.credential.record, over: used))
        let merged = BackupMerge.policy(
            CookiePolicy(acceptPolicy: .never, domainRules: ["a.example": .block, "b.example": .allow]),
            into: CookiePolicy(acceptPolicy: .always, domainRules: ["a.example": .allow])
        )
        #expect(merged == CookiePolicy(acceptPolicy: .always, domainRules: ["a.example": .allow, "b.example": .allow]))
    }
}
