import Foundation
public import Glibc

/// Stops a process with SIGSTOP and returns once the kernel reports it stopped (state `T` in
/// /proc/PID/stat): the signal is delivered asynchronously, and a process running on another
/// CPU can still answer a request sent right after `kill` returns. False after 10 s.
@discardableResult
public func stopProcess(_ pid: pid_t) -> Bool {
    kill(pid, SIGSTOP)
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")"),
            stat[stat.index(after: end)...].split(separator: " ").first == "T"
        {
            return true
        }
        usleep(1_000)
    }
    return false
}
