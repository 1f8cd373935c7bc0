import Foundation
import FoundationNetworking
import KeyjarLocks
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

/// A connection's line to its delegate, without a server or libcurl: order, the delegate's
/// queue, nothing after a cancellation or the end, questions and their fallbacks, and which
/// messages a challenge goes out by.
@Suite("Delegate channel")
struct DelegateChannelTests {
    /// Records what it is told, in order.
    class Recorder: LoaderConnectionDelegate, @unchecked Sendable {
        // @unchecked: the only stored state is the lock.
        let heard = Locked<[String]>([])
        func record(_ message: String) { heard.withLock { $0.append(message) } }
        var messages: [String] { heard.withLock { $0 } }
        func connectionDidFinishLoading(_ connection: LoaderConnection) { record("finished") }
        func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool {
            record("asked")
            return false
        }
    }

    final class Answering: Recorder, LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
        func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
            record("willSendRequestFor")
        }
    }

    final class Legacy: Recorder, LoaderConnectionLegacyAuthenticationDelegate, @unchecked Sendable {
        let accepts: Bool
        init(accepts: Bool) { self.accepts = accepts }
        func connection(_ connection: LoaderConnection, canAuthenticateAgainst space: URLProtectionSpace) -> Bool {
            record("canAuthenticateAgainst")
            return accepts
        }
        func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge) {
            record("didReceive challenge")
        }
    }

    /// Both kinds: the newer message wins, as in Apple's loader.
    final class Both: Recorder, LoaderConnectionAuthenticationDelegate, LoaderConnectionLegacyAuthenticationDelegate,
        LoaderConnectionBodyStreamDelegate, @unchecked Sendable
    {
        func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
            record("willSendRequestFor")
        }
        func connection(_ connection: LoaderConnection, canAuthenticateAgainst space: URLProtectionSpace) -> Bool {
            record("canAuthenticateAgainst")
            return true
        }
        func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge) {
            record("didReceive challenge")
        }
        func connection(_ connection: LoaderConnection, needNewBodyStream request: URLRequest) -> InputStream? { nil }
    }

    /// A challenge's sender that records default handling (the only answer these tests expect).
    final class Sender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
        let answers = Locked<[String]>([])
        func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
            answers.withLock { $0.append("use") }
        }
        func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {
            answers.withLock { $0.append("continue") }
        }
        func cancel(_ challenge: URLAuthenticationChallenge) { answers.withLock { $0.append("cancel") } }
        func performDefaultHandling(for challenge: URLAuthenticationChallenge) {
            answers.withLock { $0.append("default") }
        }
        func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {
            answers.withLock { $0.append("reject") }
        }
    }

    /// The connection a message names: made, never started (no transfer, no server).
    static func connection() -> LoaderConnection {
        URLLoader(configuration: .init()).connection(
            with: URLRequest(url: URL(string: "http://127.0.0.1:9/")!),
            delegate: nil,
            startImmediately: false
        )
    }

    static func challenge(_ sender: Sender) -> URLAuthenticationChallenge {
        URLAuthenticationChallenge(
            protectionSpace: URLProtectionSpace(
                host: "127.0.0.1",
                port: 9,
                protocol: "http",
                realm: "r",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            ),
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: nil,
            sender: sender
        )
    }

    let cancelled = Locked(false)

    func channel(_ delegate: Recorder?, queue: DispatchQueue? = nil) -> DelegateChannel {
        let cancelled = cancelled
        return DelegateChannel(delegate: delegate, queue: queue) { cancelled.withLock { $0 } }
    }

    @Test func messagesRunOnTheDelegatesQueueInOrderAndNoneAfterTheChannelCloses() {
        let queue = DispatchQueue(label: "delegate")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let recorder = Recorder()
        var channel = channel(recorder, queue: queue)
        #expect(channel.isOpen)
        queue.suspend()
        for number in 1...3 {
            channel.deliver { delegate in
                let onQueue = DispatchQueue.getSpecific(key: key) == true
                (delegate as! Recorder).record("\(number) \(onQueue ? "on" : "off") the queue")
            }
        }
        // Queued before the end, so still delivered; anything after it is not.
        channel.close()
        #expect(!channel.isOpen)
        channel.deliver { ($0 as! Recorder).record("after close") }
        #expect(recorder.messages.isEmpty)
        queue.resume()
        queue.sync {}
        #expect(recorder.messages == ["1 on the queue", "2 on the queue", "3 on the queue"])
    }

    @Test func aMessageQueuedBeforeACancellationIsDroppedUnlessItIsMeantForAfterIt() {
        let queue = DispatchQueue(label: "delegate")
        let recorder = Recorder()
        let channel = channel(recorder, queue: queue)
        queue.suspend()
        channel.deliver { ($0 as! Recorder).record("data") }
        channel.deliver(evenAfterCancel: true) { ($0 as! Recorder).record("didCancel") }
        cancelled.withLock { $0 = true }
        queue.resume()
        queue.sync {}
        #expect(recorder.messages == ["didCancel"])
    }

    /// Without a queue of the caller's the delegate is called right here, on the connection's
    /// serial work: no hop.
    @Test func withoutAQueueTheDelegateIsCalledAtOnce() {
        let recorder = Recorder()
        let channel = channel(recorder)
        channel.deliver { ($0 as! Recorder).record("now") }
        #expect(recorder.messages == ["now"])
        cancelled.withLock { $0 = true }
        channel.deliver { ($0 as! Recorder).record("after cancel") }
        channel.deliver(evenAfterCancel: true) { ($0 as! Recorder).record("didCancel") }
        #expect(recorder.messages == ["now", "didCancel"])
    }

    @Test(arguments: [false, true])
    func aQuestionIsAnsweredByTheDelegateElseByItsFallback(withQueue: Bool) {
        let recorder = Recorder()
        var channel = channel(recorder, queue: withQueue ? DispatchQueue(label: "delegate") : nil)
        let connection = Self.connection()
        #expect(channel.ask({ $0.connectionShouldUseCredentialStorage(connection) }, ifNoDelegate: true) == false)
        #expect(recorder.messages == ["asked"])
        cancelled.withLock { $0 = true }
        #expect(channel.ask({ $0.connectionShouldUseCredentialStorage(connection) }, ifNoDelegate: true) == true)
        cancelled.withLock { $0 = false }
        channel.close()
        #expect(channel.ask({ $0.connectionShouldUseCredentialStorage(connection) }, ifNoDelegate: true) == true)
        #expect(recorder.messages == ["asked"])
        #expect(self.channel(nil).ask({ _ in 1 }, ifNoDelegate: 2) == 2)
    }

    @Test func aChallengeGoesOutByTheNewestMessageTheDelegateHas() throws {
        let connection = Self.connection()
        let cases: [(Recorder?, [String], [String], Bool)] = [
            (Answering(), ["willSendRequestFor"], [], true),
            (Both(), ["willSendRequestFor"], [], true),
            (Legacy(accepts: true), ["canAuthenticateAgainst", "didReceive challenge"], [], true),
            // A refusal is the sender's default handling, after the question.
            (Legacy(accepts: false), ["canAuthenticateAgainst"], ["default"], true),
            // Neither: nothing is sent, the caller handles it by default.
            (Recorder(), [], [], false),
            (nil, [], [], false),
        ]
        for (delegate, heard, answers, presented) in cases {
            let sender = Sender()
            #expect(channel(delegate).present(Self.challenge(sender), to: connection) == presented)
            #expect(delegate?.messages ?? [] == heard, "\(String(describing: delegate))")
            #expect(sender.answers.withLock { $0 } == answers, "\(String(describing: delegate))")
        }
    }

    @Test func whatTheDelegateAdoptsDecidesTheLoadsRules() {
        let both = channel(Both())
        #expect(both.answersChallenges && both.legacyAuthentication != nil && both.bodyStreamSupplier != nil)
        let legacy = channel(Legacy(accepts: true))
        #expect(!legacy.answersChallenges && legacy.legacyAuthentication != nil && legacy.bodyStreamSupplier == nil)
        var plain = channel(Answering())
        #expect(plain.answersChallenges && plain.legacyAuthentication == nil && plain.bodyStreamSupplier == nil)
        plain.close()
        #expect(!plain.answersChallenges)
    }
}
