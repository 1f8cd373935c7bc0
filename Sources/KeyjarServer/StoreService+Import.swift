import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import NIOCore
import NIOPosix

extension StoreService {
    /// How long one chunk of an import may hold the event loop. Other clients' requests are
    /// served between two chunks, so an import of any size holds them up by about this much,
    /// never by the whole file; each chunk's size is set from how fast the last one went, so
    /// that the work per chunk (a transaction, an event, the jar's limits) is not paid more
    /// often than this needs (docs/performance.md, Imports).
    static let importChunkBudgetNanoseconds: UInt64 = 2_000_000
    /// The first chunk's size, and the smallest of the later ones (the largest is
    /// ``ServerConfiguration/largestImportChunk``).
    static let importChunkSizes = (first: 256, smallest: 32)

    /// Imports a cookie file (or one batch of it): parsed on the thread pool, then applied to
    /// the jar and committed in chunks, each its own transaction and event, with the other
    /// clients' requests in between (with nobody else connected, in one go).
    ///
    /// A file that could take the jar past a limit is first tried on a copy of the jar, off the
    /// loop: the trial gives the reply (what the file came to, as one import would) and the
    /// net change to make. Imported chunk by chunk as they are in the file, a later chunk's
    /// limits would evict most of what an earlier one wrote, each cookie written twice for
    /// nothing (a file far larger than the jar). The net change is applied as it is while no
    /// other write came in between; after one, the cookies the trial kept go through the jar's
    /// own rules instead, so that no decision made on a stale copy undoes another client's write.
    ///
    /// Each chunk is in the jar only once it is on disk, as for every write; a failure part-way
    /// leaves the chunks before it imported, and the reply is that failure.
    ///
    /// A file imported in batches as one (``ImportSession``) goes through ``importBatch(_:format:firstLine:origin:)``
    /// and ``finishImport(origin:)`` instead.
    func importCookies(
        _ text: String,
        format: CookieFileFormat,
        firstLine: Int?,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        switch state.imports.step(firstLine: firstLine, on: origin.value.id) {
        case .whole: return importWhole(text, format: format, firstLine: firstLine, origin: origin)
        case .batch: return importBatch(text, format: format, firstLine: firstLine, origin: origin)
        }
    }

    /// Opens a planned import on the connection (``Request/beginImport``), dropping one left open.
    func beginImport(origin: NIOLoopBound<ServedClient>) -> EventLoopFuture<Response> {
        let state = self.state
        do {
            try state.imports.begin(on: origin.value.id, generation: state.jarGeneration) {
                CookieImportPlan(jar: state.jar)
            }
        } catch {
            return eventLoop.makeFailedFuture(error.wireError)
        }
        return eventLoop.makeSucceededFuture(
            .importReport(imported: 0, expired: 0, problems: [], sequence: nil, added: 0, replaced: 0, evicted: 0)
        )
    }

    /// Tries the next batch of a planned import on its trial jar, off the loop; nothing is
    /// committed. The reply says what the batch held.
    private func importBatch(
        _ text: String,
        format: CookieFileFormat,
        firstLine: Int?,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        let id = origin.value.id
        let plan: CookieImportPlan
        let generation: UInt64
        do {
            (plan, generation) = try state.imports.takeForBatch(on: id)
        } catch {
            return eventLoop.makeFailedFuture(error.wireError)
        }
        // The plan travels with the work, its only owner, so that its trial jar is changed in
        // place rather than copied on write.
        let carried = PlanCarrier(consume plan)
        let service = NIOLoopBound(self, eventLoop: eventLoop)
        return threadPool.runIfActive(eventLoop: eventLoop) { () -> (CookieImportPlan, CookieImportReport) in
            var plan = carried.take()
            let parsed = Self.parse(text, format: format, firstLine: firstLine)
            let report = plan.add(parsed.cookies, problems: parsed.problems)
            return (plan, report)
        }.map { (plan: CookieImportPlan, report: CookieImportReport) -> Response in
            // A connection that closed meanwhile has no import any more.
            service.value.state.imports.batchTried(on: id, plan: plan, generation: generation)
            return .importReport(
                imported: report.imported,
                expired: report.expired,
                problems: report.problems,
                sequence: nil,
                added: 0,
                replaced: 0,
                evicted: 0
            )
        }.flatMapErrorThrowing { error in
            service.value.state.imports.end(on: id)
            throw error
        }
    }

    /// Hands a plan to the thread that tries a batch with no other reference left behind.
    private final class PlanCarrier: @unchecked Sendable {
        // @unchecked: set on the loop before the work is submitted, taken once by that work.
        private var plan: CookieImportPlan?

        init(_ plan: consuming CookieImportPlan) { self.plan = plan }

        func take() -> CookieImportPlan {
            guard let taken = plan.take() else { preconditionFailure("a plan is taken once") }
            return taken
        }
    }

    /// Applies a planned import's net change in chunks, as ``importWhole(_:format:firstLine:origin:)``
    /// applies a trial's; the reply gives what the whole file came to.
    func finishImport(origin: NIOLoopBound<ServedClient>) -> EventLoopFuture<Response> {
        do {
            let ended = try state.imports.finish(on: origin.value.id)
            return finish(ended.plan, generation: ended.generation, origin: origin)
        } catch {
            return eventLoop.makeFailedFuture(error.wireError)
        }
    }

    private func finish(
        _ plan: CookieImportPlan,
        generation: UInt64,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        var outcome = plan.outcome
        let changes = outcome.changes
        outcome.changes = []
        var progress = ImportProgress(
            plan: .changes(changes),
            report: outcome,
            countsChunks: false,
            generation: generation
        )
        if state.clients.count <= 1 { progress.chunkSize = .max }
        return importChunks(progress, origin: origin)
    }

    /// A cookie file, or one batch of it numbered as in the whole file.
    private static func parse(
        _ text: String,
        format: CookieFileFormat,
        firstLine: Int?
    ) -> (cookies: [NumberedCookie], problems: [CookieFileProblem]) {
        var parsed = format == .netscape ? NetscapeCookieFile.parse(text) : CookieJSONFile.parse(Data(text.utf8))
        if let offset = firstLine.map({ $0 - 1 }), offset > 0 {
            for index in parsed.cookies.indices { parsed.cookies[index].line += offset }
            for index in parsed.problems.indices { parsed.problems[index].line += offset }
        }
        return parsed
    }

    /// A whole file, or a batch of its own.
    private func importWhole(
        _ text: String,
        format: CookieFileFormat,
        firstLine: Int?,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        let jar = state.jar
        let generation = state.jarGeneration
        // With nobody else connected there is nobody to let in between chunks: the file is
        // applied at once, as one transaction (no trial, no chunks to pay for).
        let othersConnected = state.clients.count > 1
        return threadPool.runIfActive(eventLoop: eventLoop) {
            let parsed = Self.parse(text, format: format, firstLine: firstLine)
            var trial = jar
            guard othersConnected, Self.mayEvict(parsed.cookies, from: &trial) else {
                var report = CookieImportReport()
                report.problems = parsed.problems
                var progress = ImportProgress(
                    plan: .entries(parsed.cookies),
                    report: report,
                    countsChunks: true,
                    generation: nil
                )
                if !othersConnected { progress.chunkSize = .max }
                return progress
            }
            var report = trial.importCookies(parsed.cookies, problems: parsed.problems)
            let changes = report.changes
            report.changes = []
            return ImportProgress(plan: .changes(changes), report: report, countsChunks: false, generation: generation)
        }.flatMap { progress in
            self.importChunks(progress, origin: origin)
        }
    }

    /// Whether importing `entries` could take the jar past its total, a site's limit or a
    /// site's limits in a partition (counting every entry as new: a "may").
    private static func mayEvict(_ entries: [NumberedCookie], from jar: inout CookieJar) -> Bool {
        if jar.count + entries.count > jar.limits.total { return true }
        var perSite: [String: Int] = [:]
        var perPartition: [PartitionScope: (count: Int, bytes: Int)] = [:]
        for entry in entries {
            let site = jar.siteKey(for: entry.cookie.domain)
            if let partition = entry.cookie.partitionKey {
                let bytes = entry.cookie.name.utf8.count + entry.cookie.value.utf8.count
                perPartition[PartitionScope(site: site, partition: partition), default: (0, 0)].count += 1
                perPartition[PartitionScope(site: site, partition: partition), default: (0, 0)].bytes += bytes
            } else {
                perSite[site, default: 0] += 1
            }
        }
        if perSite.contains(where: { site, count in count + jar.cookieCount(forSiteOf: site) > jar.limits.perSite }) {
            return true
        }
        return perPartition.contains { scope, added in
            let stored = jar.partitionUsage(forSiteOf: scope.site, in: scope.partition)
            return added.count + stored.count > jar.limits.perSiteInPartition
                || added.bytes + stored.bytes > jar.limits.bytesPerSiteInPartition
        }
    }

    private struct PartitionScope: Hashable {
        var site: String
        var partition: CookiePartitionKey
    }

    /// An import under way: what is left to apply, and what the file came to.
    struct ImportProgress: Sendable {
        enum Plan: Sendable {
            /// Cookies of the file, through the jar's rules.
            case entries([NumberedCookie])
            /// A trial's net change, applied as it is.
            case changes([CookieChange])
        }

        var plan: Plan
        var report: CookieImportReport
        /// Whether the reply adds up the chunks (no trial) or is the trial's.
        let countsChunks: Bool
        /// The jar's generation the plan was made for (``StoreService/State/jarGeneration``).
        var generation: UInt64?
        var next = 0
        var chunkSize = StoreService.importChunkSizes.first
        var sequence: UInt64?

        init(plan: Plan, report: CookieImportReport, countsChunks: Bool, generation: UInt64?) {
            self.plan = plan
            self.report = report
            self.countsChunks = countsChunks
            self.generation = generation
        }

        var isDone: Bool {
            switch plan {
            case .entries(let entries): next >= entries.count
            case .changes(let changes): next >= changes.count
            }
        }

        var response: Response {
            .importReport(
                imported: report.imported,
                expired: report.expired,
                problems: report.problems.sorted { $0.line < $1.line },
                sequence: sequence,
                added: report.added,
                replaced: report.replaced,
                evicted: report.evicted
            )
        }
    }

    /// Applies and commits the next chunk, then yields the loop before the one after.
    private func importChunks(
        _ progress: ImportProgress,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        var progress = progress
        let started = NIODeadline.now().uptimeNanoseconds
        let changes: [CookieChange]
        switch progress.plan {
        case .changes(let planned) where state.jarGeneration == progress.generation:
            let end = progress.next + min(progress.chunkSize, planned.count - progress.next)
            changes = Array(planned[progress.next..<end])
            for change in changes {
                switch change {
                case .added(let cookie), .replaced(_, let cookie): state.jar.restore(cookie)
                case .removed(let cookie, _): _ = state.jar.remove(cookie.identity)
                }
            }
            progress.next = end
        case .changes(let planned):
            // Another write came in since the trial: what it kept goes through the jar's rules.
            let kept = planned[progress.next...].compactMap { change -> NumberedCookie? in
                switch change {
                case .added(let cookie), .replaced(_, let cookie): NumberedCookie(line: 0, cookie: cookie)
                case .removed: nil
                }
            }
            progress.plan = .entries(kept)
            progress.next = 0
            return importChunks(progress, origin: origin)
        case .entries(let entries):
            let end = progress.next + min(progress.chunkSize, entries.count - progress.next)
            let part = state.jar.importCookies(Array(entries[progress.next..<end]))
            progress.next = end
            if progress.countsChunks {
                progress.report.imported += part.imported
                progress.report.expired += part.expired
                progress.report.added += part.added
                progress.report.replaced += part.replaced
                progress.report.evicted += part.evicted
            }
            // A cookie a trial kept may still be refused when another client changed the
            // policy meanwhile.
            progress.report.problems += part.problems
            changes = part.changes
        }
        do {
            if let sequence = try commitCookies(changes, origin: origin.value) { progress.sequence = sequence }
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        progress.generation = state.jarGeneration
        guard !progress.isDone else { return eventLoop.makeSucceededFuture(progress.response) }
        let took = max(NIODeadline.now().uptimeNanoseconds - started, 1)
        let sizes = Self.importChunkSizes
        let fitting = Double(progress.chunkSize) * Double(Self.importChunkBudgetNanoseconds) / Double(took)
        // Grows at most fourfold a step: one fast chunk (nothing to evict yet) is no promise.
        // Alone again (the others left), the rest goes at once.
        progress.chunkSize =
            state.clients.count > 1
            ? max(sizes.smallest, min(configuration.largestImportChunk, 4 * progress.chunkSize, Int(fitting)))
            : Int.max
        // Scheduled a moment later rather than submitted: the loop runs every submitted task
        // before it looks at its sockets again, so a chain of them would hold every other
        // client up until the import ended.
        let service = NIOLoopBound(self, eventLoop: eventLoop)
        let remaining = progress
        return eventLoop.flatScheduleTask(in: TimeAmount(configuration.importChunkPause)) {
            service.value.importChunks(remaining, origin: origin)
        }.futureResult
    }
}
