import KeyjarCore
import Testing

/// Durations as options take them (`--lock-after-idle`) and as `keyjar status` prints them.
@Suite struct DurationTextTests {
    @Test(arguments: [
        ("0", 0), ("90", 90), ("90s", 90), ("15m", 900), ("2h", 7_200), ("1d", 86_400), ("007m", 420),
        ("1h30m", 5_400), ("1d1s", 86_401), ("0m", 0),
    ])
    func readsNumbersWithUnitsLargestFirst(text: String, seconds: Int) {
        #expect(DurationText.seconds(text) == seconds)
    }

    @Test(arguments: [
        "", "m", "-5", "+5", "1.5h", "15 m", "15min", "1w", "٣m", "30m1h", "1m1m", "5m10",
        "99999999999999999999", "4000d", "3660d1s",
    ])
    func refusesWhatItDoesNotRead(text: String) {
        #expect(DurationText.seconds(text) == nil, "\(text)")
    }

    @Test func printsTheLargestUnitsThatNameItExactlyAndReadsThemBack() {
        #expect(DurationText.text(seconds: 0) == "0s")
        #expect(DurationText.text(seconds: 45) == "45s")
        #expect(DurationText.text(seconds: 900) == "15m")
        #expect(DurationText.text(seconds: 5_400) == "1h30m")
        #expect(DurationText.text(seconds: 90_061) == "1d1h1m1s")
        for seconds in [0, 1, 59, 61, 3_599, 86_399, 100_000, 3_660 * 86_400] {
            #expect(DurationText.seconds(DurationText.text(seconds: seconds)) == seconds)
        }
    }
}
