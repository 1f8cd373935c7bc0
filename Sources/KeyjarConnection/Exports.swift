// What of keyjard's protocol a client's caller sees: its status report (`KeyjarClient.status()`),
// the error numbers `KeyjarClientError.wireCode` holds, and where the socket and database are by
// default. KeyjarProtocol itself is not a product.
@_exported public import enum KeyjarProtocol.KeyjarPaths
@_exported public import struct KeyjarProtocol.ServiceStatus
@_exported public import struct KeyjarProtocol.WireErrorCode
