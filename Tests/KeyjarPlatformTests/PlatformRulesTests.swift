import Foundation
import KeyjarPlatform
import Testing

/// The rules every module shares, written once in KeyjarPlatform.
struct PlatformRulesTests {
    @Test func anXDGVariableCountsOnlyWhenSetNotEmptyAndAbsolute() {
        let valid = XDGDirectories(environment: [
            "HOME": "/home/u", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c", "XDG_CACHE_HOME": "/k",
            "XDG_RUNTIME_DIR": "/run/user/1", "XDG_DATA_DIRS": "/a:relative:/b",
        ])
        #expect(valid.dataHome == "/d" && valid.configHome == "/c" && valid.cacheHome == "/k")
        #expect(valid.runtimeDirectory == "/run/user/1")
        #expect(valid.dataDirectories == ["/a", "/b"])

        // Empty and relative values are ignored (the specification: a relative path is invalid).
        let invalid = XDGDirectories(environment: [
            "HOME": "/home/u", "XDG_DATA_HOME": "", "XDG_CONFIG_HOME": "config", "XDG_CACHE_HOME": "./cache",
            "XDG_RUNTIME_DIR": "run", "XDG_DATA_DIRS": "",
        ])
        #expect(invalid.dataHome == "/home/u/.local/share")
        #expect(invalid.configHome == "/home/u/.config")
        #expect(invalid.cacheHome == "/home/u/.cache")
        #expect(invalid.runtimeDirectory == nil)
        #expect(invalid.dataDirectories == ["/usr/local/share", "/usr/share"])

        // No usable HOME: the password database's home directory.
        let homeless = XDGDirectories(environment: ["HOME": "relative"])
        #expect(homeless.home.hasPrefix("/") && homeless.home != "relative")
    }

    @Test func theSessionBusIsTheAddressElseTheRuntimeDirectorysSocket() throws {
        #expect(
            SessionBus.problem(in: XDGDirectories(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"])) == nil
        )
        let none = try #require(SessionBus.problem(in: XDGDirectories(environment: ["XDG_RUNTIME_DIR": "relative"])))
        #expect(none.contains("neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR"))
    }

    @Test func hexDigitsBytesAndNumbers() {
        #expect(Hex.value(of: UInt8(ascii: "0")) == 0 && Hex.value(of: UInt8(ascii: "f")) == 15)
        #expect(Hex.value(of: UInt8(ascii: "F")) == 15 && Hex.value(of: UInt8(ascii: "g")) == nil)
        #expect(Hex.encode([0x00, 0x7F, 0xAB, 0xFF]) == "007fabff")
        #expect(Hex.encode([0xAB], uppercase: true) == "AB")
        #expect(Hex.digits(UInt16(0x1A), width: 4, uppercase: true) == "001A")
        #expect(Hex.digits(UInt64(0x123), width: 2) == "123")
    }

    @Test func calendarArithmeticRoundTripsEveryDayFromYear1To9999() {
        #expect(CivilDate.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilDate.days(year: 2000, month: 3, day: 1) == 11_017)
        let first = CivilDate.days(year: 1, month: 1, day: 1)
        let last = CivilDate.days(year: 9999, month: 12, day: 31)
        var expected = (year: 1, month: 1, day: 1)
        for days in first...last {
            let date = CivilDate.date(fromDays: days)
            guard date == expected else {
                Issue.record("day \(days) is \(date), not \(expected)")
                return
            }
            expected.day += 1
            if expected.day > CivilDate.daysIn(month: expected.month, year: expected.year) {
                expected = expected.month == 12 ? (expected.year + 1, 1, 1) : (expected.year, expected.month + 1, 1)
            }
        }
        #expect(CivilDate.daysIn(month: 2, year: 1900) == 28 && CivilDate.daysIn(month: 2, year: 2000) == 29)
        #expect(CivilDate.imfFixdate(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(CivilDate.imfFixdate(secondsSince1970: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
    }
}
