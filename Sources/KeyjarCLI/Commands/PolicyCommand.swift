import ArgumentParser
import Keyjar
import KeyjarCodec
import KeyjarCommands
import KeyjarCore

/// `keyjar policy …`: which cookies the shared jar accepts.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Show or change the cookie accept policy and the per-domain rules.",
        discussion: """
            Policies: always, never, main-document-domain (only from the site of the page), \
            no-third-party (also send none to third parties), grandfathered-third-party (third \
            parties only for sites that already have cookies). A domain rule covers the domain and \
            its subdomains and outranks the policy; the most specific rule wins.

            Examples:
              keyjar policy get
              keyjar policy set no-third-party
              keyjar policy domain block ads.example
              keyjar policy domain session-only news.example
              keyjar policy domain list --json
            """,
        subcommands: [Get.self, Set.self, Domain.self]
    )
}

private func currentPolicy(_ client: KeyjarClient) throws -> CookiePolicy {
    try client.policy()
}

/// Read-modify-write of the whole policy: keyjard takes the policy as one value. Two people
/// editing rules at the same instant could lose one edit; the next `list` shows it.
private func updatePolicy(_ global: GlobalOptions, _ change: (inout CookiePolicy) throws -> Void) throws {
    let client = try global.connect()
    var policy = try currentPolicy(client)
    try change(&policy)
    try client.setPolicy(policy)
}

/// The policy as `get --json` shows it: the accept policy named as on the command line.
private func policyJSON(_ policy: CookiePolicy) -> JSONValue {
    .object([
        ("acceptPolicy", .string(AcceptPolicyArgument(policy.acceptPolicy).rawValue)),
        ("domainRules", rulesJSON(policy.domainRules)),
    ])
}

/// Domain rules as a JSON object of domain to action.
private func rulesJSON(_ rules: [String: CookieDomainAction]) -> JSONValue {
    .object(rules.map { (key: $0.key, value: JSONValue.string($0.value.argumentName)) })
}

/// A domain for a rule, as cookies are stored (IDNA, lower case, no dots at the ends).
private func ruleDomain(_ text: String) throws(ValidationError) -> String {
    try UserInput.domain(text, option: "the domain")
}

extension PolicyCommand {
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Print the accept policy.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print the policy and the domain rules as a JSON object.")
        var json = false

        func run() throws {
            let policy = try currentPolicy(try global.connect())
            Output.line(json ? Output.json(policyJSON(policy)) : AcceptPolicyArgument(policy.acceptPolicy).rawValue)
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Set the accept policy.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp("The policy.", valueName: "policy"))
        var policy: AcceptPolicyArgument

        func run() throws {
            try updatePolicy(global) { $0.acceptPolicy = policy.policy }
        }
    }

    struct Domain: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "domain",
            abstract: "Per-domain rules that outrank the accept policy.",
            subcommands: [Allow.self, Block.self, SessionOnly.self, Remove.self, List.self]
        )

        struct Allow: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "allow",
                abstract: "Accept and send cookies for the domain, whatever the policy."
            )
            @OptionGroup var rule: RuleTarget
            func run() throws { try rule.set(.allow) }
        }

        struct Block: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "block",
                abstract: "Neither store nor send cookies for the domain."
            )
            @OptionGroup var rule: RuleTarget
            func run() throws { try rule.set(.block) }
        }

        struct SessionOnly: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "session-only",
                abstract: "Accept the domain's cookies but keep them only for the session."
            )
            @OptionGroup var rule: RuleTarget
            func run() throws { try rule.set(.sessionOnly) }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "remove",
                abstract: "Remove the domain's rule."
            )
            @OptionGroup var global: GlobalOptions
            @Argument(help: ArgumentHelp("The domain.", valueName: "domain")) var domain: String
            func validate() throws { _ = try ruleDomain(domain) }

            func run() throws {
                let domain = try ruleDomain(domain)
                try updatePolicy(global) { policy in
                    guard policy.domainRules.removeValue(forKey: domain) != nil else {
                        throw CLIError.failure("there is no rule for \(domain).")
                    }
                }
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list",
                abstract: "List the domain rules, one `domain action` a line."
            )
            @OptionGroup var global: GlobalOptions
            @Flag(help: "Print a JSON object of domain to action.") var json = false

            func run() throws {
                let rules = try currentPolicy(try global.connect()).domainRules
                if json {
                    Output.line(Output.json(rulesJSON(rules)))
                    return
                }
                for (domain, action) in rules.sorted(by: { $0.key < $1.key }) {
                    Output.line("\(domain) \(action.argumentName)")
                }
            }
        }
    }
}

/// The domain a rule is set for (`allow`, `block`, `session-only`), with the connection options.
struct RuleTarget: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("The domain (its subdomains included).", valueName: "domain")) var domain: String

    func validate() throws { _ = try ruleDomain(domain) }

    func set(_ action: CookieDomainAction) throws {
        let domain = try ruleDomain(domain)
        try updatePolicy(global) { $0.domainRules[domain] = action }
    }
}
