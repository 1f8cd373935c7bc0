import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import NIOCore
import NIOPosix

extension StoreService {
    /// Cookies of an import applied and committed per turn of the event loop. Other clients'
    /// requests are served between two such chunks, so an import of any size holds them up by
    /// one chunk at most (a few milliseconds: docs/performance.md), never by the whole file.
    static let importChunkSize = 256
    /// The pause between two chunks, in which the loop serves the other clients' sockets.
    static let importPause = TimeAmount.microseconds(20)

    /// Imports a cookie file (or one batch of it): parsed on the thread pool, then applied to
    /// the jar and committed in chunks, each its own transaction and event, with the other
    /// clients' requests in between. The reply, after the last chunk, adds the chunks up.
    ///
    /// Each chunk is in the jar only once it is on disk, as for every write; a failure part-way
    /// leaves the chunks before it imported, and the reply is that failure.
    func importCookies(
        _ text: String,
        format: CookieFileFormat,
        firstLine: Int?,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        threadPool.runIfActive(eventLoop: eventLoop) {
            var parsed = format == .netscape ? NetscapeCookieFile.parse(text) : CookieJSONFile.parse(Data(text.utf8))
            // A batch's lines are numbered as in the whole file.
            if let offset = firstLine.map({ $0 - 1 }), offset > 0 {
                for index in parsed.cookies.indices { parsed.cookies[index].line += offset }
                for index in parsed.problems.indices { parsed.problems[index].line += offset }
            }
            return ImportProgress(entries: parsed.cookies, problems: parsed.problems)
        }.flatMap { progress in
            self.importChunks(progress, origin: origin)
        }
    }

    /// An import under way: what is left to apply, and what the applied chunks came to.
    struct ImportProgress: Sendable {
        var entries: [NumberedCookie]
        var next = 0
        var report = CookieImportReport()
        var sequence: UInt64?

        init(entries: [NumberedCookie], problems: [CookieFileProblem]) {
            self.entries = entries
            report.problems = problems
        }

        var response: Response {
            .importReport(
                imported: report.imported,
                expired: report.expired,
                problems: report.problems.sorted { $0.line < $1.line },
                sequence: sequence
            )
        }
    }

    /// Applies and commits the next chunk, then yields the loop before the one after.
    private func importChunks(
        _ progress: ImportProgress,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        var progress = progress
        let end = min(progress.next + Self.importChunkSize, progress.entries.count)
        let part = state.jar.importCookies(Array(progress.entries[progress.next..<end]))
        progress.next = end
        progress.report.imported += part.imported
        progress.report.expired += part.expired
        progress.report.problems += part.problems
        do {
            if let sequence = try commitCookies(part.changes, origin: origin.value) { progress.sequence = sequence }
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        guard progress.next < progress.entries.count else { return eventLoop.makeSucceededFuture(progress.response) }
        // Scheduled a moment later rather than submitted: the loop runs every submitted task
        // before it looks at its sockets again, so a chain of them would hold every other
        // client up until the import ended.
        let service = NIOLoopBound(self, eventLoop: eventLoop)
        let remaining = progress
        return eventLoop.flatScheduleTask(in: Self.importPause) {
            service.value.importChunks(remaining, origin: origin)
        }.futureResult
    }
}
