import Foundation
import Glibc
import KeyjarCommands

/// One self-overwriting line on the terminal's standard error while a download runs: bytes so
/// far, of how many, and the rate. Only for a person watching: never in a pipe or a log.
struct ProgressMeter {
    private let started: ContinuousClock.Instant
    private var lastDrawn: ContinuousClock.Instant?
    private var expected: Int64?
    private var received: Int64 = 0
    private var drawn = false

    /// Redrawing more often than this only costs CPU and flickers.
    private static let interval = Duration.milliseconds(200)
    /// Downloads shorter than this finish before a meter would be worth seeing.
    private static let delay = Duration.milliseconds(500)

    init(now: ContinuousClock.Instant = .now) {
        started = now
    }

    /// Whether a meter should be shown: standard error is a terminal, and the body does not go
    /// to that same terminal (where the meter would garble it).
    static func wanted(silent: Bool, bodyToFile: Bool) -> Bool {
        !silent && isatty(STDERR_FILENO) == 1 && (bodyToFile || isatty(STDOUT_FILENO) != 1)
    }

    /// A new response: counting starts again.
    mutating func reset(expectedLength: Int64) {
        expected = expectedLength > 0 ? expectedLength : nil
        received = 0
    }

    mutating func add(_ count: Int, now: ContinuousClock.Instant = .now) {
        received += Int64(count)
        guard now - started >= Self.delay else { return }
        if let lastDrawn, now - lastDrawn < Self.interval { return }
        lastDrawn = now
        draw(now: now)
    }

    /// Ends the meter's line so that what follows starts on a fresh one.
    mutating func finish(now: ContinuousClock.Instant = .now) {
        guard drawn else { return }
        draw(now: now)
        try? FileHandle.standardError.write(contentsOf: Data("\n".utf8))
    }

    private mutating func draw(now: ContinuousClock.Instant) {
        drawn = true
        let elapsed = (now - started).components
        let seconds = max(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18, 0.001)
        var line = "\r" + Self.size(received)
        if let expected {
            let percent = Int(Double(received) * 100 / Double(expected))
            line += " of \(Self.size(expected)) (\(percent)%)"
        }
        line += ", \(Self.size(Int64(Double(received) / seconds)))/s   "
        try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
    }
}
