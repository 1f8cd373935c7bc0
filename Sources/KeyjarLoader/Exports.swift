// What a loader's user names without importing more: the response cache it configures
// (`URLLoader.Configuration.responseCache`), the client identities a delegate answers a
// client-certificate challenge with, and the trust anchors servers are verified against.
// Those modules are not products of their own.
@_exported public import KeyjarIdentity
@_exported public import KeyjarResponseCache
@_exported public import KeyjarTransfer
