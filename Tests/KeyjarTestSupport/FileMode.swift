public import Glibc

/// The `st_mode` of a path (`lstat` unless `followingLinks`), nil when it cannot be read.
/// Kept here: in a test target that imports the executables' modules, `struct stat`'s members
/// resolve to whichever system module the build happened to load first (CoreFoundation,
/// CDispatch), and `MemberImportVisibility` refuses them unless that very module is imported.
public func fileMode(_ path: String, followingLinks: Bool = false) -> mode_t? {
    var info = stat()
    let status = followingLinks ? stat(path, &info) : lstat(path, &info)
    return status == 0 ? info.st_mode : nil
}
