// A program imports Keyjar and gets the connection to keyjard with it: `KeyjarClient`, its
// errors and notifications live in KeyjarConnection, which links no FoundationNetworking (and
// so no libcurl and its thirty libraries), so that the `keyjar` command's front can use the
// client alone and start in a few milliseconds (docs/performance.md, "The command").
@_exported public import KeyjarConnection
