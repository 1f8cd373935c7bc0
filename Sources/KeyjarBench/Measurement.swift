import CMallocInfo
import CoreFoundation  // struct timespec's members resolve there once libcrypto's headers are in the build
import Glibc

/// Monotonic nanoseconds; clock_gettime is cheaper than Date and never jumps.
@inline(__always)
func nanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

func percentile(_ sorted: [UInt64], _ fraction: Double) -> UInt64 {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// Prints `<name>_median`, `_p99` (and `_p999` when asked) in nanoseconds.
func report(_ name: String, samples: [UInt64], p999: Bool = false) {
    let sorted = samples.sorted()
    print("\(name)_median: \(percentile(sorted, 0.5)) ns")
    print("\(name)_p99: \(percentile(sorted, 0.99)) ns")
    if p999 { print("\(name)_p999: \(percentile(sorted, 0.999)) ns") }
}

func heapBytesInUse() -> Int { Int(mallinfo2().uordblks) }
