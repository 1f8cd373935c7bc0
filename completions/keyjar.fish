function __keyjar_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __keyjar_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __keyjar_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __keyjar_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __keyjar_parse_tokens -S
    set -l unparsed_tokens (__keyjar_tokens -pc)
    switch $unparsed_tokens[1]
    case 'keyjar'
        __keyjar_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'status'
            __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'json' 'version' 'h/help'
        case 'cookie'
            __keyjar_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'domain=' 'name=' 'session' 'persistent' 'partition=' 'json' 'version' 'h/help'
            case 'get'
                __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'main-document=' 'version' 'h/help'
            case 'set'
                __keyjar_parse_subcommand -r 1 'socket=' 'no-start' 'timeout=' 'url=' 'main-document=' 'version' 'h/help'
            case 'delete'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'domain=' 'name=' 'path=' 'partition=' 'version' 'h/help'
            case 'clear'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'domain=' 'all' 'version' 'h/help'
            case 'import'
                __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'format=' 'from-browser=' 'container=' 'domain=+' 'dry-run' 'follow' 'version' 'h/help'
            case 'export'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'format=' 'o/output=' 'include-same-site' 'version' 'h/help'
            end
        case 'credential'
            __keyjar_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'add'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'url=' 'realm=' 'method=' 'proxy=' 'user=' 'password-stdin' 'token-stdin' 'refresh-token-stdin' 'token-endpoint=' 'client-id=' 'expires=' 'expires-in=' 'persistence=' 'default' 'identity=' 'version' 'h/help'
            case 'list'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'url=' 'realm=' 'method=' 'proxy=' 'user=' 'json' 'version' 'h/help'
            case 'show'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'url=' 'realm=' 'method=' 'proxy=' 'user=' 'reveal' 'force' 'json' 'version' 'h/help'
            case 'remove'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'url=' 'realm=' 'method=' 'proxy=' 'user=' 'all' 'version' 'h/help'
            case 'default'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'url=' 'realm=' 'method=' 'proxy=' 'user=' 'version' 'h/help'
            case 'repair'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'dry-run' 'version' 'h/help'
            case 'import'
                __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'from=' 'schema=' 'include-default' 'replace' 'dry-run' 'version' 'h/help'
            end
        case 'policy'
            __keyjar_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'get'
                __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'json' 'version' 'h/help'
            case 'set'
                __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'version' 'h/help'
            case 'domain'
                __keyjar_parse_subcommand 0 'version' 'h/help'
                switch $unparsed_tokens[1]
                case 'allow'
                    __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'version' 'h/help'
                case 'block'
                    __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'version' 'h/help'
                case 'session-only'
                    __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'version' 'h/help'
                case 'remove'
                    __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'version' 'h/help'
                case 'list'
                    __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'json' 'version' 'h/help'
                end
            end
        case 'watch'
            __keyjar_parse_subcommand 0 'socket=' 'no-start' 'timeout=' 'json' 'count=' 'version' 'h/help'
        case 'fetch'
            __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'o/output=' 'O/remote-name' 'output-dir=' 'overwrite' 'C/continue' 'i/include' 'X/request=' 'H/header=+' 'd/data=+' 'f/fail' 'no-follow' 'max-redirects=' 'max-time=' 's/silent' 'no-cookies' 'cache' 'cache-policy=' 'k/insecure' 'pinned-sha256=' 'u/user=' 'password-stdin' 'persistence=' 'version' 'h/help'
        case 'cache'
            __keyjar_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __keyjar_parse_subcommand 0 'json' 'version' 'h/help'
            case 'clear'
                __keyjar_parse_subcommand 0 'url=' 'version' 'h/help'
            end
        case 'git-credential'
            __keyjar_parse_subcommand 1 'socket=' 'no-start' 'timeout=' 'version' 'h/help'
        case 'help'
            __keyjar_parse_subcommand -r 1 'version'
        end
    end
end

function __keyjar_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __keyjar_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __keyjar_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __keyjar_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__keyjar_tokens -p)
    if test -z "$(__keyjar_tokens -t)"
        set -l index (count (__keyjar_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'keyjar' -f
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'status' -d 'Show whether keyjard is reachable, its paths, counts, secrets backend and accept policy.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'cookie' -d 'Read, store, import and export cookies in the shared jar.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'credential' -d 'Manage URL credentials: user names in keyjard, passwords in the Secret Service.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'policy' -d 'Show or change the cookie accept policy and the per-domain rules.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'watch' -d 'Print every change to the shared store as it happens, until interrupted.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'fetch' -d 'Load a URL with the shared cookies and stored credentials (curl-like).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'cache' -d 'List or clear the response cache of keyjar fetch --cache.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'git-credential' -d 'A git credential helper backed by the shared credential storage.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar status" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar status" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar status" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar status" json' -l 'json' -d 'Print the status as a JSON object.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar status" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cookie" -eq 1' -fa 'list' -d 'List stored cookies, one a line (or a JSON array with --json).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cookie" -eq 1' -fa 'get' -d 'Print the Cookie header that a request to URL would send (nothing when there is none).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cookie" -eq 1' -fa 'set' -d 'Store cookies as a response from URL would set them, under the accept policy.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cookie" -eq 1' -fa 'delete' -d 'Delete the cookies with a name on a domain (exactly that domain, not its subdomains).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cookie" -eq 1' -fa 'clear' -d 'Delete every cookie of a domain and its subdomains, or (with --all) every cookie.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cookie" -eq 1' -fa 'import' -d 'Import cookies from a cookies.txt or JSON file (\'-\' for standard input), or from a browser.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cookie" -eq 1' -fa 'export' -d 'Export every unexpired cookie as cookies.txt or JSON.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" domain' -l 'domain' -d 'Only cookies for this domain and its subdomains.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" name' -l 'name' -d 'Only cookies with this name.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" session' -l 'session' -d 'Only session cookies (no expiry).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" persistent' -l 'persistent' -d 'Only persistent cookies (with an expiry).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" partition' -l 'partition' -d 'Only cookies partitioned under this top-level site, as list shows it (https://example.com); \'none\' for unpartitioned ones.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" json' -l 'json' -d 'Print a JSON array.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie get" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie get" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie get" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie get" main-document' -l 'main-document' -d 'The URL of the page that makes the request (third-party rules, SameSite).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie get" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie get" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie set" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie set" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie set" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie set" url' -l 'url' -d 'The URL of the response that sets the cookies.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie set" main-document' -l 'main-document' -d 'The URL of the page that made the request (third-party rules, SameSite).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie set" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie set" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" domain' -l 'domain' -d 'The cookie\'s domain, as `list` shows it (a leading dot is ignored).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" name' -l 'name' -d 'The cookie\'s name.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" path' -l 'path' -d 'Only the cookie with this path.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" partition' -l 'partition' -d 'Only cookies partitioned under this top-level site, as list shows it (https://example.com); \'none\' for unpartitioned ones.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie delete" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie clear" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie clear" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie clear" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie clear" domain' -l 'domain' -d 'The domain whose cookies (subdomains included) to delete.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie clear" all' -l 'all' -d 'Delete every cookie in the shared jar.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie clear" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie clear" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" format' -l 'format' -d 'The file format (default: json for *.json files, else netscape).' -rfka 'netscape json'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" from-browser' -l 'from-browser' -d 'Import from a browser\'s cookies instead of a file: firefox, chrome, chromium, brave, edge, vivaldi or opera, optionally with a profile\'s name, directory or path after a colon.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" container' -l 'container' -d 'Firefox only: the cookies of this container (default: none).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import"' -l 'domain' -d 'Only cookies of this domain and its subdomains (repeatable).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" dry-run' -l 'dry-run' -d 'Print how many cookies each site would get; send nothing.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" follow' -l 'follow' -d 'After the import, keep importing what the browser changes until interrupted.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie import" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" format' -l 'format' -d 'The file format (default: json for *.json output files, else netscape).' -rfka 'netscape json'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" o output' -s 'o' -l 'output' -d 'Write to this file (replaced whole, mode 0600; through a symbolic link; \'-\' is standard output).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" include-same-site' -l 'include-same-site' -d 'Add libsoup\'s SameSite column to cookies.txt lines (curl then rejects them).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cookie export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar credential" -eq 1' -fa 'add' -d 'Store a credential (replacing the user\'s password if it is already stored).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar credential" -eq 1' -fa 'list' -d 'List stored credentials (never their passwords or tokens).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar credential" -eq 1' -fa 'show' -d 'Show one credential; its password only with --reveal.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar credential" -eq 1' -fa 'remove' -d 'Remove a credential (its password leaves the Secret Service too).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar credential" -eq 1' -fa 'default' -d 'Make a stored credential its space\'s default (the one answered first).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar credential" -eq 1' -fa 'repair' -d 'Remove credentials whose password is missing and passwords no credential owns.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar credential" -eq 1' -fa 'import' -d 'Import the credentials git, curl or another Secret Service application already stored.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" url' -l 'url' -d 'The server as a URL: scheme, host and port (a path is ignored); with --proxy, the proxy\'s.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" realm' -l 'realm' -d 'The realm the server names in its challenge.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" method' -l 'method' -d 'The authentication method.' -rfka 'default basic digest ntlm negotiate bearer html-form client-certificate server-trust'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" proxy' -l 'proxy' -d 'A proxy\'s space, of this proxy type.' -rfka 'http https ftp socks'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" user' -l 'user' -d 'The user name (default: the user in --url).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" password-stdin' -l 'password-stdin' -d 'Read the password from standard input (one trailing newline is dropped).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" token-stdin' -l 'token-stdin' -d 'Store a bearer token read from standard input\'s first line (method bearer).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" refresh-token-stdin' -l 'refresh-token-stdin' -d 'With --token-stdin: standard input\'s second line is the OAuth refresh token.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" token-endpoint' -l 'token-endpoint' -d 'The OAuth token endpoint the refresh token is redeemed at (https; http only to this machine).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" client-id' -l 'client-id' -d 'The OAuth client id sent with a refresh.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" expires' -l 'expires' -d 'When the credential expires: an ISO 8601 time (2026-12-31T23:59:59Z) or date (UTC midnight).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" expires-in' -l 'expires-in' -d 'Seconds from now until the credential expires.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" persistence' -l 'persistence' -d 'How long the credential is kept: permanent (the only choice here, see above).' -rfka 'permanent'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" default' -l 'default' -d 'Make it the space\'s default credential.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" identity' -l 'identity' -d 'A client certificate and its key: a PEM file, or a PKCS#12 bundle (its passphrase read like a password); implies --method client-certificate.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential add" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" url' -l 'url' -d 'The server as a URL: scheme, host and port (a path is ignored); with --proxy, the proxy\'s.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" realm' -l 'realm' -d 'The realm the server names in its challenge.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" method' -l 'method' -d 'The authentication method.' -rfka 'default basic digest ntlm negotiate bearer html-form client-certificate server-trust'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" proxy' -l 'proxy' -d 'A proxy\'s space, of this proxy type.' -rfka 'http https ftp socks'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" user' -l 'user' -d 'Only this user\'s credentials.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" json' -l 'json' -d 'Print a JSON array.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" url' -l 'url' -d 'The server as a URL: scheme, host and port (a path is ignored); with --proxy, the proxy\'s.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" realm' -l 'realm' -d 'The realm the server names in its challenge.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" method' -l 'method' -d 'The authentication method.' -rfka 'default basic digest ntlm negotiate bearer html-form client-certificate server-trust'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" proxy' -l 'proxy' -d 'A proxy\'s space, of this proxy type.' -rfka 'http https ftp socks'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" user' -l 'user' -d 'The user name.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" reveal' -l 'reveal' -d 'Also print the password.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" force' -l 'force' -d 'With --reveal, print the password even when standard output is not a terminal.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" json' -l 'json' -d 'Print a JSON object.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential show" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" url' -l 'url' -d 'The server as a URL: scheme, host and port (a path is ignored); with --proxy, the proxy\'s.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" realm' -l 'realm' -d 'The realm the server names in its challenge.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" method' -l 'method' -d 'The authentication method.' -rfka 'default basic digest ntlm negotiate bearer html-form client-certificate server-trust'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" proxy' -l 'proxy' -d 'A proxy\'s space, of this proxy type.' -rfka 'http https ftp socks'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" user' -l 'user' -d 'The user name.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" all' -l 'all' -d 'Remove every credential the options select.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential remove" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" url' -l 'url' -d 'The server as a URL: scheme, host and port (a path is ignored); with --proxy, the proxy\'s.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" realm' -l 'realm' -d 'The realm the server names in its challenge.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" method' -l 'method' -d 'The authentication method.' -rfka 'default basic digest ntlm negotiate bearer html-form client-certificate server-trust'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" proxy' -l 'proxy' -d 'A proxy\'s space, of this proxy type.' -rfka 'http https ftp socks'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" user' -l 'user' -d 'The user name.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential default" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential repair" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential repair" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential repair" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential repair" dry-run' -l 'dry-run' -d 'Only list what would be removed.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential repair" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential repair" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" from' -l 'from' -d 'Where the credentials are.' -rfka 'git-credential-libsecret git-store netrc secret-tool'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" schema' -l 'schema' -d 'The schema of the secret-tool items.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" include-default' -l 'include-default' -d 'Import a netrc default entry too, as a credential for every server.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" replace' -l 'replace' -d 'Replace a stored credential whose password differs (otherwise it is left).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" dry-run' -l 'dry-run' -d 'Only print what the import would do.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar credential import" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy" -eq 1' -fa 'get' -d 'Print the accept policy.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy" -eq 1' -fa 'set' -d 'Set the accept policy.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy" -eq 1' -fa 'domain' -d 'Per-domain rules that outrank the accept policy.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy get" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy get" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy get" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy get" json' -l 'json' -d 'Print the policy and the domain rules as a JSON object.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy get" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy get" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy set" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy set" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy set" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy set" -eq 1' -fka 'always never main-document-domain no-third-party grandfathered-third-party'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy set" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy set" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy domain" -eq 1' -fa 'allow' -d 'Accept and send cookies for the domain, whatever the policy.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy domain" -eq 1' -fa 'block' -d 'Neither store nor send cookies for the domain.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy domain" -eq 1' -fa 'session-only' -d 'Accept the domain\'s cookies but keep them only for the session.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy domain" -eq 1' -fa 'remove' -d 'Remove the domain\'s rule.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar policy domain" -eq 1' -fa 'list' -d 'List the domain rules, one `domain action` a line.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain allow" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain allow" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain allow" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain allow" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain allow" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain block" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain block" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain block" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain block" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain block" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain session-only" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain session-only" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain session-only" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain session-only" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain session-only" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain remove" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain remove" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain remove" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain remove" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain remove" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain list" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain list" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain list" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain list" json' -l 'json' -d 'Print a JSON object of domain to action.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain list" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar policy domain list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar watch" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar watch" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar watch" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar watch" json' -l 'json' -d 'Print JSON lines.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar watch" count' -l 'count' -d 'Stop after this many notifications.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar watch" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar watch" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" o output' -l 'output' -s 'o' -d 'Save the body as this file (replacing it) instead of writing it to standard output.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" O remote-name' -s 'O' -l 'remote-name' -d 'Save the body under the server\'s name for it (Content-Disposition, else the URL\'s last path component), unique unless --overwrite.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" output-dir' -l 'output-dir' -d 'Save -O\'s file, or a relative -o file, in this directory.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" overwrite' -l 'overwrite' -d 'With -O, replace a file of the same name instead of choosing a unique one.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" C continue' -s 'C' -l 'continue' -d 'With -o or -O, continue an interrupted download of the same URL: only the remaining bytes are asked for (the whole file again if it changed on the server).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" i include' -s 'i' -l 'include' -d 'Write the response head before the body (to standard output when the body goes to a file).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" X request' -s 'X' -l 'request' -d 'The request method.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch"' -s 'H' -l 'header' -d 'Send this header field (\'Name: value\'); repeatable (repeated names join with commas).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch"' -s 'd' -l 'data' -d 'Send this body (POST unless -X says otherwise); @FILE reads a file, @- standard input.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" f fail' -l 'fail' -s 'f' -d 'Fail (exit status 1, no body) when the server answers with a status of 400 or more.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" no-follow' -l 'no-follow' -d 'Do not follow redirects: deliver the redirect response itself.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" max-redirects' -l 'max-redirects' -d 'Follow at most this many redirects.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" max-time' -l 'max-time' -d 'Give up when the whole load takes longer than this.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" s silent' -l 'silent' -s 's' -d 'Draw no progress line.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" no-cookies' -l 'no-cookies' -d 'Neither send nor store cookies.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" cache' -l 'cache' -d 'Use the response cache ($XDG_CACHE_HOME/keyjar/keyjar/; see keyjar cache).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" cache-policy' -l 'cache-policy' -d 'With --cache: use-protocol (RFC 9111, the default), reload, return-cache-data-else-load or return-cache-data-dont-load (never the network).' -rfka 'use-protocol reload return-cache-data-else-load return-cache-data-dont-load'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" insecure k' -s 'k' -l 'insecure' -d 'Accept a server certificate that fails verification (this run only).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" pinned-sha256' -l 'pinned-sha256' -d 'Trust the server\'s certificate, although it fails verification, if its SHA-256 fingerprint is this one (as keyjar shows it when it refuses one); with --persistence, keep trusting it.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" u user' -s 'u' -l 'user' -d 'Answer the server\'s challenge as this user (the password is asked for).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" password-stdin' -l 'password-stdin' -d 'With --user, read the password from standard input (one trailing newline is dropped).'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" persistence' -l 'persistence' -d 'With --user or --pinned-sha256, keep the accepted password or certificate: none, session (this run only) or permanent.' -rfka 'none session permanent'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar fetch" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cache" -eq 1' -fa 'list' -d 'List the cached responses, most recently used first.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar cache" -eq 1' -fa 'clear' -d 'Remove every cached response, or one URL\'s.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache list" json' -l 'json' -d 'Print a JSON array of objects.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache list" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache clear" url' -l 'url' -d 'Remove only this URL\'s response.' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache clear" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar cache clear" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar git-credential" socket' -l 'socket' -d 'keyjard\'s socket (default: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar git-credential" no-start' -l 'no-start' -d 'Fail (exit status 3) instead of starting keyjard when none is serving.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar git-credential" timeout' -l 'timeout' -d 'How long to wait for keyjard\'s answer before failing with exit status 3 (default: $KEYJAR_TIMEOUT, else 30).' -rfka ''
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_positional "keyjar git-credential" -eq 1' -fka 'get store erase capability'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar git-credential" version' -l 'version' -d 'Show the version.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar git-credential" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'keyjar' -n '__keyjar_should_offer_completions_for_flags_or_options "keyjar help" version' -l 'version' -d 'Show the version.'
