#!/bin/bash

__keyjar_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__keyjar_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__keyjar_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__keyjar_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_keyjar() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    status|cookie|credential|policy|watch|fetch|cache|git-credential|backup|restore|unlock|lock|secrets|run|docker-credential|sync|help)
        # Offer subcommand argument completions
        "_keyjar_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'status cookie credential policy watch fetch cache git-credential backup restore unlock lock secrets run docker-credential sync help' -- "${cur}"))
        ;;
    esac
}

_keyjar_status() {
    repeating_flags=()
    non_repeating_flags=(--no-start --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_cookie() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    list|get|set|delete|clear|import|export)
        # Offer subcommand argument completions
        "_keyjar_cookie_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'list get set delete clear import export' -- "${cur}"))
        ;;
    esac
}

_keyjar_cookie_list() {
    repeating_flags=()
    non_repeating_flags=(--no-start --session --persistent --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --domain --name --partition)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--domain')
        return
        ;;
    '--name')
        return
        ;;
    '--partition')
        return
        ;;
    esac
}

_keyjar_cookie_get() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --main-document)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--main-document')
        return
        ;;
    esac
}

_keyjar_cookie_set() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --url --main-document)
    __keyjar_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--url')
        return
        ;;
    '--main-document')
        return
        ;;
    esac
}

_keyjar_cookie_delete() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --domain --name --path --partition)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--domain')
        return
        ;;
    '--name')
        return
        ;;
    '--path')
        return
        ;;
    '--partition')
        return
        ;;
    esac
}

_keyjar_cookie_clear() {
    repeating_flags=()
    non_repeating_flags=(--no-start --all --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --domain)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--domain')
        return
        ;;
    esac
}

_keyjar_cookie_import() {
    repeating_flags=()
    non_repeating_flags=(--no-start --dry-run --follow --version -h --help)
    repeating_options=(--domain)
    non_repeating_options=(--socket --timeout --format --from-browser --container)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--format')
        __keyjar_add_completions -W 'netscape'$'\n''json'
        return
        ;;
    '--from-browser')
        return
        ;;
    '--container')
        return
        ;;
    '--domain')
        return
        ;;
    esac
}

_keyjar_cookie_export() {
    repeating_flags=()
    non_repeating_flags=(--no-start --include-same-site --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --format -o --output)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--format')
        __keyjar_add_completions -W 'netscape'$'\n''json'
        return
        ;;
    '-o'|'--output')
        return
        ;;
    esac
}

_keyjar_credential() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    add|list|show|remove|default|refresh|repair|import)
        # Offer subcommand argument completions
        "_keyjar_credential_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'add list show remove default refresh repair import' -- "${cur}"))
        ;;
    esac
}

_keyjar_credential_add() {
    repeating_flags=()
    non_repeating_flags=(--no-start --password-stdin --token-stdin --refresh-token-stdin --default --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --url --realm --method --proxy --user --token-endpoint --client-id --expires --expires-in --persistence --identity)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--url')
        return
        ;;
    '--realm')
        return
        ;;
    '--method')
        __keyjar_add_completions -W 'default'$'\n''basic'$'\n''digest'$'\n''ntlm'$'\n''negotiate'$'\n''bearer'$'\n''html-form'$'\n''client-certificate'$'\n''server-trust'
        return
        ;;
    '--proxy')
        __keyjar_add_completions -W 'http'$'\n''https'$'\n''ftp'$'\n''socks'
        return
        ;;
    '--user')
        return
        ;;
    '--token-endpoint')
        return
        ;;
    '--client-id')
        return
        ;;
    '--expires')
        return
        ;;
    '--expires-in')
        return
        ;;
    '--persistence')
        __keyjar_add_completions -W 'permanent'
        return
        ;;
    '--identity')
        return
        ;;
    esac
}

_keyjar_credential_list() {
    repeating_flags=()
    non_repeating_flags=(--no-start --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --url --realm --method --proxy --user)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--url')
        return
        ;;
    '--realm')
        return
        ;;
    '--method')
        __keyjar_add_completions -W 'default'$'\n''basic'$'\n''digest'$'\n''ntlm'$'\n''negotiate'$'\n''bearer'$'\n''html-form'$'\n''client-certificate'$'\n''server-trust'
        return
        ;;
    '--proxy')
        __keyjar_add_completions -W 'http'$'\n''https'$'\n''ftp'$'\n''socks'
        return
        ;;
    '--user')
        return
        ;;
    esac
}

_keyjar_credential_show() {
    repeating_flags=()
    non_repeating_flags=(--no-start --reveal --force --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --url --realm --method --proxy --user)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--url')
        return
        ;;
    '--realm')
        return
        ;;
    '--method')
        __keyjar_add_completions -W 'default'$'\n''basic'$'\n''digest'$'\n''ntlm'$'\n''negotiate'$'\n''bearer'$'\n''html-form'$'\n''client-certificate'$'\n''server-trust'
        return
        ;;
    '--proxy')
        __keyjar_add_completions -W 'http'$'\n''https'$'\n''ftp'$'\n''socks'
        return
        ;;
    '--user')
        return
        ;;
    esac
}

_keyjar_credential_remove() {
    repeating_flags=()
    non_repeating_flags=(--no-start --all --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --url --realm --method --proxy --user)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--url')
        return
        ;;
    '--realm')
        return
        ;;
    '--method')
        __keyjar_add_completions -W 'default'$'\n''basic'$'\n''digest'$'\n''ntlm'$'\n''negotiate'$'\n''bearer'$'\n''html-form'$'\n''client-certificate'$'\n''server-trust'
        return
        ;;
    '--proxy')
        __keyjar_add_completions -W 'http'$'\n''https'$'\n''ftp'$'\n''socks'
        return
        ;;
    '--user')
        return
        ;;
    esac
}

_keyjar_credential_default() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --url --realm --method --proxy --user)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--url')
        return
        ;;
    '--realm')
        return
        ;;
    '--method')
        __keyjar_add_completions -W 'default'$'\n''basic'$'\n''digest'$'\n''ntlm'$'\n''negotiate'$'\n''bearer'$'\n''html-form'$'\n''client-certificate'$'\n''server-trust'
        return
        ;;
    '--proxy')
        __keyjar_add_completions -W 'http'$'\n''https'$'\n''ftp'$'\n''socks'
        return
        ;;
    '--user')
        return
        ;;
    esac
}

_keyjar_credential_refresh() {
    repeating_flags=()
    non_repeating_flags=(--no-start --force --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --url --realm --method --proxy --user)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--url')
        return
        ;;
    '--realm')
        return
        ;;
    '--method')
        __keyjar_add_completions -W 'default'$'\n''basic'$'\n''digest'$'\n''ntlm'$'\n''negotiate'$'\n''bearer'$'\n''html-form'$'\n''client-certificate'$'\n''server-trust'
        return
        ;;
    '--proxy')
        __keyjar_add_completions -W 'http'$'\n''https'$'\n''ftp'$'\n''socks'
        return
        ;;
    '--user')
        return
        ;;
    esac
}

_keyjar_credential_repair() {
    repeating_flags=()
    non_repeating_flags=(--no-start --dry-run --remove-unpaired --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_credential_import() {
    repeating_flags=()
    non_repeating_flags=(--no-start --include-default --allow-unencrypted --replace --dry-run --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --from --schema)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--from')
        __keyjar_add_completions -W 'git-credential-libsecret'$'\n''git-store'$'\n''netrc'$'\n''secret-tool'
        return
        ;;
    '--schema')
        return
        ;;
    esac
}

_keyjar_policy() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    get|set|domain)
        # Offer subcommand argument completions
        "_keyjar_policy_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'get set domain' -- "${cur}"))
        ;;
    esac
}

_keyjar_policy_get() {
    repeating_flags=()
    non_repeating_flags=(--no-start --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_policy_set() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    1)
        __keyjar_add_completions -W 'always'$'\n''never'$'\n''main-document-domain'$'\n''no-third-party'$'\n''grandfathered-third-party'
        return
        ;;
    esac
}

_keyjar_policy_domain() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    allow|block|session-only|remove|list)
        # Offer subcommand argument completions
        "_keyjar_policy_domain_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'allow block session-only remove list' -- "${cur}"))
        ;;
    esac
}

_keyjar_policy_domain_allow() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_policy_domain_block() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_policy_domain_session-only() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_policy_domain_remove() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_policy_domain_list() {
    repeating_flags=()
    non_repeating_flags=(--no-start --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_watch() {
    repeating_flags=()
    non_repeating_flags=(--no-start --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --count)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--count')
        return
        ;;
    esac
}

_keyjar_fetch() {
    repeating_flags=()
    non_repeating_flags=(--no-start -O --remote-name --overwrite -C --continue -i --include --fail -f --no-follow --silent -s --no-cookies --cache -k --insecure --password-stdin --location-trusted --version -h --help)
    repeating_options=(-H --header -d --data)
    non_repeating_options=(--socket --timeout --output -o --output-dir -X --request --max-redirects --max-time --cache-policy --cacert --capath --pinned-sha256 -u --user --persistence)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--output'|'-o')
        return
        ;;
    '--output-dir')
        return
        ;;
    '-X'|'--request')
        return
        ;;
    '-H'|'--header')
        return
        ;;
    '-d'|'--data')
        return
        ;;
    '--max-redirects')
        return
        ;;
    '--max-time')
        return
        ;;
    '--cache-policy')
        __keyjar_add_completions -W 'use-protocol'$'\n''reload'$'\n''return-cache-data-else-load'$'\n''return-cache-data-dont-load'
        return
        ;;
    '--cacert')
        return
        ;;
    '--capath')
        return
        ;;
    '--pinned-sha256')
        return
        ;;
    '-u'|'--user')
        return
        ;;
    '--persistence')
        __keyjar_add_completions -W 'none'$'\n''session'$'\n''permanent'
        return
        ;;
    esac
}

_keyjar_cache() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    list|clear)
        # Offer subcommand argument completions
        "_keyjar_cache_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'list clear' -- "${cur}"))
        ;;
    esac
}

_keyjar_cache_list() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0
}

_keyjar_cache_clear() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--url)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--url')
        return
        ;;
    esac
}

_keyjar_git-credential() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    1)
        __keyjar_add_completions -W 'get'$'\n''store'$'\n''erase'$'\n''capability'
        return
        ;;
    esac
}

_keyjar_backup() {
    repeating_flags=()
    non_repeating_flags=(--no-start --passphrase-stdin --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_restore() {
    repeating_flags=()
    non_repeating_flags=(--no-start --passphrase-stdin --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_unlock() {
    repeating_flags=()
    non_repeating_flags=(--no-start --passphrase-stdin --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --passphrase-fd --lock-after-idle)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--passphrase-fd')
        return
        ;;
    '--lock-after-idle')
        return
        ;;
    esac
}

_keyjar_lock() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac
}

_keyjar_secrets() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    migrate)
        # Offer subcommand argument completions
        "_keyjar_secrets_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'migrate' -- "${cur}"))
        ;;
    esac
}

_keyjar_secrets_migrate() {
    repeating_flags=()
    non_repeating_flags=(--no-start --passphrase-stdin --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout --to --secrets-file --passphrase-fd)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--to')
        __keyjar_add_completions -W 'secret-service'$'\n''encrypted'$'\n''file'
        return
        ;;
    '--secrets-file')
        return
        ;;
    '--passphrase-fd')
        return
        ;;
    esac
}

_keyjar_run() {
    repeating_flags=()
    non_repeating_flags=(--no-start --mask --version -h --help)
    repeating_options=(--env)
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--env')
        return
        ;;
    esac
}

_keyjar_docker-credential() {
    repeating_flags=()
    non_repeating_flags=(--no-start --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --timeout)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    1)
        __keyjar_add_completions -W 'store'$'\n''get'$'\n''erase'$'\n''list'$'\n''version'
        return
        ;;
    esac
}

_keyjar_sync() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    now|init)
        # Offer subcommand argument completions
        "_keyjar_sync_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'now init' -- "${cur}"))
        ;;
    esac
}

_keyjar_sync_now() {
    repeating_flags=()
    non_repeating_flags=(--no-start --watch --version -h --help)
    repeating_options=(--cookies --no-cookies)
    non_repeating_options=(--socket --timeout --interval)
    __keyjar_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--timeout')
        return
        ;;
    '--cookies')
        return
        ;;
    '--no-cookies')
        return
        ;;
    '--interval')
        return
        ;;
    esac
}

_keyjar_sync_init() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=(--key)
    non_repeating_options=(--store)
    __keyjar_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--store')
        return
        ;;
    '--key')
        return
        ;;
    esac
}

_keyjar_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __keyjar_offer_flags_options -1
}

complete -o filenames -F _keyjar keyjar
