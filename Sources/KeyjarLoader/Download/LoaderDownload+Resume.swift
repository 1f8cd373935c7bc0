public import Foundation
import FoundationNetworking
import KeyjarLocks

// Continuing partial data: the request from its end, the server's answer to it, the record
// that lets another download continue, and what `cancelProducingResumeData()` hands over.
extension LoaderDownload {
    /// Stops the download, keeping its partial data, and hands over what continues it (nil when
    /// it cannot be continued: then nothing is kept).
    public func cancelProducingResumeData() -> Data? {
        guard let cancellation = endForCancel() else { return nil }
        cancellation.connection?.cancel()
        guard let record = cancellation.record, let files = cancellation.files else {
            cancellation.files?.discard()
            return nil
        }
        files.keep()
        return record.encoded()
    }

    /// Opens the partial data a resumed download continues: the first byte to ask for (0: the
    /// whole entity), or nil once the download ended.
    func preparePartialData() -> Result<Int64, DownloadFileError>? {
        state.withLock { state in
            switch state.machine.prepareRequest() {
            case nil:
                return nil
            case .whole:
                return .success(0)
            case .continuing(let existing, let destination):
                let files =
                    existing ?? DownloadFiles(destination: destination.path, allowOverwrite: destination.allowOverwrite)
                do throws(DownloadFileError) {
                    try files.open(continuing: true)
                } catch {
                    return .failure(error)
                }
                state.machine.partialOpened(files, length: files.length)
                return .success(files.length)
            }
        }
    }

    /// The server cannot continue from the partial data's end: the whole entity is asked for.
    func startOver(after connection: LoaderConnection) {
        guard state.withLock({ $0.machine.startOver(after: connection) }) else { return }
        connection.cancel()
        connect()
    }

    /// A response to a request that continues partial data: whether the load goes on (a 206
    /// from the right byte of the same entity, or a 200 to save whole); otherwise this handles it.
    func continueResuming(
        _ response: HTTPURLResponse,
        from offset: Int64,
        on connection: LoaderConnection
    ) -> Bool {
        let (validator, expectedLength) = state.withLock {
            ($0.machine.record?.validator, $0.machine.record?.expectedLength)
        }
        switch response.statusCode {
        case 206:
            let tag = response.value(forHTTPHeaderField: "ETag")
            let sameEntity = tag == nil || validator?.hasPrefix("\"") != true || tag == validator
            guard Self.contentRange(response)?.first == offset, sameEntity else {
                startOver(after: connection)
                return false
            }
            decideDecoding(response)
            guard state.withLock({ $0.machine.resumeAccepted(on: connection) }) else { return false }
            tellDelegate { $0.download(self, willResumeWith: response, fromByte: offset) }
            return true
        case 416 where (Self.contentRange(response)?.length ?? expectedLength) == offset:
            // Everything had arrived already: what the server sends with its 416 is not saved.
            // (A 416 means If-Range matched: a changed entity would have come whole. Without
            // the `bytes */LENGTH` RFC 9110 asks for, as lighttpd sends it, the recorded length
            // tells.)
            state.withLock { $0.machine.entityAlreadyComplete(on: connection) }
            decideDecoding(response)
            tellDelegate { $0.download(self, willResumeWith: response, fromByte: offset) }
            return false
        case 416:
            startOver(after: connection)
            return false
        case 200:
            return true
        default:
            // An error page is not the entity: the partial data stays for another try. 400 or
            // more: the file is missing, the error a new download of it gets.
            connection.cancel()
            fail(
                LoaderError.make(
                    response.statusCode >= 400 ? .fileDoesNotExist : .badServerResponse,
                    "The server answered HTTP \(response.statusCode) to the request to continue the download; the data so far is kept",
                    url: response.url
                ),
                url: response.url
            )
            return false
        }
    }

    /// Writes (or removes) the record that lets the download be continued: only for a whole
    /// entity (a 200 to a request that asked for no range of its own) with a validator.
    func keepRecord(of response: URLResponse, on connection: LoaderConnection) -> DownloadFileError? {
        state.withLock { state -> DownloadFileError? in
            guard let files = state.machine.recordedFiles(on: connection) else { return nil }
            guard let http = response as? HTTPURLResponse, http.statusCode == 200,
                (request.httpMethod ?? "GET").uppercased() == "GET",
                request.value(forHTTPHeaderField: "Range") == nil,
                let url = request.url,
                let validator = DownloadResumeData.validator(of: http)
            else {
                state.machine.setRecord(nil)
                files.removeRecord()
                return nil
            }
            let record = DownloadResumeData(
                // A password in the URL stays out of the file: the resumed download's challenge
                // is answered as any other (credential storage, delegate).
                url: LoaderConnection.urlWithoutPassword(url),
                validator: validator,
                destinationPath: files.destination,
                allowOverwrite: files.allowOverwrite,
                expectedLength: response.expectedContentLength >= 0 ? response.expectedContentLength : nil
            )
            state.machine.setRecord(record)
            do throws(DownloadFileError) {
                try files.writeRecord(record)
                return nil
            } catch {
                return error
            }
        }
    }

    /// A 206's `Content-Range: bytes FIRST-LAST/LENGTH` (first and length), or a 416's
    /// `bytes */LENGTH` (first nil).
    static func contentRange(_ response: HTTPURLResponse?) -> (first: Int64?, length: Int64?)? {
        guard let value = response?.value(forHTTPHeaderField: "Content-Range") else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = trimmed.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let length = Int64(parts[1].trimmingCharacters(in: .whitespaces))
        let first = parts[0].split(separator: "-", maxSplits: 1).first
            .flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        return (first, length)
    }
}
