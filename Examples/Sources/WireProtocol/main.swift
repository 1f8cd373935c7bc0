// keyjard's protocol without the client library: frames of JSON over the socket.
// snippet: wire
import KeyjarProtocol

let keyjar = try WireConnection(socketPath: KeyjarPaths.defaultSocketPath(), client: "my-tool")
if case .status(let status) = try keyjar.call(.status) { print(status.cookieCount) }
// snippet end
