import CCurl
import Foundation
import Synchronization

/// Drives every transfer of the process through one libcurl multi handle on one thread, so a
/// thousand concurrent connections cost a thousand sockets, not a thousand threads, and
/// keep-alive connections are shared by every request of the process.
///
/// Other threads talk to the engine only through its inbox (then `curl_multi_wakeup`); the
/// multi handle, the easy handles while they are added, and every libcurl callback live on the
/// engine thread.
final class CurlEngine: Sendable {
    /// The process's engine. Its thread starts with the first transfer and then waits in
    /// `curl_multi_poll` without timers while nothing is loading.
    static let shared = CurlEngine()

    private enum Command {
        case add(CurlTransfer)
        case cancel(CurlTransfer)
        case resume(CurlTransfer)
    }

    /// A CURLM handle; only the engine thread touches it except for `curl_multi_wakeup`,
    /// which libcurl documents as callable from any thread.
    private struct MultiHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private let multi: MultiHandle
    private let inbox = Mutex<[Command]>([])
    private let started = Mutex(false)

    private init() {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        guard let pointer = curl_multi_init() else { fatalError("libcurl could not create a multi handle") }
        multi = MultiHandle(pointer: pointer)
        // Keep more idle keep-alive connections than libcurl's default (4 per added handle,
        // which shrinks to nothing between requests of a sequential client).
        _ = keyjar_multi_setopt_long(pointer, CURLMOPT_MAXCONNECTS, 256)
    }

    func add(_ transfer: CurlTransfer) { post(.add(transfer)) }

    /// Stops a transfer; no callback of it runs after the engine handled this.
    func cancel(_ transfer: CurlTransfer) { post(.cancel(transfer)) }

    /// Continues a transfer paused because its receiver had too much unread data.
    func resume(_ transfer: CurlTransfer) { post(.resume(transfer)) }

    private func post(_ command: Command) {
        inbox.withLock { $0.append(command) }
        let mustStart = started.withLock { started -> Bool in
            defer { started = true }
            return !started
        }
        if mustStart {
            let thread = Thread { [self] in self.run() }
            thread.name = "keyjar-loader"
            thread.start()
        } else {
            curl_multi_wakeup(multi.pointer)
        }
    }

    private func run() {
        var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        var running: Int32 = 0
        var lastSweep: UInt64 = 0
        while true {
            var sweeps = true
            for command in inbox.withLock({ commands in defer { commands.removeAll(keepingCapacity: true) }; return commands }) {
                switch command {
                case .add(let transfer):
                    if transfers[transfer.easy] == nil, curl_multi_add_handle(multi.pointer, transfer.easy) == CURLM_OK {
                        transfers[transfer.easy] = transfer
                        transfer.touch()
                    } else {
                        transfer.complete(CURLE_FAILED_INIT)
                    }
                case .cancel(let transfer):
                    if transfers.removeValue(forKey: transfer.easy) != nil {
                        curl_multi_remove_handle(multi.pointer, transfer.easy)
                    }
                case .resume(let transfer):
                    if transfers[transfer.easy] != nil { curl_easy_pause(transfer.easy, CURLPAUSE_CONT) }
                }
            }
            curl_multi_perform(multi.pointer, &running)
            var remaining: Int32 = 0
            while let message = curl_multi_info_read(multi.pointer, &remaining) {
                guard keyjar_message_is_done(message) != 0, let easy = keyjar_message_easy_handle(message) else { continue }
                let result = keyjar_message_result(message)
                if let transfer = transfers.removeValue(forKey: easy) {
                    // Remove before completing so the finished handle's connection goes back to
                    // the pool before the receiver starts its next attempt.
                    curl_multi_remove_handle(multi.pointer, easy)
                    transfer.complete(result)
                }
            }
            let now = DispatchTime.now().uptimeNanoseconds
            // A sweep every 50 ms is plenty for timeouts of a second or more, and keeps a
            // thousand busy transfers from being scanned on every wakeup.
            if now - lastSweep > 50_000_000 { lastSweep = now } else { sweeps = false }
            for (easy, transfer) in transfers where sweeps && transfer.isIdle(at: now) {
                transfers[easy] = nil
                curl_multi_remove_handle(multi.pointer, easy)
                transfer.complete(CURLE_OPERATION_TIMEDOUT)
            }
            // curl_multi_poll lowers the timeout to libcurl's own next deadline; while
            // anything loads, wake often enough to notice idle timeouts.
            curl_multi_poll(multi.pointer, nil, 0, transfers.isEmpty ? 60_000 : 100, nil)
        }
    }
}
