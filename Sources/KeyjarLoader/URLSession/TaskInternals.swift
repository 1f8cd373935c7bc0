import Foundation
import FoundationNetworking
import KeyjarLocks

/// What swift-corelibs-foundation keeps inside a `URLSessionTask` and gives a `URLProtocol` no
/// public way to reach, read by reflection: the task's session (every delegate message names
/// it, and its configuration holds the additional headers) and an upload task's body (kept
/// beside the request, not in it: `request.httpBody` is nil for `uploadTask(with:from:)`).
///
/// The fields are found by name once and then read by position, which costs a microsecond or
/// two where walking the reflected fields costs tens. When a Foundation release renames them,
/// the lookups answer nil and the protocol fails the task saying so (URLProtocolTests fail
/// first).
enum TaskInternals {
    /// What an upload task sends, as Foundation keeps it.
    enum UploadBody {
        /// No body (`.none` in Foundation).
        case empty
        case data(Data)
        case file(URL)
        case stream(InputStream)
        /// `uploadTask(withStreamedRequest:)`: the delegate's `needNewBodyStream` gives it.
        case askDelegate
    }

    /// The session that made `task`.
    static func session(of task: URLSessionTask) -> URLSession? {
        guard let value = field("session", of: task) else { return nil }
        if let session = value as? URLSession { return session }
        // Declared as an implicitly unwrapped existential: reflected as an optional.
        return Mirror(reflecting: value).children.first?.value as? URLSession
    }

    /// An upload task's body; nil when it cannot be read.
    static func uploadBody(of task: URLSessionUploadTask) -> UploadBody? {
        guard let value = field("knownBody", of: task) else { return nil }
        let optional = Mirror(reflecting: value)
        guard optional.displayStyle == .optional else { return nil }
        guard let body = optional.children.first?.value else { return .askDelegate }
        let cases = Mirror(reflecting: body)
        guard cases.displayStyle == .enum else { return nil }
        guard let payload = cases.children.first else { return .empty }
        switch (payload.label, payload.value) {
        case ("data", let data as DispatchData): return .data(Data(contiguous: data))
        case ("file", let url as URL): return .file(url)
        case ("stream", let stream as InputStream): return .stream(stream)
        default: return nil
        }
    }

    /// The positions of the fields among `URLSessionTask`'s reflected children, by name.
    private static let positions = Locked<[String: Int]>([:])

    private static func field(_ name: String, of task: URLSessionTask) -> Any? {
        var mirror = Mirror(reflecting: task)
        while mirror.subjectType != URLSessionTask.self {
            guard let parent = mirror.superclassMirror else { return nil }
            mirror = parent
        }
        let children = mirror.children
        if let position = positions.withLock({ $0[name] }), position < children.count {
            let child = children[children.index(children.startIndex, offsetBy: position)]
            if child.label == name { return child.value }
        }
        for (position, child) in children.enumerated() where child.label == name {
            positions.withLock { $0[name] = position }
            return child.value
        }
        return nil
    }
}

extension Data {
    /// The bytes of a `DispatchData` in one copy (its `Sequence` initialiser goes byte by byte).
    fileprivate init(contiguous dispatchData: DispatchData) {
        self.init(count: dispatchData.count)
        withUnsafeMutableBytes { buffer in
            _ = dispatchData.copyBytes(to: buffer.bindMemory(to: UInt8.self))
        }
    }
}
