// A program imports Keyjar and gets the connection to keyjard with it: `KeyjarClient`, its
// errors and listeners live in KeyjarConnection, which links FoundationEssentials only (no
// Foundation, no FoundationNetworking and so no libcurl and its thirty libraries), so that the
// `keyjar` command's front can use the client alone and start in a few milliseconds
// (docs/performance.md, "The command"). Foundation's notifications are this module's.
@_exported public import KeyjarConnection
