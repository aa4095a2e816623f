#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// An `HTTPClient` over URLSession.
///
/// On Apple platforms it uses `data(for:)` and `bytes(for:)`. On Linux it works around FoundationNetworking's
/// cancellation crash and deadlock (no URL cache, a completion-handler task in a checked continuation,
/// cancellation hopped off the cancelling thread) and streams through a data delegate, one session per stream.
/// Linux truncates timeouts to whole seconds and treats them as idle timeouts, so they are rounded up here.
public final class URLSessionHTTPClient: HTTPClient, @unchecked Sendable {
    // Immutable after init; URLSessionConfiguration is only copied, never mutated.
    private let configuration: URLSessionConfiguration
    private let session: URLSession

    /// A client over a private session built from `configuration`, with the URL cache turned off.
    public init(configuration: URLSessionConfiguration = .default) {
        let configuration = configuration.copy() as! URLSessionConfiguration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.configuration = configuration
        self.session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try Task.checkCancellation()
        let urlRequest = Self.urlRequest(for: request)
        do {
            #if canImport(FoundationNetworking)
            let (data, response) = try await dataTask(urlRequest)
            #else
            let (data, response) = try await session.data(for: urlRequest)
            #endif
            return Self.response(response, body: data)
        } catch {
            throw Self.map(error)
        }
    }

    public func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        var request = request
        if request.headers["Accept"] == nil { request.headers["Accept"] = "text/event-stream" }
        request.headers["Cache-Control"] = "no-cache"
        let urlRequest = Self.urlRequest(for: request)
        #if canImport(FoundationNetworking)
        return AsyncThrowingStream { continuation in
            let configuration = self.configuration.copy() as! URLSessionConfiguration
            let delegate = StreamingDelegate(continuation: continuation)
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            let task = TaskHandle(session.dataTask(with: urlRequest))
            continuation.onTermination = { _ in
                DispatchQueue.global().async {
                    task.task.cancel()
                    session.invalidateAndCancel()
                }
            }
            task.task.resume()
        }
        #else
        return AsyncThrowingStream { continuation in
            let reader = Task { [session] in
                do {
                    let (bytes, response) = try await session.bytes(for: urlRequest)
                    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                    guard status == 200 else {
                        var body = Data()
                        for try await byte in bytes.prefix(64 * 1024) { body.append(byte) }
                        throw HTTPClientError.unexpectedStatus(status, body: body)
                    }
                    var parser = SSEParser()
                    var line: [UInt8] = []
                    for try await byte in bytes {
                        line.append(byte)
                        guard byte == 0x0A || byte == 0x0D else { continue }
                        for event in parser.feed(line) { continuation.yield(event) }
                        line.removeAll(keepingCapacity: true)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: Self.map(error))
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
        #endif
    }

    #if canImport(FoundationNetworking)
    /// One data task per request behind a cancel box: on FoundationNetworking, the only shape that neither crashed nor
    /// hung under racing cancels.
    private func dataTask(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = CancelBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: HTTPClientError.network("no response"))
                    }
                }
                if handle.install(TaskHandle(task)) {
                    task.resume()
                } else {
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            // Never cancel synchronously on the cancelling thread: that path deadlocks in FoundationNetworking.
            if let task = handle.cancel() { DispatchQueue.global().async { task.task.cancel() } }
        }
    }
    #endif

    private static func urlRequest(for request: HTTPClientRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let timeout = request.timeout {
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            urlRequest.timeoutInterval = max(1, seconds.rounded(.up))
        }
        return urlRequest
    }

    private static func response(_ response: URLResponse, body: Data) -> HTTPClientResponse {
        guard let http = response as? HTTPURLResponse else { return HTTPClientResponse(status: 0, body: body) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String { headers[name] = "\(value)" }
        }
        return HTTPClientResponse(status: http.statusCode, headers: headers, body: body)
    }

    static func map(_ error: any Error) -> any Error {
        guard let urlError = error as? URLError else { return error }
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .timedOut: return HTTPClientError.timedOut
        default: return HTTPClientError.network(urlError.localizedDescription)
        }
    }
}

/// A URLSessionTask moved across threads; URLSessionTask is thread-safe but not marked Sendable everywhere.
private struct TaskHandle: @unchecked Sendable {
    let task: URLSessionTask
    init(_ task: URLSessionTask) { self.task = task }
}

/// Covers a cancel that comes before the task exists.
private final class CancelBox: Sendable {
    private let state = Locked<(task: TaskHandle?, cancelled: Bool)>((nil, false))

    /// Stores the task; false when cancellation already happened.
    func install(_ task: TaskHandle) -> Bool {
        state.withLock { s in
            if s.cancelled { return false }
            s.task = task
            return true
        }
    }

    /// Marks the box cancelled and returns the task to cancel, if there is one.
    func cancel() -> TaskHandle? {
        state.withLock { s in
            s.cancelled = true
            return s.task
        }
    }
}

#if canImport(FoundationNetworking)
/// Feeds each received chunk to an `SSEParser`; a non-200 answer's body is kept for the error.
private final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var parser = SSEParser()
        var status = 0
        var errorBody = Data()
    }

    private let continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
    private let state = Locked(State())

    init(continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation) {
        self.continuation = continuation
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        state.withLock { $0.status = status }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events = state.withLock { s -> [ServerSentEvent] in
            guard s.status == 200 else { s.errorBody.append(data); return [] }
            return s.parser.feed(data)
        }
        for event in events { continuation.yield(event) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (status, body) = state.withLock { ($0.status, $0.errorBody) }
        if let error {
            continuation.finish(throwing: URLSessionHTTPClient.map(error))
        } else if status != 200 {
            continuation.finish(throwing: HTTPClientError.unexpectedStatus(status, body: body))
        } else {
            continuation.finish()
        }
        // The session keeps its delegate alive until invalidated.
        session.finishTasksAndInvalidate()
    }
}
#endif
