// What a loader's user names without importing more: the response cache it configures
// (`URLLoader.Configuration.responseCache`) and the client identities a delegate answers a
// client-certificate challenge with. Those modules are not products of their own.
@_exported public import KeyjarIdentity
@_exported public import KeyjarResponseCache
