import NIOCore
import Testing

@testable import KeyjarServer

/// When keyjard compares the secret store with its records after the store's signals, without
/// any I/O.
struct SecretsAuditScheduleTests {
    @Test func aBurstOfSignalsSchedulesOneComparison() {
        var schedule = SecretsAuditSchedule()
        #expect(schedule.changeReported() == .schedule(after: SecretsAuditSchedule.gatheringDelay))
        for _ in 0..<100 { #expect(schedule.changeReported() == .nothing) }
        #expect(schedule.state == .scheduled)
        schedule.auditStarts()
        #expect(schedule.auditEnded(cost: .milliseconds(1)) == .nothing)
        #expect(schedule.state == .idle)
    }

    @Test func aSignalDuringAComparisonSchedulesOneMoreAfterIt() {
        var schedule = SecretsAuditSchedule()
        _ = schedule.changeReported()
        schedule.auditStarts()
        // The comparison may have listed the store before this change.
        #expect(schedule.changeReported() == .nothing)
        #expect(schedule.changeReported() == .nothing)
        #expect(schedule.state == .running(overtaken: true))
        #expect(schedule.auditEnded(cost: .milliseconds(1)) == .schedule(after: SecretsAuditSchedule.gatheringDelay))
        #expect(schedule.state == .scheduled)
        schedule.auditStarts()
        #expect(schedule.auditEnded(cost: .milliseconds(1)) == .nothing)
    }

    @Test func aCostlyComparisonIsFollowedAfterTenTimesItsCost() {
        var schedule = SecretsAuditSchedule()
        _ = schedule.changeReported()
        schedule.auditStarts()
        _ = schedule.changeReported()
        #expect(schedule.auditEnded(cost: .milliseconds(300)) == .schedule(after: .seconds(3)))
        schedule.auditStarts()
        #expect(schedule.auditEnded(cost: .milliseconds(5)) == .nothing)
        #expect(schedule.changeReported() == .schedule(after: SecretsAuditSchedule.gatheringDelay))
    }
}
