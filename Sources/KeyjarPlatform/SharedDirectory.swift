package import Glibc

/// The kernel's rules for a directory every user may write to (sticky and world-writable, such
/// as /tmp), applied by Keyjar itself wherever it follows a name the user gave: another user
/// can plant a symbolic link, a FIFO or a file there under the name before Keyjar writes it.
/// `fs.protected_symlinks` and `fs.protected_fifos`/`protected_regular` refuse the same, but
/// they are settings (off on some systems) and do not apply when a link is followed by hand.
package enum SharedDirectory {
    /// Whether a directory lets every user create entries in it that only their owner may
    /// remove: sticky and world-writable.
    package static func isShared(_ directory: stat) -> Bool {
        directory.st_mode & S_ISVTX != 0 && directory.st_mode & S_IWOTH != 0
    }

    /// Whether an entry found in `directory` and owned by `owner` may be followed (a symbolic
    /// link) or written into (a FIFO, a device, an existing file): in a shared directory only
    /// when it is this user's or the directory owner's (`protected_symlinks`, `protected_fifos`).
    package static func mayUse(ownedBy owner: uid_t, in directory: stat) -> Bool {
        !isShared(directory) || owner == geteuid() || owner == directory.st_uid
    }

    /// Why an entry planted by another user is refused, for an error message.
    package static func refusal(_ what: String, ownedBy owner: uid_t) -> String {
        "\(what) belongs to uid \(owner), not to you (uid \(geteuid())), in a directory every user can write to: "
            + "another user may have planted it"
    }
}

/// `O_PATH` (Linux: open a name without opening the file for reading or writing), which
/// Swift's Glibc module leaves out: glibc defines it only under `_GNU_SOURCE`.
package let O_PATH: Int32 = 0o10_000_000
