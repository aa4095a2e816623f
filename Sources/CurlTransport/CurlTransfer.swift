import CCurl
import HTTPTransport
import Foundation

/// One request on one easy handle. Built on the caller's thread, then owned by the engine thread.
final class CurlTransfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    /// Set on the engine thread when the transfer is added; called once there.
    var respond: ((Result<HTTPClientResponse, any Error>) -> Void)?
    /// Set before submission for a stream.
    var events: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation?
    /// Engine-thread state.
    var isCancelled = false
    private(set) var isDone = false
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var status = 0
    private var headers: [String: String] = [:]
    private var body = Data()
    private var parser = SSEParser()
    private var streamAccepted = false

    /// How a transfer reaches HTTP/2, when it should.
    enum HTTP2Mode {
        /// TLS with ALPN `h2`, waiting to multiplex onto an open connection rather than opening another.
        case alpn
    }

    /// Transport settings beyond the request itself.
    struct Options {
        var http2: HTTP2Mode?
        /// A PEM file of certificates to trust for TLS.
        var caFile: String?
        /// Gives up connecting after this long (the whole timeout when nil).
        var connectTimeout: Duration?
    }

    convenience init(request: HTTPClientRequest, streaming: Bool, timeout: Duration) throws {
        try self.init(
            url: request.url.absoluteString, method: request.method,
            headers: request.headers.map { ($0.key, $0.value) },
            body: request.body, streaming: streaming, timeout: timeout, options: Options())
    }

    init(
        url: String, method: String, headers requestHeaders: [(String, String)], body requestBody: Data?,
        streaming: Bool,
        timeout: Duration, options: Options
    ) throws {
        guard let easy = curl_easy_init() else { throw HTTPClientError.network("curl_easy_init failed") }
        self.easy = easy
        let self_ = Unmanaged.passUnretained(self).toOpaque()
        enroute_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = url.withCString { enroute_curl_set_ptr(easy, CURLOPT_URL, $0) }
        enroute_curl_set_write(easy, curlWrite)
        enroute_curl_set_ptr(easy, CURLOPT_WRITEDATA, self_)
        enroute_curl_set_header_fn(easy, curlHeader)
        enroute_curl_set_ptr(easy, CURLOPT_HEADERDATA, self_)
        if options.http2 == .alpn {
            enroute_curl_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            enroute_curl_set_long(easy, CURLOPT_PIPEWAIT, 1)
        }
        if let caFile = options.caFile { _ = caFile.withCString { enroute_curl_set_ptr(easy, CURLOPT_CAINFO, $0) } }

        let millis = Self.millis(timeout)
        enroute_curl_set_long(
            easy, CURLOPT_CONNECTTIMEOUT_MS, min(millis, options.connectTimeout.map(Self.millis) ?? millis))
        if streaming {
            enroute_curl_set_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1)
            enroute_curl_set_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, (millis + 999) / 1000))
        } else {
            enroute_curl_set_long(easy, CURLOPT_TIMEOUT_MS, millis)
        }

        let method = method.uppercased()
        let body = requestBody ?? (["POST", "PUT", "PATCH"].contains(method) ? Data() : nil)
        switch method {
        case "GET" where body == nil: enroute_curl_set_long(easy, CURLOPT_HTTPGET, 1)
        case "HEAD": enroute_curl_set_long(easy, CURLOPT_NOBODY, 1)
        default: _ = method.withCString { enroute_curl_set_ptr(easy, CURLOPT_CUSTOMREQUEST, $0) }
        }
        // An empty value removes a header curl would add itself ("Accept:").
        var lines = requestHeaders.map { $0.1.isEmpty ? "\($0.0):" : "\($0.0): \($0.1)" }
        if let body {
            enroute_curl_set_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes { bytes in
                let empty: [UInt8] = [0]
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    enroute_curl_set_ptr(easy, CURLOPT_COPYPOSTFIELDS, base)
                } else {
                    empty.withUnsafeBytes { _ = enroute_curl_set_ptr(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
                }
            }
            // No 100-continue round trip, and no form content type unless the caller chose one.
            lines.append("Expect:")
            if !requestHeaders.contains(where: { $0.0.lowercased() == "content-type" }) {
                lines.append("Content-Type:")
            }
        }
        for line in lines { headerList = curl_slist_append(headerList, line) }
        if let headerList { enroute_curl_set_ptr(easy, CURLOPT_HTTPHEADER, headerList) }
    }

    private static func millis(_ duration: Duration) -> Int {
        max(1, Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000))
    }

    /// Makes the transfer open a new connection instead of reusing one. Engine thread, before it is added.
    func requireFreshConnection() { enroute_curl_set_long(easy, CURLOPT_FRESH_CONNECT, 1) }

    /// Connections curl opened for this transfer so far. Engine thread.
    var connectionsOpened: Int {
        var connects = 0
        enroute_curl_get_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        return connects
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
    }

    fileprivate func received(_ bytes: UnsafeRawBufferPointer) {
        guard let events else { body.append(contentsOf: bytes); return }
        if !streamAccepted {
            var code = 0
            enroute_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &code)
            streamAccepted = code == 200
        }
        if streamAccepted {
            for event in parser.feed(bytes) { events.yield(event) }
        } else {
            body.append(contentsOf: bytes)
        }
    }

    fileprivate func receivedHeader(_ line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") {
            headers = [:]
            status = trimmed.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        } else if let colon = trimmed.firstIndex(of: ":") {
            let name = trimmed[..<colon].lowercased()
            let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
    }

    /// curl finished the transfer with `code`.
    func complete(_ code: CURLcode) {
        guard code == CURLE_OK else {
            let error: HTTPClientError =
                code == CURLE_OPERATION_TIMEDOUT
                ? .timedOut : .network(String(cString: curl_easy_strerror(code)))
            fail(error)
            return
        }
        var code = 0
        enroute_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &code)
        if code != 0 { status = code }
        finish(.success(HTTPClientResponse(status: status, headers: headers, body: body)))
    }

    /// Fails the transfer once.
    func fail(_ error: any Error) { finish(.failure(error)) }

    private func finish(_ result: Result<HTTPClientResponse, any Error>) {
        guard !isDone else { return }
        isDone = true
        if let events {
            switch result {
            case .success(let response) where response.status == 200: events.finish()
            case .success(let response):
                events.finish(throwing: HTTPClientError.unexpectedStatus(response.status, body: response.body))
            case .failure(let error): events.finish(throwing: error)
            }
        } else {
            respond?(result)
            respond = nil
        }
    }
}

private let curlWrite: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let user else { return 0 }
    let length = size * count
    if let data, length > 0 {
        Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue().received(
            UnsafeRawBufferPointer(start: data, count: length))
    }
    return length
}

private let curlHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, user in
    guard let user else { return 0 }
    let length = size * count
    if let data, length > 0 {
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        Unmanaged<CurlTransfer>.fromOpaque(user).takeUnretainedValue().receivedHeader(line)
    }
    return length
}
