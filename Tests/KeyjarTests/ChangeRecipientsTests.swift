import Foundation
import KeyjarCore
import Testing

@testable import KeyjarConnection

/// Who in a process hears its client's changes, and whether keyjard must push them, without a
/// socket or keyjard.
struct ChangeRecipientsTests {
    /// Posts nothing: only who it is handed matters here.
    struct SilentPoster: NotificationPoster {
        func post(_ event: SequencedEvent, client: KeyjarClient?, _ targets: [NotificationTarget]) {}
        func postResynchronised(client: KeyjarClient?, _ targets: [NotificationTarget]) {}
    }

    final class Storage: Sendable {}

    @Test func eachKindOfRecipientWantsChangesUntilItIsGone() {
        var recipients = ChangeRecipients()
        #expect(!recipients.wantChanges)
        #expect(recipients.audience() == nil)

        let (_, continuation) = AsyncStream.makeStream(of: SequencedEvent.self)
        let id = UUID()
        recipients.addStream(continuation, id: id)
        #expect(recipients.wantChanges)
        #expect(recipients.audience()?.streams.count == 1)
        recipients.removeStream(id: id)
        #expect(!recipients.wantChanges)

        let active = ListenerSwitch()
        recipients.addCallback(KeyjarClient.Callback(active: active, body: { _ in }))
        #expect(recipients.wantChanges)
        #expect(recipients.removeCallback(switchedBy: ListenerSwitch()) == nil, "another listener's switch")
        #expect(recipients.removeCallback(switchedBy: active)?.active === active)
        #expect(!recipients.wantChanges)

        recipients.startPosting(with: SilentPoster())
        #expect(recipients.wantChanges && recipients.postsForClient)
        #expect(recipients.audience()?.postsForClient == true)
        recipients.stopPosting()
        #expect(!recipients.wantChanges && recipients.audience() == nil)
    }

    /// An observer makes keyjard push changes; they reach it through its storage, which is in
    /// the audience for as long as it exists.
    @Test func aStorageIsInTheAudienceWhileItExistsAndItsObserversMakeTheProcessListen() {
        var recipients = ChangeRecipients()
        var storage: Storage? = Storage()
        recipients.addTarget(storage!, kind: .cookies, poster: SilentPoster())
        #expect(!recipients.wantChanges, "a storage without observers does not need pushes")
        #expect(recipients.audience()?.targets.count == 1)
        recipients.observationBegan()
        #expect(recipients.wantChanges)
        recipients.observationEnded()
        #expect(!recipients.wantChanges)
        storage = nil
        #expect(recipients.audience() == nil, "a storage that is gone hears nothing")
    }
}
