// What of keyjard's protocol a client's caller sees: its status report (`KeyjarClient.status()`)
// and the error numbers `KeyjarClientError.wireCode` holds. KeyjarProtocol is not a product.
@_exported public import struct KeyjarProtocol.ServiceStatus
@_exported public import struct KeyjarProtocol.WireErrorCode
