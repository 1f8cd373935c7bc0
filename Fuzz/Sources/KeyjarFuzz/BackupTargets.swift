import KeyjarBackup
import KeyjarSealing

/// One line of a backup's plaintext: never a crash; an item read is written back as a line
/// that reads as the same item.
func fuzzBackupItem(_ bytes: [UInt8]) {
    guard let item = try? BackupItem(line: bytes) else { return }
    let again = try? BackupItem(line: Array(item.encodedLine.dropLast()))
    fuzzCheck(again == item, "an item does not read back as itself")
}

/// A header that opens with "fuzz" cheaply (scrypt n = 2), made once.
private let cheapHeader: [UInt8] = {
    guard let writer = try? BackupWriter(passphrase: "fuzz", cost: .cheap(rounds: 2)) else { fatalError("no header") }
    return writer.header
}()

/// What follows a backup's header: never a crash or a hang; every failure a BackupError; the
/// reader reads at most what it was given.
func fuzzBackupStream(_ bytes: [UInt8]) {
    var input = cheapHeader + bytes
    var offset = 0
    do {
        var reader = try BackupReader(passphrase: "fuzz") { count in
            let end = min(offset + count, input.count)
            defer { offset = end }
            return Array(input[offset..<end])
        }
        var items = 0
        while try reader.next() != nil {
            items += 1
            fuzzCheck(items <= input.count, "more items than bytes")
        }
    } catch {
        fuzzCheck(offset <= input.count, "read past the input")
    }
    input.removeAll()
}
