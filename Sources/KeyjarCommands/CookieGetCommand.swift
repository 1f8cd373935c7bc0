package import ArgumentParser
import FoundationEssentials
import KeyjarConnection

/// `keyjar cookie get URL`: the Cookie header a request would send. Scripts run it in front of
/// every curl, so the front runs it itself (``CommandTable``).
package struct CookieGetCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the Cookie header that a request to URL would send (nothing when there is none).",
        discussion: """
            The header value only, without `Cookie: `, so it can go straight into curl -H or wget \
            --header. Partitioned cookies (CHIPS) go only with requests under the top-level site \
            they were set under: --main-document names it (without it, the request is its own \
            top-level page).
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The request URL.", valueName: "url"))
    var url: String

    @Option(
        help: ArgumentHelp(
            "The URL of the page that makes the request (third-party rules, SameSite).",
            valueName: "url"
        )
    )
    var mainDocument: String?

    package init() {}

    /// `cookie get URL` with no option, as ArgumentParser reads it.
    package init(url: String) {
        global = .unset
        self.url = url
        mainDocument = nil
    }

    package func validate() throws {
        _ = try UserInput.cookieURL(url)
        if let mainDocument { _ = try UserInput.cookieURL(mainDocument) }
    }

    package func run() throws {
        let url = try UserInput.cookieURL(url)
        let mainDocument = try mainDocument.map(UserInput.cookieURL)
        let client = try global.connect()
        let header = try client.cookieHeader(for: url, mainDocumentURL: mainDocument)
        if let header, !header.isEmpty { Output.line(header) }
    }
}
