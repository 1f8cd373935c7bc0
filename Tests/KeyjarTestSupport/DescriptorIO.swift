public import Foundation
import Glibc

/// Reads and writes of the pipes the suite shares with its child processes, without
/// Foundation's legacy `FileHandle` calls (`readDataToEndOfFile()`, `readData(ofLength:)`,
/// `availableData`, `write(_:)`). Those end in `try!`: a read that fails once (interrupted, or
/// on a descriptor a dispatch source made non-blocking) or a write to a child that already
/// exited (EPIPE) would crash the test runner, and every test running with it.
public enum DescriptorIO {
    /// Up to `count` bytes, waiting for the first; empty at the end of input or on an error.
    public static func read(_ handle: FileHandle, upTo count: Int) -> Data {
        let descriptor = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: max(1, count))
        while true {
            let length = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if length > 0 { return Data(buffer[0..<length]) }
            if length == 0 { return Data() }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                // Non-blocking: wait until there is something (or the end) to read.
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, -1)
            default: return Data()
            }
        }
    }

    /// Everything until the end of input (or an error).
    public static func readToEnd(_ handle: FileHandle) -> Data {
        var data = Data()
        while true {
            let chunk = read(handle, upTo: 64 << 10)
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }

    /// Writes all of `data`; false when the reader has gone (EPIPE) or the write failed.
    @discardableResult
    public static func write(_ data: Data, to handle: FileHandle) -> Bool {
        (try? handle.write(contentsOf: data)) != nil
    }

    /// Writes `text` as UTF-8; false when the reader has gone.
    @discardableResult
    public static func write(_ text: String, to handle: FileHandle) -> Bool {
        write(Data(text.utf8), to: handle)
    }
}
