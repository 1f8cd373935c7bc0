import CProcessControl
import Glibc

/// Keys in the kernel's session keyring (keyrings(7)): what keyjard keeps there survives its
/// own restart, lives no longer than the login session, is never in a file, and is readable only
/// by processes that possess the session keyring (the login's processes; not root's view of the
/// disk, not a backup, not another session of the user).
///
/// Each key is a `user` key named by its description, replaced when stored again, readable and
/// writable by its possessors only (no view by the user's other sessions).
///
/// A process a login gave no session keyring (a container, some service managers) uses the
/// user's default session keyring, which all such processes of the user share, as the kernel's
/// own lookups do: storing into "the session keyring" would otherwise make the kernel give this
/// process a new one, private to it and gone when it exits.
package enum SessionKeyring {
    /// A keyring call the kernel refused (a container's seccomp policy refuses them all).
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var operation: String
        package var code: Int32

        package var description: String {
            "the kernel's session keyring refused \(operation): \(String(cString: strerror(code)))"
        }
    }

    /// Possessor: view, read, write, search, link, set attributes. Nothing for user, group, other.
    private static let possessorOnly: UInt = 0x3f00_0000
    private static let session = UInt(bitPattern: Int(KEY_SPEC_SESSION_KEYRING))

    /// Stores `payload` under `description`, replacing a key stored there before.
    /// - Parameter seconds: the kernel forgets the key after this long; nil: when the session ends.
    package static func store(
        _ description: String,
        payload: UnsafeRawBufferPointer,
        expiresAfter seconds: Int?
    ) throws(Failure) {
        // Without "create": the login's session keyring, else the user's default session keyring.
        let keyring = keyctl(KEYCTL_GET_KEYRING_ID, session, 0)
        guard keyring >= 0 else { throw Failure(operation: "find the session keyring", code: errno) }
        let id = keyjar_add_key("user", description, payload.baseAddress, payload.count, Int32(keyring))
        guard id >= 0 else { throw Failure(operation: "add_key", code: errno) }
        guard keyctl(KEYCTL_SETPERM, UInt(id), possessorOnly) == 0 else {
            let code = errno
            _ = keyctl(KEYCTL_INVALIDATE, UInt(id))
            throw Failure(operation: "setperm", code: code)
        }
        if let seconds { try setExpiry(id: id, seconds: seconds) }
    }

    /// Calls `body` with the payload stored under `description`, in a buffer zeroed afterwards;
    /// nil when there is none (never stored, expired, removed, or another session's).
    package static func withPayload<T>(
        _ description: String,
        _ body: (UnsafeRawBufferPointer) throws -> T
    ) throws -> T? {
        guard let id = find(description) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        defer { buffer.wipe() }
        let count = buffer.withUnsafeMutableBytes { bytes in
            keyctl(KEYCTL_READ, UInt(id), address(bytes.baseAddress), UInt(bytes.count))
        }
        guard count >= 0 else {
            let code = errno
            // Expired or revoked between the search and the read: as good as none.
            if code == ENOKEY || code == EKEYEXPIRED || code == EKEYREVOKED { return nil }
            throw Failure(operation: "read", code: code)
        }
        guard count <= buffer.count else { throw Failure(operation: "read", code: EMSGSIZE) }
        return try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Makes the key under `description` expire `seconds` from now; nothing when there is none.
    package static func setExpiry(_ description: String, seconds: Int) throws(Failure) {
        guard let id = find(description) else { return }
        try setExpiry(id: id, seconds: seconds)
    }

    /// Removes the key under `description` from every keyring; says whether there was one.
    @discardableResult
    package static func remove(_ description: String) -> Bool {
        guard let id = find(description) else { return false }
        if keyctl(KEYCTL_INVALIDATE, UInt(id)) == 0 { return true }
        return keyctl(KEYCTL_UNLINK, UInt(id), session) == 0
    }

    /// Gives this process a new, empty session keyring, as a login does (pam_keyinit): what it
    /// and its children store from now on is theirs, apart from the session it leaves.
    package static func joinNewSession() throws(Failure) {
        guard keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0) >= 0 else {
            throw Failure(operation: "join a new session keyring", code: errno)
        }
    }

    private static func find(_ description: String) -> Int? {
        let id = description.withCString { name in
            "user".withCString { type in
                keyctl(KEYCTL_SEARCH, session, address(type), address(name))
            }
        }
        return id >= 0 ? id : nil
    }

    private static func setExpiry(id: Int, seconds: Int) throws(Failure) {
        guard keyctl(KEYCTL_SET_TIMEOUT, UInt(id), UInt(max(1, seconds))) == 0 else {
            throw Failure(operation: "set a timeout", code: errno)
        }
    }

    private static func address(_ pointer: UnsafeRawPointer?) -> UInt { UInt(bitPattern: Int(bitPattern: pointer)) }

    private static func keyctl(_ operation: Int32, _ a2: UInt, _ a3: UInt = 0, _ a4: UInt = 0) -> Int {
        keyjar_keyctl(operation, a2, a3, a4, 0)
    }
}
