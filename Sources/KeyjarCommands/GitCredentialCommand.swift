package import ArgumentParser
import FoundationEssentials
package import KeyjarAuth
import KeyjarConnection
import KeyjarCore

/// `keyjar git-credential get|store|erase`: git's credential-helper protocol on the shared
/// credential storage, so git and every Keyjar program share one set of credentials.
package struct GitCredentialCommand: ParsableCommand {
    /// The name git looks for on PATH for `credential.helper keyjar`.
    package static let helperName = "git-credential-keyjar"

    package static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "A git credential helper backed by the shared credential storage.",
        discussion: """
            git writes key=value lines on standard input (git-credential(1), as of git 2.46); keys \
            Keyjar does not know are ignored. `get` answers from the store by Keyjar's matching \
            rule (see `keyjar help credential`): the named user's most specific credential for \
            that scheme, host and port (and the challenge's realm and scheme, wwwauth[], the \
            strongest stored first), else the one that answers unasked. An expired credential is \
            never returned: an expired token Keyjar can refresh (stored with a token endpoint) is \
            refreshed first, once for every process, and the new one answers. A token's expiry comes as password_expiry_utc and a stored refresh \
            token that git stored as oauth_refresh_token (never one Keyjar refreshes with itself). A Bearer token goes to a git that announced \
            capability[]=authtype as authtype=Bearer and credential=, to an older git as \
            username= and password=.

            `store` saves the credential permanently (secrets in the Secret Service), updating the \
            one that answered: password_expiry_utc becomes its expiry (one already past is not \
            stored), oauth_refresh_token is kept beside it, authtype=Bearer with credential= is \
            stored as a bearer token (user "token" unless git names one), and ephemeral=1 is not \
            stored. What git leaves out when it confirms the password Keyjar gave (git before \
            2.40 drops the expiry, before 2.41 the refresh token) is kept. A server's first \
            credential becomes its default. `erase` removes the matching credential (only when its secret is the one \
            git rejected, when git names it), and refuses a request that names no host. With \
            capability[]=state, `get` adds state[]=keyjar:1?... naming the credential (never its \
            secret), so that the `store` or `erase` that follows acts on exactly it. \
            `capability` prints the capabilities (authtype, state); other operations are \
            ignored, as git asks of helpers.

            Set-up (either):
              git config --global credential.helper "$(command -v keyjar) git-credential"
            or
              ln -s "$(command -v keyjar)" ~/.local/bin/git-credential-keyjar
              git config --global credential.helper keyjar

            Example:
              printf 'protocol=https\\nhost=example.com\\n\\n' | keyjar git-credential get
            """
    )

    @OptionGroup package var global: GlobalOptions

    // A string, not an enum: git may pass operations a helper must ignore (git-credential(1)).
    @Argument(
        help: ArgumentHelp("get, store, erase or capability (git passes it).", valueName: "operation"),
        completion: .list(["get", "store", "erase", "capability"])
    )
    package var operation: String

    package init() {}

    /// `git-credential OPERATION` with no option, as ArgumentParser reads it.
    package init(operation: String) {
        global = .unset
        self.operation = operation
    }

    package func run() throws {
        switch operation {
        case "get": try get(Self.parse(Self.readRequestText()))
        case "store": try store(Self.parse(Self.readRequestText()))
        case "erase": try erase(Self.parse(Self.readRequestText()))
        // git-credential(1): helpers may answer git's capability query in its own format.
        case "capability": Output.write(Data(GitCredentialCapability.announcement.utf8))
        default: return
        }
    }

    /// git's lines from standard input, up to the blank line that ends them, as they came: the
    /// request parser alone splits them (at line feeds, as git does).
    static func readRequestText() -> String {
        var text = ""
        while let line = Swift.readLine(strippingNewline: false), line != "\n", line != "\r\n" { text += line }
        return text
    }

    /// The request git wrote.
    static func parse(_ text: String) throws -> GitCredentialRequest {
        do {
            return try GitCredentialRequest.parse(text)
        } catch {
            throw CLIError.usage(error.description)
        }
    }

    /// Writes the answer; a value git could not carry fails the helper (git then asks its
    /// user) rather than reaching git split or cut.
    package static func answer(_ response: GitCredentialResponse) throws {
        do {
            Output.write(Data(try response.encoded().utf8))
        } catch {
            throw CLIError.failure("cannot answer git: \(error.description)")
        }
    }

    /// git waits for its helper before it asks its user: a keyjard that does not answer
    /// (stopped) fails a helper call after this long unless --timeout or KEYJAR_TIMEOUT say otherwise.
    package static let timeout: Double = 5

    /// The user git names; `username=` with nothing after it names none.
    private static func user(_ request: GitCredentialRequest) -> String? {
        request.username.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The stored credential Keyjar's `get` answered with, when git hands its state back and
    /// that credential is one of the request's server (and of the user git names, if any): a
    /// state value is only ever trusted to pick among what the request could reach anyway.
    private static func answeredCredential(_ request: GitCredentialRequest) -> GitCredentialState? {
        guard let state = request.keyjarState,
            CredentialChoice.specificity(of: state.space, for: request.space(realm: nil, method: .default)) != nil,
            user(request).map({ $0 == state.user }) ?? true
        else { return nil }
        return state
    }

    private func get(_ request: GitCredentialRequest) throws {
        guard request.namesServer else { return }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // The strongest challenge first; with several users and no default, no answer: git
        // then asks its user. keyjard never offers an expired credential.
        let lookup = StoredCredentialLookup(spaces: request.spaces, user: Self.user(request))
        var found = try lookup.answer(client: client)
        // Only expired tokens that Keyjar can refresh answer? Then refresh the one git would
        // get (once for every process, through keyjard) and answer with the new token, rather
        // than leave git to ask its user.
        if found == nil, let expired = try lookup.tokenToRefresh(client: client, answering: nil) {
            try StoredTokenRefresh.available(expired, nil, client)
            found = try lookup.answer(client: client)
        }
        guard let record = found, let secret = try client.password(user: record.user, for: record.space) else {
            return
        }
        var response = GitCredentialResponse(answering: request)
        // The user always: git ignores it beside a credential= but hands it back with its
        // store or erase, which then know whose token it is even without the state capability.
        response.username = record.user
        if record.space.authenticationMethod == .httpBearer, request.capabilities.contains(.authtype) {
            // git sends "Authorization: Bearer <token>" itself. Older git gets the token as a
            // password, which hosts that take tokens over Basic accept.
            response.authType = AuthenticationScheme.bearer.rawValue
            response.credential = secret
        } else {
            response.password = secret
        }
        // git drops a password whose expiry has passed; a fraction of a second is dropped
        // rather than rounded up, so git never keeps one longer than keyjard offers it.
        response.passwordExpiryUTC = record.expires.flatMap { Int64(exactly: $0.rounded(.down)) }
        // A refresh token git gave goes back to git (a helper such as git-credential-oauth
        // refreshes with it); one Keyjar refreshes with itself does not: git hands what a
        // helper answers to every other helper and to `git credential fill`'s caller, and has
        // no way to ask for it.
        if record.hasRefreshToken, record.tokenRefresh == nil {
            response.oauthRefreshToken = try client.refreshToken(user: record.user, for: record.space)
        }
        // Names the credential for the store or erase that follows (only written when git
        // announced the state capability).
        response.state = [GitCredentialState(space: record.space, user: record.user).encoded]
        try Self.answer(response)
    }

    /// What git asks to store: the secret, its user, and the space it is looked up in. A Bearer
    /// token git hands back without a user name (Keyjar answered with none) is the user's the
    /// state names, else the one `keyjar credential add --token-stdin` uses.
    private static func storable(
        _ request: GitCredentialRequest,
        answered: GitCredentialState?
    ) -> (secret: String, user: String, space: ProtectionSpace)? {
        if let token = request.bearerToken {
            // A token is stored for Bearer challenges of its realm, or of the whole server.
            let space = request.method == .httpBearer ? request.space : request.space(realm: nil, method: .httpBearer)
            let stateUser = answered.flatMap { $0.space.authenticationMethod == .httpBearer ? $0.user : nil }
            return (token, user(request) ?? stateUser ?? UserInput.tokenUser, space)
        }
        // A pre-encoded value of another scheme (a Digest response) is no password to keep;
        // a credential without a user name could never be told apart or chosen.
        guard request.credential == nil, let user = user(request), let password = request.password, !password.isEmpty
        else { return nil }
        return (password, user, request.space)
    }

    private func store(_ request: GitCredentialRequest) throws {
        let now = Date().timeIntervalSince1970
        let answered = Self.answeredCredential(request)
        // An ephemeral credential is git's to use once; one already expired would never be offered.
        guard request.namesServer, !request.ephemeral,
            let (secret, user, lookup) = Self.storable(request, answered: answered),
            request.passwordExpiryUTC.map({ Double($0) > now }) ?? true
        else { return }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // The credential that answered (of the same kind: a password or a token), else the one
        // of that user that answers here; keyjard makes a space's first credential its default.
        let space: ProtectionSpace
        if let answered, answered.user == user, answered.space.isWildcard {
            // A `.netrc` login answered: confirmed as it is, nothing to do; a new password is
            // this server's alone (stored in the wildcard it would go to every server).
            if try client.password(user: user, for: answered.space) == secret { return }
            space = try client.credentialCandidates(for: lookup).space(forStoring: user, challengedAt: lookup)
        } else if let answered, answered.user == user,
            (answered.space.authenticationMethod == .httpBearer) == (lookup.authenticationMethod == .httpBearer)
        {
            space = answered.space
        } else {
            let candidates = try client.credentialCandidates(for: lookup)
            // git (without the state capability) confirming the `.netrc` login Keyjar gave it:
            // nothing to store, and no copy of it for this server.
            if let answering = candidates.answer(forUser: user), answering.space.isWildcard,
                try client.password(user: user, for: answering.space) == secret
            {
                return
            }
            space = candidates.space(forStoring: user, challengedAt: lookup)
        }
        var expires = request.passwordExpiryUTC.map(Double.init)
        var refreshToken = request.oauthRefreshToken.flatMap { $0.isEmpty ? nil : $0 }
        var tokenRefresh: TokenRefresh?
        if let existing = try client.credentialRecords().first(where: { $0.space == space && $0.user == user }),
            try client.password(user: user, for: space) == secret
        {
            // git confirms what Keyjar answered with. git before 2.40 does not hand back the
            // expiry it was given, before 2.41 the refresh token: what git leaves out is kept,
            // not erased, and a confirmation that brings nothing new changes nothing.
            let storedRefreshToken = existing.hasRefreshToken ? try client.refreshToken(user: user, for: space) : nil
            if expires == nil || expires == existing.expires, refreshToken == nil || refreshToken == storedRefreshToken
            {
                return
            }
            expires = expires ?? existing.expires
            refreshToken = refreshToken ?? storedRefreshToken
            if refreshToken == storedRefreshToken { tokenRefresh = existing.tokenRefresh }
        }
        // A new secret from git: its refresh token is kept for git, with no endpoint for Keyjar.
        try client.setCredential(
            user: user,
            password: secret,
            for: space,
            expires: expires,
            refreshToken: refreshToken,
            tokenRefresh: tokenRefresh
        )
    }

    private func erase(_ request: GitCredentialRequest) throws {
        guard request.namesServer else {
            throw CLIError.failure(
                "refusing to erase: the request names no protocol and host, and an empty pattern would erase every credential."
            )
        }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // The credential that answered and failed, exactly; else every match of the request.
        var targets: [(space: ProtectionSpace, user: String)] = []
        if let answered = Self.answeredCredential(request) {
            targets = [(answered.space, answered.user)]
        } else {
            for space in request.spaces {
                // Not a `.netrc` login: one server refusing it does not end it for every server.
                // (A state naming it, above, erases it.)
                for record in try client.credentialCandidates(for: space).records
                where !record.space.isWildcard && (Self.user(request) == nil || record.user == Self.user(request)) {
                    targets.append((record.space, record.user))
                }
            }
        }
        // Only the secret git saw fail: a newer one stored meanwhile stays.
        let rejected = request.bearerToken ?? request.password
        var erased = Set<GitCredentialState>()
        for (space, user) in targets where erased.insert(GitCredentialState(space: space, user: user)).inserted {
            if let rejected, try client.password(user: user, for: space) != rejected { continue }
            try client.removeCredential(user: user, for: space)
        }
    }
}
