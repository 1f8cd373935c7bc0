import Foundation
public import Glibc

/// Stops a process with SIGSTOP and returns once the kernel reports it stopped (state `T` in
/// /proc/PID/stat): the signal is delivered asynchronously, and a process running on another
/// CPU can still answer a request sent right after `kill` returns. False after `hangDeadline`.
@discardableResult
public func stopProcess(_ pid: pid_t) async -> Bool {
    kill(pid, SIGSTOP)
    return await eventually(every: .milliseconds(1)) {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].split(separator: " ").first == "T"
    }
}
