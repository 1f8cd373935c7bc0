#compdef keyjar

__keyjar_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__keyjar_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __keyjar_complete "${completions[@]:0:-1}"
    fi
}

__keyjar_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_keyjar() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'status:Show whether keyjard is reachable, its paths, counts, secrets backend and accept policy.'
            'cookie:Read, store, import and export cookies in the shared jar.'
            'credential:Manage URL credentials: user names in keyjard, passwords in the Secret Service.'
            'policy:Show or change the cookie accept policy and the per-domain rules.'
            'watch:Print every change to the shared store as it happens, until interrupted.'
            'fetch:Load a URL with the shared cookies and stored credentials (curl-like).'
            'cache:List or clear the response cache of keyjar fetch --cache.'
            'git-credential:A git credential helper backed by the shared credential storage.'
            'backup:Write the whole store, passwords included, to one file encrypted under a passphrase.'
            'restore:Merge a backup into the store: the newer of each cookie and credential wins.'
            'unlock:Open keyjard'\''s encrypted secrets file with its passphrase.'
            'lock:Make keyjard forget the encrypted secrets file'\''s key until the next unlock.'
            'secrets:Move keyjard'\''s passwords and tokens to another secrets backend.'
            'run:Run a command with stored passwords or tokens in environment variables.'
            'docker-credential:Docker'\''s credential helper on the shared credential storage.'
            'sync:Keep credentials alike on every machine, through a pass store in git.'
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        status|cookie|credential|policy|watch|fetch|cache|git-credential|backup|restore|unlock|lock|secrets|run|docker-credential|sync|help)
            "_keyjar_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_status() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--json[Print the status as a JSON object.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cookie() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'list:List stored cookies, one a line (or a JSON array with --json).'
            'get:Print the Cookie header that a request to URL would send (nothing when there is none).'
            'set:Store cookies as a response from URL would set them, under the accept policy.'
            'delete:Delete the cookies with a name on a domain (exactly that domain, not its subdomains).'
            'clear:Delete every cookie of a domain and its subdomains, or (with --all) every cookie.'
            'import:Import cookies from a cookies.txt or JSON file ('\''-'\'' for standard input), or from a browser.'
            'export:Export every unexpired cookie as cookies.txt or JSON.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        list|get|set|delete|clear|import|export)
            "_keyjar_cookie_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_cookie_list() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--domain[Only cookies for this domain and its subdomains.]:domain:'
        '--name[Only cookies with this name.]:name:'
        '--session[Only session cookies (no expiry).]'
        '--persistent[Only persistent cookies (with an expiry).]'
        '--partition[Only cookies partitioned under this top-level site, as list shows it (https\://example.com); '\''none'\'' for unpartitioned ones.]:partition:'
        '--json[Print a JSON array.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cookie_get() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':url:'
        '--main-document[The URL of the page that makes the request (third-party rules, SameSite).]:url:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cookie_set() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--url[The URL of the response that sets the cookies.]:url:'
        '--main-document[The URL of the page that made the request (third-party rules, SameSite).]:url:'
        '*:set-cookie:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cookie_delete() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--domain[The cookie'\''s domain, as `list` shows it (a leading dot is ignored).]:domain:'
        '--name[The cookie'\''s name.]:name:'
        '--path[Only the cookie with this path.]:path:'
        '--partition[Only cookies partitioned under this top-level site, as list shows it (https\://example.com); '\''none'\'' for unpartitioned ones.]:partition:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cookie_clear() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--domain[The domain whose cookies (subdomains included) to delete.]:domain:'
        '--all[Delete every cookie in the shared jar.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cookie_import() {
    local -i ret=1
    local -ar ___format=('netscape' 'json')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--format[The file format (default\: json for *.json files, else netscape).]:format:{__keyjar_complete "${___format[@]}"}'
        ':file:'
        '--from-browser[Import from a browser'\''s cookies instead of a file\: firefox, chrome, chromium, brave, edge, vivaldi or opera, optionally with a profile'\''s name, directory or path after a colon.]:browser\[\:profile\]:'
        '--container[Firefox only\: the cookies of this container (default\: none).]:name:'
        '*--domain[Only cookies of this domain and its subdomains (repeatable).]:domain:'
        '--dry-run[Print how many cookies each site would get; send nothing.]'
        '--follow[After the import, keep importing what the browser changes until interrupted.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cookie_export() {
    local -i ret=1
    local -ar ___format=('netscape' 'json')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--format[The file format (default\: json for *.json output files, else netscape).]:format:{__keyjar_complete "${___format[@]}"}'
        '(-o --output)'{-o,--output}'[Write to this file (replaced whole, mode 0600; through a symbolic link; '\''-'\'' is standard output).]:file:'
        '--include-same-site[Add libsoup'\''s SameSite column to cookies.txt lines (curl then rejects them).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'add:Store a credential (replacing the user'\''s password if it is already stored).'
            'list:List stored credentials (never their passwords or tokens).'
            'show:Show one credential; its password only with --reveal.'
            'remove:Remove a credential (its password leaves the Secret Service too).'
            'default:Make a stored credential its space'\''s default (the one answered first).'
            'refresh:Refresh a stored token through its token endpoint, unless it is still valid.'
            'repair:Adopt passwords no credential owns; list credentials whose password is missing.'
            'import:Import the credentials git, curl or another Secret Service application already stored.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        add|list|show|remove|default|refresh|repair|import)
            "_keyjar_credential_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_credential_add() {
    local -i ret=1
    local -ar ___method=('default' 'basic' 'digest' 'ntlm' 'negotiate' 'bearer' 'html-form' 'client-certificate' 'server-trust')
    local -ar ___proxy=('http' 'https' 'ftp' 'socks')
    local -ar ___persistence=('permanent')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--url[The server as a URL\: scheme, host and port (a path is ignored); with --proxy, the proxy'\''s.]:url:'
        '--realm[The realm the server names in its challenge.]:realm:'
        '--method[The authentication method.]:method:{__keyjar_complete "${___method[@]}"}'
        '--proxy[A proxy'\''s space, of this proxy type.]:type:{__keyjar_complete "${___proxy[@]}"}'
        '--user[The user name (default\: the user in --url).]:name:'
        '--password-stdin[Read the password from standard input (one trailing newline is dropped).]'
        '--token-stdin[Store a bearer token read from standard input'\''s first line (method bearer).]'
        '--refresh-token-stdin[With --token-stdin\: standard input'\''s second line is the OAuth refresh token.]'
        '--token-endpoint[The OAuth token endpoint the refresh token is redeemed at (https; http only to this machine).]:url:'
        '--client-id[The OAuth client id sent with a refresh.]:id:'
        '--expires[When the credential expires\: an ISO 8601 time (2026-12-31T23\:59\:59Z) or date (UTC midnight).]:time:'
        '--expires-in[Seconds from now until the credential expires.]:seconds:'
        '--persistence[How long the credential is kept\: permanent (the only choice here, see above).]:persistence:{__keyjar_complete "${___persistence[@]}"}'
        '--default[Make it the space'\''s default credential.]'
        '--identity[A client certificate and its key\: a PEM file, or a PKCS#12 bundle (its passphrase read like a password); implies --method client-certificate.]:file:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential_list() {
    local -i ret=1
    local -ar ___method=('default' 'basic' 'digest' 'ntlm' 'negotiate' 'bearer' 'html-form' 'client-certificate' 'server-trust')
    local -ar ___proxy=('http' 'https' 'ftp' 'socks')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--url[The server as a URL\: scheme, host and port (a path is ignored); with --proxy, the proxy'\''s.]:url:'
        '--realm[The realm the server names in its challenge.]:realm:'
        '--method[The authentication method.]:method:{__keyjar_complete "${___method[@]}"}'
        '--proxy[A proxy'\''s space, of this proxy type.]:type:{__keyjar_complete "${___proxy[@]}"}'
        '--user[Only this user'\''s credentials.]:name:'
        '--json[Print a JSON array.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential_show() {
    local -i ret=1
    local -ar ___method=('default' 'basic' 'digest' 'ntlm' 'negotiate' 'bearer' 'html-form' 'client-certificate' 'server-trust')
    local -ar ___proxy=('http' 'https' 'ftp' 'socks')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--url[The server as a URL\: scheme, host and port (a path is ignored); with --proxy, the proxy'\''s.]:url:'
        '--realm[The realm the server names in its challenge.]:realm:'
        '--method[The authentication method.]:method:{__keyjar_complete "${___method[@]}"}'
        '--proxy[A proxy'\''s space, of this proxy type.]:type:{__keyjar_complete "${___proxy[@]}"}'
        '--user[The user name.]:name:'
        '--reveal[Also print the password.]'
        '--force[With --reveal, print the password even when standard output is not a terminal.]'
        '--json[Print a JSON object.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential_remove() {
    local -i ret=1
    local -ar ___method=('default' 'basic' 'digest' 'ntlm' 'negotiate' 'bearer' 'html-form' 'client-certificate' 'server-trust')
    local -ar ___proxy=('http' 'https' 'ftp' 'socks')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--url[The server as a URL\: scheme, host and port (a path is ignored); with --proxy, the proxy'\''s.]:url:'
        '--realm[The realm the server names in its challenge.]:realm:'
        '--method[The authentication method.]:method:{__keyjar_complete "${___method[@]}"}'
        '--proxy[A proxy'\''s space, of this proxy type.]:type:{__keyjar_complete "${___proxy[@]}"}'
        '--user[The user name.]:name:'
        '--all[Remove every credential the options select.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential_default() {
    local -i ret=1
    local -ar ___method=('default' 'basic' 'digest' 'ntlm' 'negotiate' 'bearer' 'html-form' 'client-certificate' 'server-trust')
    local -ar ___proxy=('http' 'https' 'ftp' 'socks')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--url[The server as a URL\: scheme, host and port (a path is ignored); with --proxy, the proxy'\''s.]:url:'
        '--realm[The realm the server names in its challenge.]:realm:'
        '--method[The authentication method.]:method:{__keyjar_complete "${___method[@]}"}'
        '--proxy[A proxy'\''s space, of this proxy type.]:type:{__keyjar_complete "${___proxy[@]}"}'
        '--user[The user name.]:name:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential_refresh() {
    local -i ret=1
    local -ar ___method=('default' 'basic' 'digest' 'ntlm' 'negotiate' 'bearer' 'html-form' 'client-certificate' 'server-trust')
    local -ar ___proxy=('http' 'https' 'ftp' 'socks')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--url[The server as a URL\: scheme, host and port (a path is ignored); with --proxy, the proxy'\''s.]:url:'
        '--realm[The realm the server names in its challenge.]:realm:'
        '--method[The authentication method.]:method:{__keyjar_complete "${___method[@]}"}'
        '--proxy[A proxy'\''s space, of this proxy type.]:type:{__keyjar_complete "${___proxy[@]}"}'
        '--user[The user name.]:name:'
        '--force[Refresh the token even when it is still valid.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential_repair() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--dry-run[Only list what would be done.]'
        '--remove-unpaired[Remove the credentials whose password is missing, listing each.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_credential_import() {
    local -i ret=1
    local -ar ___from=('git-credential-libsecret' 'git-store' 'netrc' 'secret-tool')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--from[Where the credentials are.]:source:{__keyjar_complete "${___from[@]}"}'
        ':file:'
        '--schema[The schema of the secret-tool items.]:name:'
        '--include-default[Import a netrc default entry too, as a credential for every server.]'
        '--allow-unencrypted[Let a credential for every scheme (a .netrc entry, a secret-tool item without a protocol) go over http and ftp to other machines too, unencrypted.]'
        '--replace[Replace a stored credential whose password differs (otherwise it is left).]'
        '--dry-run[Only print what the import would do.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_policy() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'get:Print the accept policy.'
            'set:Set the accept policy.'
            'domain:Per-domain rules that outrank the accept policy.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        get|set|domain)
            "_keyjar_policy_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_policy_get() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--json[Print the policy and the domain rules as a JSON object.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_policy_set() {
    local -i ret=1
    local -ar _policy=('always' 'never' 'main-document-domain' 'no-third-party' 'grandfathered-third-party')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':policy:{__keyjar_complete "${_policy[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_policy_domain() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'allow:Accept and send cookies for the domain, whatever the policy.'
            'block:Neither store nor send cookies for the domain.'
            'session-only:Accept the domain'\''s cookies but keep them only for the session.'
            'remove:Remove the domain'\''s rule.'
            'list:List the domain rules, one `domain action` a line.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        allow|block|session-only|remove|list)
            "_keyjar_policy_domain_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_policy_domain_allow() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':domain:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_policy_domain_block() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':domain:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_policy_domain_session-only() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':domain:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_policy_domain_remove() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':domain:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_policy_domain_list() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--json[Print a JSON object of domain to action.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_watch() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--json[Print JSON lines.]'
        '--count[Stop after this many notifications.]:count:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_fetch() {
    local -i ret=1
    local -ar ___cache_policy=('use-protocol' 'reload' 'return-cache-data-else-load' 'return-cache-data-dont-load')
    local -ar ___persistence=('none' 'session' 'permanent')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':url:'
        '(--output -o)'{--output,-o}'[Save the body as this file (replacing it) instead of writing it to standard output.]:file:'
        '(-O --remote-name)'{-O,--remote-name}'[Save the body under the server'\''s name for it (Content-Disposition, else the URL'\''s last path component), unique unless --overwrite.]'
        '--output-dir[Save -O'\''s file, or a relative -o file, in this directory.]:directory:'
        '--overwrite[With -O, replace a file of the same name instead of choosing a unique one.]'
        '(-C --continue)'{-C,--continue}'[With -o or -O, continue an interrupted download of the same URL\: only the remaining bytes are asked for (the whole file again if it changed on the server).]'
        '(-i --include)'{-i,--include}'[Write the response head before the body (to standard output when the body goes to a file).]'
        '(-X --request)'{-X,--request}'[The request method.]:method:'
        '*'{-H,--header}'[Send this header field ('\''Name\: value'\''); repeatable (repeated names join with commas).]:field:'
        '*'{-d,--data}'[Send this body (POST unless -X says otherwise); @FILE reads a file, @- standard input.]:data:'
        '(--fail -f)'{--fail,-f}'[Fail (exit status 1, no body) when the server answers with a status of 400 or more.]'
        '--no-follow[Do not follow redirects\: deliver the redirect response itself.]'
        '--max-redirects[Follow at most this many redirects.]:count:'
        '--max-time[Give up when the whole load takes longer than this.]:seconds:'
        '(--silent -s)'{--silent,-s}'[Draw no progress line.]'
        '--no-cookies[Neither send nor store cookies.]'
        '--cache[Use the response cache ($XDG_CACHE_HOME/keyjar/keyjar/; see keyjar cache).]'
        '--cache-policy[With --cache\: use-protocol (RFC 9111, the default), reload, return-cache-data-else-load or return-cache-data-dont-load (never the network).]:policy:{__keyjar_complete "${___cache_policy[@]}"}'
        '(-k --insecure)'{-k,--insecure}'[Accept a server certificate that fails verification (this run only).]'
        '--cacert[Verify the server'\''s certificate against the CA certificates in this PEM file instead of the system'\''s bundle, as curl'\''s --cacert (default\: $CURL_CA_BUNDLE, else $SSL_CERT_FILE).]:file:'
        '--capath[Verify the server'\''s certificate against the CA certificates in this directory (hashed, as c_rehash or `openssl rehash` makes it), as curl'\''s --capath (default\: $SSL_CERT_DIR).]:directory:'
        '--pinned-sha256[Trust the server'\''s certificate, although it fails verification, if its SHA-256 fingerprint is this one (as keyjar shows it when it refuses one); with --persistence, keep trusting it.]:fingerprint:'
        '(-u --user)'{-u,--user}'[Answer the server'\''s challenge as this user (the password is asked for).]:name:'
        '--password-stdin[With --user, read the password from standard input (one trailing newline is dropped).]'
        '--location-trusted[Send the --user password and -H Authorization to every host a redirect leads to, as curl'\''s --location-trusted (without it they go only to the scheme, host and port of the URL given).]'
        '--persistence[With --user or --pinned-sha256, keep the accepted password or certificate\: none, session (this run only) or permanent.]:persistence:{__keyjar_complete "${___persistence[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cache() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'list:List the cached responses, most recently used first.'
            'clear:Remove every cached response, or one URL'\''s.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        list|clear)
            "_keyjar_cache_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_cache_list() {
    local -i ret=1
    local -ar arg_specs=(
        '--json[Print a JSON array of objects.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_cache_clear() {
    local -i ret=1
    local -ar arg_specs=(
        '--url[Remove only this URL'\''s response.]:url:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_git-credential() {
    local -i ret=1
    local -ar _operation=('get' 'store' 'erase' 'capability')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':operation:{__keyjar_complete "${_operation[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_backup() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':file:'
        '--passphrase-stdin[Read the passphrase from standard input instead of the terminal.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_restore() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':file:'
        '--passphrase-stdin[Read the passphrase from standard input instead of the terminal.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_unlock() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--passphrase-stdin[Read the passphrase from standard input (one trailing newline is dropped).]'
        '--passphrase-fd[Read the passphrase from this open file descriptor.]:fd:'
        '--lock-after-idle[Lock again once no password has been read or stored for this long\: 90s, 15m, 2h, 1d, or 0 for never (default\: keyjard'\''s --lock-after-idle, else never).]:duration:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_lock() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_secrets() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'migrate:Move every password and token to another secrets backend, losing none.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        migrate)
            "_keyjar_secrets_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_secrets_migrate() {
    local -i ret=1
    local -ar ___to=('secret-service' 'encrypted' 'file')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--to[The backend to move to\: secret-service, encrypted or file.]:backend:{__keyjar_complete "${___to[@]}"}'
        '--secrets-file[The file for encrypted or file (default\: beside the database).]:path:'
        '--passphrase-stdin[Read the encrypted file'\''s passphrase from standard input (one trailing newline is dropped).]'
        '--passphrase-fd[Read the encrypted file'\''s passphrase from this open file descriptor.]:fd:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_run() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '*--env[An environment variable and the credential it holds\: NAME=URL, or NAME=URL#user.]:name=url\[#user\]:'
        '--mask[Write *** for the values wherever they appear in the command'\''s output and errors.]'
        '*:command:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_docker-credential() {
    local -i ret=1
    local -ar _operation=('store' 'get' 'erase' 'list' 'version')
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        ':operation:{__keyjar_complete "${_operation[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_sync() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'now:Sync once (or, with --watch, on every change): merge, reconcile, commit and push.'
            'init:Adopt or make the pass store to sync with.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        now|init)
            "_keyjar_sync_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_keyjar_sync_now() {
    local -i ret=1
    local -ar arg_specs=(
        '--socket[keyjard'\''s socket (default\: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).]:path:'
        '--no-start[Fail (exit status 3) instead of starting keyjard when none is serving.]'
        '--timeout[How long to wait for keyjard'\''s answer before failing with exit status 3 (default\: $KEYJAR_TIMEOUT, else 30).]:seconds:'
        '--watch[Keep running\: sync within a few seconds of every credential change, and pull on an interval.]'
        '--cookies[Sync the cookies of these sites too (a domain and the names under it), on every machine from now on.]:domain:'
        '--no-cookies[Stop syncing these sites'\'' cookies\: their entries leave the store, each machine keeps its own cookies.]:domain:'
        '--interval[With --watch, how often to pull other machines'\'' changes (default\: 300).]:seconds:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_sync_init() {
    local -i ret=1
    local -ar arg_specs=(
        ':directory-or-url:'
        '--store[Where to clone a git URL (default\: $PASSWORD_STORE_DIR, else ~/.password-store).]:directory:'
        '*--key[The gpg key to encrypt to, for a store without a .gpg-id (repeat for several).]:key:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_keyjar_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _keyjar ]]; then
    _keyjar "${@}"
else
    compdef _keyjar keyjar
fi
