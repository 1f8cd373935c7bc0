import KeyjarCodec
import KeyjarCore

/// A netrc file: never a crash; entries come in the file's order, each on a line of the file,
/// and an error names a line of it.
func fuzzNetrcFile(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.utf8.count { $0 == UInt8(ascii: "\n") } + 1
    do {
        let entries = try NetrcFile.parse(text)
        for (entry, next) in zip(entries, entries.dropFirst()) {
            fuzzCheck(entry.line <= next.line, "entries out of the file's order")
        }
        for entry in entries {
            fuzzCheck((1...lines).contains(entry.line), "an entry on line \(entry.line) of \(lines)")
            fuzzCheck(entry.password == nil || entry.description.hasSuffix("password <hidden>"), "a password shown")
        }
    } catch {
        fuzzCheck((1...lines).contains(error.line), "an error on line \(error.line) of \(lines)")
    }
}

/// A git-credentials file: never a crash; what is read is what git could use (a host, a port in
/// range, no control character git refuses), on a line of the file.
func fuzzGitCredentialsFile(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.utf8.count { $0 == UInt8(ascii: "\n") } + 1
    do {
        for entry in try GitCredentialsFile.parse(text) {
            fuzzCheck((1...lines).contains(entry.line), "an entry on line \(entry.line) of \(lines)")
            fuzzCheck(!entry.host.isEmpty && !entry.protocol.isEmpty, "an entry without host or scheme")
            fuzzCheck(entry.port.map { (1...65_535).contains($0) } ?? true, "a port out of range")
            for value in [entry.user, entry.password, entry.host, entry.path ?? ""] {
                fuzzCheck(!value.utf8.contains { $0 == 0 || $0 == 10 || $0 == 13 }, "a control character kept")
            }
        }
    } catch {
        fuzzCheck((1...lines).contains(error.line), "an error on line \(error.line) of \(lines)")
    }
}

/// A pass entry (`keyjar sync`): never a crash; what is read writes back and reads again the
/// same, its description is its login and url alone (never the password or refresh token,
/// which show only where those public fields hold the same text), and a path the entry names
/// is a server.
func fuzzPassEntry(_ bytes: [UInt8]) {
    guard let entry = try? PassEntry.read(String(decoding: bytes, as: UTF8.self)) else { return }
    var publicOnly = entry
    publicOnly.password = ""
    publicOnly.refreshToken = nil
    fuzzCheck(entry.description == publicOnly.description, "the description shows a secret")
    // Times are written to the millisecond: after one writing, writing is a fixed point.
    if let text = try? entry.encoded() {
        let again = try? PassEntry.read(text)
        fuzzCheck(again != nil, "an entry that does not read back as written")
        let rewritten = try? again?.encoded()
        fuzzCheck(rewritten == text, "an entry whose writing changes when read back")
        fuzzCheck(again?.password == entry.password && again?.login == entry.login, "a field lost in writing")
    }
    if let (space, user) = PassStoreLayout.credential(of: entry, at: "example.com/alice") {
        fuzzCheck(!space.host.isEmpty, "a credential without a host")
        let path = PassStoreLayout.path(of: space, user: user)
        let components = path.utf8.split(separator: UInt8(ascii: "/"))
        fuzzCheck(
            components.count == 2 && !path.hasPrefix(".") && components.allSatisfy { !$0.contains(0) },
            "a path outside its directory: \(path)"
        )
        // The path alone (an entry without fields, `pass insert HOST/USER`) names the same user,
        // for a whole https server and a user whose name holds no qualifier's " (".
        if space == ProtectionSpace(host: space.host, protocol: "https"), !user.isEmpty, !user.contains(" ("),
            user != "(no user)",
            let byPath = PassStoreLayout.credential(of: PassEntry(password: "p"), at: path)
        {
            fuzzCheck(byPath.user == user, "a path that names another user: \(path)")
        }
    }
}

/// A cookie's pass entry (`keyjar sync --cookies`): never a crash; what is read writes back
/// and reads again the same, its description never shows the value (where no field of the
/// identity holds its text), and its path is one file in one folder of the cookie folder.
func fuzzPassCookieEntry(_ bytes: [UInt8]) {
    guard let entry = try? PassCookieEntry.read(String(decoding: bytes, as: UTF8.self)) else { return }
    var valueless = entry
    valueless.cookie.value = ""
    fuzzCheck(entry.description == valueless.description, "the description shows the value")
    if let text = try? entry.encoded() {
        let again = try? PassCookieEntry.read(text)
        fuzzCheck(again != nil, "an entry that does not read back as written")
        fuzzCheck((try? again?.encoded()) == text, "an entry whose writing changes when read back")
        fuzzCheck(again.map { $0.holdsTheSame(as: entry) } == true, "a field lost in writing")
    }
    let path = PassCookieEntry.path(of: entry.cookie.identity)
    let components = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    fuzzCheck(
        components.count == 3 && components[0].elementsEqual(PassCookieEntry.folder.utf8)
            && components.dropFirst().allSatisfy { !$0.isEmpty && !$0.contains(0) && $0.first != UInt8(ascii: ".") },
        "a path outside its folder: \(path)"
    )
}
