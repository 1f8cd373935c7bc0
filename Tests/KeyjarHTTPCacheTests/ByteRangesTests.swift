import Foundation
import KeyjarHTTPCache
import Testing

/// RFC 9110 §14 (ranges) and RFC 9111 §3.3–§3.4, §4.3.5 (HEAD) for a cache, one rule at a time.
struct ByteRangesTests {
    static let epoch = HTTPCacheRulesTests.epoch

    static func stored(
        _ fields: [(String, String)],
        status: Int = 200,
        receivedAfter seconds: TimeInterval = 0
    ) -> StoredResponse {
        HTTPCacheRulesTests.stored(fields, status: status, receivedAfter: seconds)
    }

    // MARK: Range and Content-Range fields

    /// A range ending at the largest integer (a hostile Content-Range) merges without a trap.
    @Test func rangesEndingAtTheLargestIntegerMerge() {
        #expect(ByteRanges.merged([5...Int.max, 10...20, 0...3]) == [0...3, 5...Int.max])
        #expect(ByteRanges.merged([0...4, 5...Int.max]) == [0...Int.max])
    }

    @Test func rangeFieldsParseAsRFC9110Writes() {
        #expect(
            ByteRangeRequest("bytes=0-99, 200-, -50")?.ranges == [
                .closed(first: 0, last: 99), .from(first: 200), .suffix(length: 50),
            ]
        )
        #expect(ByteRangeRequest("BYTES = 5-5")?.ranges == [.closed(first: 5, last: 5)])
        // Ignored (nil): another unit, last before first, no range, signs, garbage.
        for invalid in ["items=0-1", "bytes=5-4", "bytes=", "bytes=-", "bytes=+1-2", "bytes=a-b", "0-1", "bytes=1"] {
            #expect(ByteRangeRequest(invalid) == nil, "\(invalid)")
        }
        // A position too large for an Int is as good as infinite, not an error.
        #expect(ByteRangeRequest("bytes=0-99999999999999999999999")?.ranges == [.closed(first: 0, last: .max)])
    }

    @Test func rangesResolveAgainstALength() {
        func resolve(_ field: String, _ length: Int) -> ByteRangeResolution? {
            ByteRangeRequest(field)?.resolved(length: length)
        }
        #expect(resolve("bytes=0-9", 100) == .satisfiable([0...9]))
        #expect(resolve("bytes=90-", 100) == .satisfiable([90...99]))
        #expect(resolve("bytes=-10", 100) == .satisfiable([90...99]))
        // Clipped to the end; a suffix longer than the whole is the whole.
        #expect(resolve("bytes=95-200", 100) == .satisfiable([95...99]))
        #expect(resolve("bytes=-500", 100) == .satisfiable([0...99]))
        // Overlapping and adjacent ranges merge; unsatisfiable members drop out.
        #expect(resolve("bytes=10-19, 0-9, 15-25, 500-", 100) == .satisfiable([0...25]))
        #expect(resolve("bytes=0-0, 50-50", 100) == .satisfiable([0...0, 50...50]))
        #expect(resolve("bytes=100-", 100) == .unsatisfiable)
        #expect(resolve("bytes=-0", 100) == .unsatisfiable)
        #expect(resolve("bytes=-5", 0) == .unsatisfiable)
    }

    @Test func contentRangeFieldsParseAndPrint() {
        #expect(ContentRange("bytes 0-99/1234") == ContentRange(range: 0...99, completeLength: 1234))
        #expect(ContentRange("bytes 0-99/*") == ContentRange(range: 0...99, completeLength: nil))
        #expect(ContentRange("bytes */1234") == ContentRange(range: nil, completeLength: 1234))
        for invalid in ["bytes */*", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes 0-1", "bytes -1-2/9"] {
            #expect(ContentRange(invalid) == nil, "\(invalid)")
        }
        #expect(ContentRange(range: 3...7, completeLength: 8).fieldValue == "bytes 3-7/8")
        #expect(ContentRange(range: nil, completeLength: 8).fieldValue == "bytes */8")
    }

    // MARK: A Range request answered from a complete stored response

    static func answer(
        _ request: [(String, String)],
        stored: StoredResponse = stored([("Content-Length", "100"), ("ETag", "\"v1\"")]),
        length: Int = 100,
        method: String = "GET"
    ) -> CachedRangeAnswer {
        ByteRanges.answer(method: method, requestHeaders: HTTPHeaderFields(request), stored: stored, bodyLength: length)
    }

    @Test func oneRangeIsA206WithContentRange() throws {
        guard case .partial(let range, let headers) = Self.answer([("Range", "bytes=10-19")]) else {
            Issue.record("not a 206")
            return
        }
        #expect(range == 10...19)
        #expect(headers["Content-Range"] == "bytes 10-19/100")
        #expect(headers["Content-Length"] == "10")
        #expect(headers["ETag"] == "\"v1\"")
    }

    @Test func whatIsNotOneRangeIsTheWholeResponseOrA416() {
        #expect(Self.answer([]) == .whole)
        #expect(Self.answer([("Range", "items=0-1")]) == .whole)
        #expect(Self.answer([("Range", "bytes=0-1")], method: "HEAD") == .whole)
        // Ranges that stay apart would need multipart/byteranges: the whole 200 (RFC 9110 §14.2).
        #expect(Self.answer([("Range", "bytes=0-1, 50-60")]) == .whole)
        // A stored 404 is the answer to any range of it.
        #expect(Self.answer([("Range", "bytes=0-1")], stored: Self.stored([], status: 404)) == .whole)
        guard case .unsatisfiable(let headers) = Self.answer([("Range", "bytes=100-")]) else {
            Issue.record("not a 416")
            return
        }
        #expect(headers["Content-Range"] == "bytes */100")
        #expect(headers["Content-Length"] == "0")
    }

    /// A decoded body, or one of another length than declared, is not what ranges count.
    @Test func aBodyThatIsNotTheRepresentationSendsTheRequestOn() {
        let coded = Self.stored([("Content-Encoding", "gzip"), ("Content-Length", "40")])
        #expect(Self.answer([("Range", "bytes=0-9")], stored: coded) == .forward)
        #expect(
            Self.answer([("Range", "bytes=0-9")], stored: Self.stored([("Content-Length", "99")]), length: 100)
                == .forward
        )
        // identity is no coding; no Content-Length at all is taken as the body's length.
        guard
            case .partial = Self.answer(
                [("Range", "bytes=0-9")],
                stored: Self.stored([("Content-Encoding", "identity")])
            )
        else {
            Issue.record("identity is not a coding")
            return
        }
    }

    @Test func ifRangeAppliesTheRangeOnlyToTheSameRepresentation() {
        func isPartial(_ ifRange: String, _ stored: StoredResponse) -> Bool {
            if case .partial = Self.answer([("Range", "bytes=0-9"), ("If-Range", ifRange)], stored: stored) {
                return true
            }
            return false
        }
        let tagged = Self.stored([("ETag", "\"v1\"")])
        #expect(isPartial("\"v1\"", tagged))
        #expect(!isPartial("\"v2\"", tagged))
        // Weak tags never match by strong comparison, on either side.
        #expect(!isPartial("W/\"v1\"", tagged))
        #expect(!isPartial("W/\"v1\"", Self.stored([("ETag", "W/\"v1\"")])))
        #expect(!isPartial("\"v1\"", Self.stored([("ETag", "W/\"v1\"")])))
        // A date: the stored Last-Modified exactly, and strong (a second or more before Date).
        let earlier = "Tue, 14 Nov 2023 22:00:00 GMT"
        let dated = Self.stored([("Last-Modified", earlier)])
        #expect(isPartial(earlier, dated))
        #expect(!isPartial("Tue, 14 Nov 2023 21:00:00 GMT", dated))
        #expect(
            !isPartial(HTTPCacheRulesTests.dateLine, Self.stored([("Last-Modified", HTTPCacheRulesTests.dateLine)]))
        )
    }

    /// A body still in a transfer coding would be stored without Transfer-Encoding (§3.1).
    @Test func aResponseWithATransferCodingIsNotStored() {
        func storable(_ coding: String) -> Bool {
            HTTPCacheRules.storability(
                method: "GET",
                requestHeaders: HTTPHeaderFields(),
                statusCode: 200,
                responseHeaders: HTTPHeaderFields([("Cache-Control", "max-age=60"), ("Transfer-Encoding", coding)])
            ) == .storable
        }
        #expect(storable("chunked") && storable("Chunked"))
        #expect(!storable("foo, chunked") && !storable("gzip, chunked"))
    }

    // MARK: HEAD (RFC 9111 §4, §4.3.5)

    @Test func aHeadIsAnsweredFromAStoredGetAndNeverValidated() {
        let fresh = Self.stored([("Cache-Control", "max-age=600"), ("ETag", "\"v\"")])
        #expect(HTTPCacheRulesTests.decide(fresh, at: 1, method: "HEAD") == .serve(age: 1))
        // Stale with a validator: a GET validates, a HEAD goes as it is (its 200 freshens).
        #expect(HTTPCacheRulesTests.decide(fresh, at: 1_000, method: "GET") != .load)
        #expect(HTTPCacheRulesTests.decide(fresh, at: 1_000, method: "HEAD") == .load)
        #expect(HTTPCacheRules.isAnsweredFromStore("HEAD") && !HTTPCacheRules.isCacheableMethod("HEAD"))
        #expect(!HTTPCacheRules.isAnsweredFromStore("POST"))
    }

    @Test func aHeadResponseFreshensOnlyWhenItsValidatorsMatch() throws {
        let stored = Self.stored([
            ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Content-Length", "100"), ("X-Old", "1"),
        ])
        let later = Self.epoch.addingTimeInterval(500)
        func freshen(
            _ fields: [(String, String)],
            status: Int = 200,
            stored: StoredResponse? = stored
        )
            -> HeadFreshening
        {
            HTTPCacheRules.freshening(
                stored,
                byHeadStatus: status,
                headers: HTTPHeaderFields(fields),
                requestHeaders: HTTPHeaderFields(),
                requestTime: later,
                responseTime: later
            )
        }
        guard
            case .update(let updated) = freshen([
                ("Cache-Control", "max-age=600"), ("ETag", "\"v1\""), ("Content-Length", "100"), ("X-New", "2"),
            ])
        else {
            Issue.record("a matching HEAD did not update")
            return
        }
        #expect(updated.headers["Cache-Control"] == "max-age=600" && updated.headers["X-New"] == "2")
        #expect(updated.headers["X-Old"] == "1" && updated.responseTime == later)
        #expect(CacheFreshness(of: updated, at: later.addingTimeInterval(1)).isFresh)
        // Another tag, another length, no validator at all: stale (removed).
        #expect(freshen([("ETag", "\"v2\"")]) == .invalidate)
        #expect(freshen([("ETag", "\"v1\""), ("Content-Length", "99")]) == .invalidate)
        #expect(freshen([("Cache-Control", "max-age=600")]) == .invalidate)
        // Last-Modified alone, equal: an update.
        let dated = Self.stored([("Last-Modified", "Tue, 14 Nov 2023 22:00:00 GMT")])
        guard case .update = freshen([("Last-Modified", "Tue, 14 Nov 2023 22:00:00 GMT")], stored: dated) else {
            Issue.record("an equal Last-Modified did not update")
            return
        }
        // Not a 200, or nothing stored: nothing.
        #expect(freshen([("ETag", "\"v2\"")], status: 404) == .none)
        #expect(freshen([("ETag", "\"v1\"")], stored: nil) == .none)
    }

    // MARK: Combining partial responses (RFC 9111 §3.4)

    static func piece(_ range: String, tag: String = "\"v1\"", at seconds: TimeInterval) throws -> StoredPiece {
        try #require(
            StoredPiece(
                stored(
                    [("ETag", tag), ("Content-Range", range), ("X-At", String(Int(seconds)))],
                    status: 206,
                    receivedAfter: seconds
                )
            )
        )
    }

    @Test func piecesAreReadFromTheirResponses() throws {
        #expect(try Self.piece("bytes 10-19/100", at: 0).range == 10...19)
        #expect(StoredPiece(Self.stored([("Content-Length", "5")]))?.range == 0...4)
        #expect(StoredPiece(Self.stored([("Content-Range", "bytes */100")], status: 206)) == nil)
        #expect(StoredPiece(Self.stored([("Content-Length", "5")], status: 404)) == nil)
    }

    @Test func piecesWithTheSameStrongTagCoveringAllCombineIntoA200() throws {
        let pieces = [
            try Self.piece("bytes 0-59/100", at: 0),
            try Self.piece("bytes 40-99/100", at: 10),
        ]
        guard case .complete(let headers, let segments) = ByteRanges.combine(pieces) else {
            Issue.record("not combined")
            return
        }
        // The newest piece's fields, as a whole response; its bytes where the pieces overlap.
        #expect(headers["X-At"] == "10" && headers["Content-Range"] == nil && headers["Content-Length"] == "100")
        #expect(
            segments == [
                PieceSegment(piece: 0, range: 0...39, offset: 0),
                PieceSegment(piece: 1, range: 40...99, offset: 0),
            ]
        )
        // A hole leaves it partial.
        #expect(
            ByteRanges.combine([try Self.piece("bytes 0-9/100", at: 0), try Self.piece("bytes 20-99/100", at: 1)])
                == .partial([0...9, 20...99])
        )
        // Adjacent pieces, the older one in the middle of newer ones.
        guard
            case .complete(_, let three) = ByteRanges.combine([
                try Self.piece("bytes 0-99/100", at: 0),
                try Self.piece("bytes 10-19/100", at: 5),
                try Self.piece("bytes 50-99/100", at: 9),
            ])
        else {
            Issue.record("not combined")
            return
        }
        #expect(
            three == [
                PieceSegment(piece: 0, range: 0...9, offset: 0),
                PieceSegment(piece: 1, range: 10...19, offset: 0),
                PieceSegment(piece: 0, range: 20...49, offset: 20),
                PieceSegment(piece: 2, range: 50...99, offset: 0),
            ]
        )
    }

    @Test func piecesOfAnotherRepresentationAreNotCombined() throws {
        #expect(
            ByteRanges.combine([
                try Self.piece("bytes 0-49/100", at: 0), try Self.piece("bytes 50-99/100", tag: "\"v2\"", at: 1),
            ])
                == .mismatch
        )
        // Weak tags are not strong validators (§3.4).
        #expect(
            ByteRanges.combine([
                try Self.piece("bytes 0-49/100", tag: "W/\"v1\"", at: 0),
                try Self.piece("bytes 50-99/100", tag: "W/\"v1\"", at: 1),
            ]) == .mismatch
        )
        // Two complete lengths are two representations.
        #expect(
            ByteRanges.combine([try Self.piece("bytes 0-49/100", at: 0), try Self.piece("bytes 50-99/101", at: 1)])
                == .mismatch
        )
    }

    @Test func touchingOrOverlappingPiecesCombineIntoOnePiece() throws {
        // Overlapping, the newer in the middle: its bytes there, the older piece's around them.
        let pieces = [try Self.piece("bytes 10-59/100", at: 0), try Self.piece("bytes 30-69/100", at: 5)]
        guard case .piece(let range, let headers, let segments) = ByteRanges.combine(pieces) else {
            Issue.record("not one piece: \(ByteRanges.combine(pieces))")
            return
        }
        #expect(range == 10...69)
        #expect(headers["Content-Range"] == "bytes 10-69/100" && headers["Content-Length"] == "60")
        #expect(headers["X-At"] == "5")
        #expect(
            segments == [
                PieceSegment(piece: 0, range: 10...29, offset: 0),
                PieceSegment(piece: 1, range: 30...69, offset: 0),
            ]
        )
        // Touching, the newer one first.
        let touching = [try Self.piece("bytes 50-59/100", at: 0), try Self.piece("bytes 20-49/100", at: 1)]
        guard case .piece(let joined, _, let two) = ByteRanges.combine(touching) else {
            Issue.record("not one piece")
            return
        }
        #expect(joined == 20...59)
        #expect(
            two == [
                PieceSegment(piece: 1, range: 20...49, offset: 0),
                PieceSegment(piece: 0, range: 50...59, offset: 0),
            ]
        )
        // A newer piece inside an older one: the older one's bytes around it, from their offsets.
        let inside = [try Self.piece("bytes 0-49/100", at: 0), try Self.piece("bytes 10-19/100", at: 1)]
        guard case .piece(_, _, let three) = ByteRanges.combine(inside) else {
            Issue.record("not one piece")
            return
        }
        #expect(
            three == [
                PieceSegment(piece: 0, range: 0...9, offset: 0),
                PieceSegment(piece: 1, range: 10...19, offset: 0),
                PieceSegment(piece: 0, range: 20...49, offset: 20),
            ]
        )
    }

    @Test func onlySingleRangeStronglyTaggedUncodedPiecesAreStored() {
        func refusal(_ fields: [(String, String)]) -> String? {
            ByteRanges.pieceRefusal(responseHeaders: HTTPHeaderFields(fields))
        }
        #expect(refusal([("Content-Range", "bytes 0-9/100"), ("ETag", "\"v1\"")]) == nil)
        #expect(
            refusal([("Content-Range", "bytes 0-9/100"), ("ETag", "\"v1\""), ("Content-Encoding", "identity")]) == nil
        )
        #expect(refusal([("Content-Range", "bytes 0-9/*"), ("ETag", "\"v1\"")]) != nil)
        #expect(refusal([("Content-Range", "bytes 0-9/100"), ("ETag", "W/\"v1\"")]) != nil)
        #expect(refusal([("Content-Range", "bytes 0-9/100")]) != nil)
        #expect(refusal([("Content-Range", "bytes 0-9/100"), ("ETag", "\"v1\""), ("Content-Encoding", "gzip")]) != nil)
        #expect(refusal([("Content-Type", "multipart/byteranges; boundary=x"), ("ETag", "\"v1\"")]) != nil)
        #expect(
            refusal([("Content-Range", "bytes 0-9/100"), ("Content-Range", "bytes 20-29/100"), ("ETag", "\"v1\"")])
                != nil
        )
        // Storability follows it for a 206.
        func storable(_ fields: [(String, String)]) -> Bool {
            HTTPCacheRules.storability(
                method: "GET",
                requestHeaders: HTTPHeaderFields([("Range", "bytes=0-9")]),
                statusCode: 206,
                responseHeaders: HTTPHeaderFields(fields + [("Cache-Control", "max-age=600")])
            ) == .storable
        }
        #expect(storable([("Content-Range", "bytes 0-9/100"), ("ETag", "\"v1\"")]))
        #expect(!storable([("Content-Range", "bytes 0-9/100"), ("ETag", "W/\"v1\"")]))
    }

    @Test func aRangeWithinAPieceIsAnsweredFromIt() {
        let piece = Self.stored([("Content-Range", "bytes 10-59/100"), ("ETag", "\"v1\"")], status: 206)
        func answer(
            _ fields: [(String, String)],
            bodyLength: Int = 50,
            method: String = "GET"
        )
            -> (body: ClosedRange<Int>, headers: HTTPHeaderFields)?
        {
            ByteRanges.answer(
                fromPiece: piece,
                method: method,
                requestHeaders: HTTPHeaderFields(fields),
                bodyLength: bodyLength
            )
        }
        let within = answer([("Range", "bytes=20-29")])
        #expect(within?.body == 10...19)
        #expect(within?.headers["Content-Range"] == "bytes 20-29/100" && within?.headers["Content-Length"] == "10")
        #expect(answer([("Range", "bytes=10-59")])?.body == 0...49)
        // A suffix resolved against the complete length: 90-99 is not in the piece.
        #expect(answer([("Range", "bytes=-10")]) == nil)
        #expect(answer([("Range", "bytes=55-60")]) == nil)
        #expect(answer([("Range", "bytes=0-10")]) == nil)
        #expect(answer([("Range", "bytes=10-11, 20-21")]) == nil)
        #expect(answer([]) == nil)
        #expect(answer([("Range", "bytes=20-29")], method: "HEAD") == nil)
        // A body that is not the piece's range, an If-Range of another representation.
        #expect(answer([("Range", "bytes=20-29")], bodyLength: 49) == nil)
        #expect(answer([("Range", "bytes=20-29"), ("If-Range", "\"v2\"")]) == nil)
        #expect(answer([("Range", "bytes=20-29"), ("If-Range", "\"v1\"")])?.body == 10...19)
    }
}
