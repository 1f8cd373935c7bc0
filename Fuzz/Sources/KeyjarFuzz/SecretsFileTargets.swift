import Crypto
import KeyjarSealing
import KeyjarStore

/// A fixed data key: damaged files' sealed values are opened with it (and do not open).
private let fuzzDataKey = SymmetricKey(data: [UInt8](repeating: 7, count: 32))

/// The encrypted secrets file: never a crash; every failure a SecretStoreError; a file that
/// reads is written back as bytes that read as the same file, with key-derivation parameters
/// Keyjar derives with; a sealed value opens under the wrong key as an error, not a crash.
func fuzzSealedSecretsFile(_ bytes: [UInt8]) {
    let file: SealedSecretsFile
    do {
        file = try SealedSecretsFile(bytes: bytes, path: "fuzz")
    } catch {
        fuzzCheck(error is SecretStoreError, "an error that is not a SecretStoreError: \(error)")
        return
    }
    fuzzCheck(file.kdf.problem == nil, "parameters Keyjar does not derive with were accepted")
    let again = try? SealedSecretsFile(bytes: file.bytes, path: "fuzz")
    fuzzCheck(again == file, "a file does not read back as itself")
    for item in file.items {
        do {
            _ = try SealedSecretsFile.open(item.sealed, for: item.key, with: fuzzDataKey, path: "fuzz")
        } catch {
            fuzzCheck(error is SecretStoreError, "an error that is not a SecretStoreError: \(error)")
        }
    }
}
