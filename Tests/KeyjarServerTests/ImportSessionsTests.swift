import KeyjarCore
import KeyjarProtocol
import Testing

@testable import KeyjarServer

/// The imports open on keyjard's connections, without a socket: which request each is ready
/// for, what one it is not ready for is told, and that a connection's end drops its import.
struct ImportSessionsTests {
    static func plan() -> CookieImportPlan { CookieImportPlan(jar: CookieJar()) }

    @Test func anImportTakesItsBatchesOneAtATimeThenEnds() throws {
        var imports = ImportSessions()
        #expect(imports.step(firstLine: 1, on: 7) == .whole)
        try imports.begin(on: 7, generation: 3, Self.plan)
        #expect(imports.step(firstLine: 1, on: 7) == .batch)
        #expect(imports.step(firstLine: nil, on: 7) == .whole)
        #expect(imports.step(firstLine: 1, on: 8) == .whole)

        let taken = try imports.takeForBatch(on: 7)
        #expect(taken.generation == 3)
        #expect(throws: ImportSessions.Refusal.batchStillBeingRead) { try imports.takeForBatch(on: 7) }
        imports.batchTried(on: 7, plan: taken.plan, generation: taken.generation)
        let again = try imports.takeForBatch(on: 7)
        imports.batchTried(on: 7, plan: again.plan, generation: again.generation)

        let ended = try imports.finish(on: 7)
        #expect(ended.generation == 3)
        #expect(imports.count == 0)
        #expect(throws: ImportSessions.Refusal.notBegun) { try imports.finish(on: 7) }
    }

    /// An end while the last batch is still being tried drops the import: the batch's result,
    /// when it comes, does not open it again.
    @Test func anEndDuringABatchDropsTheImport() throws {
        var imports = ImportSessions()
        try imports.begin(on: 7, generation: 0, Self.plan)
        let taken = try imports.takeForBatch(on: 7)
        #expect(throws: ImportSessions.Refusal.lastBatchStillBeingRead) { try imports.finish(on: 7) }
        imports.batchTried(on: 7, plan: taken.plan, generation: taken.generation)
        #expect(imports.count == 0)
        #expect(imports.step(firstLine: 1, on: 7) == .whole)
    }

    @Test func aClosedConnectionsImportIsNotOpenedAgainByItsBatch() throws {
        var imports = ImportSessions()
        try imports.begin(on: 7, generation: 0, Self.plan)
        let taken = try imports.takeForBatch(on: 7)
        imports.end(on: 7)
        imports.batchTried(on: 7, plan: taken.plan, generation: taken.generation)
        #expect(imports.count == 0)
        #expect(throws: ImportSessions.Refusal.notBegun) { try imports.finish(on: 7) }
    }

    /// At most ``ImportSession/maximumOpen`` at once; beginning again on a connection replaces
    /// its import, whatever the count.
    @Test func tooManyOpenImportsAreRefused() throws {
        var imports = ImportSessions()
        for id in 0..<UInt64(ImportSession.maximumOpen) { try imports.begin(on: id, generation: id, Self.plan) }
        #expect(throws: ImportSessions.Refusal.tooMany) {
            try imports.begin(on: 99, generation: 0, Self.plan)
        }
        try imports.begin(on: 0, generation: 42, Self.plan)
        let replaced = try imports.finish(on: 0)
        #expect(replaced.generation == 42)
        try imports.begin(on: 99, generation: 0, Self.plan)
        imports.endAll()
        #expect(imports.count == 0)
    }

    @Test func eachRefusalTellsTheClientWhy() {
        #expect(ImportSessions.Refusal.tooMany.wireError.code == WireError.overloaded)
        #expect(ImportSessions.Refusal.notBegun.wireError.message == "no import was begun on this connection")
        #expect(ImportSessions.Refusal.batchStillBeingRead.wireError.code == WireError.invalidArgument)
        #expect(ImportSessions.Refusal.lastBatchStillBeingRead.wireError.message.contains("last batch"))
    }
}
