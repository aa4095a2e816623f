public import EnRouteNotifications
import CCurl
import Foundation

/// One APNs request on one easy handle: built on the caller's thread, then owned by the engine thread.
final class APNsCurlTransfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    var respond: ((Result<APNsHTTPResponse, any Error>) -> Void)?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []
    private var finished = false

    enum Failure: Error, CustomStringConvertible {
        case curl(String)
        var description: String { if case .curl(let m) = self { m } else { "" } }
    }

    init(url: String, request: APNsHTTPRequest, caFile: String?, timeoutMillis: Int) throws {
        guard let easy = curl_easy_init() else { throw Failure.curl("curl_easy_init failed") }
        self.easy = easy
        let me = Unmanaged.passUnretained(self).toOpaque()
        enroute_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = url.withCString { enroute_curl_set_ptr(easy, CURLOPT_URL, $0) }
        // HTTP/2 over TLS (ALPN h2), waiting to multiplex onto the open connection rather than opening another.
        enroute_curl_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        enroute_curl_set_long(easy, CURLOPT_PIPEWAIT, 1)
        enroute_curl_set_long(easy, CURLOPT_TIMEOUT_MS, timeoutMillis)
        enroute_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, min(timeoutMillis, 10_000))
        if let caFile { _ = caFile.withCString { enroute_curl_set_ptr(easy, CURLOPT_CAINFO, $0) } }
        enroute_curl_set_write(easy, apnsWrite)
        enroute_curl_set_ptr(easy, CURLOPT_WRITEDATA, me)
        enroute_curl_set_header_fn(easy, apnsHeader)
        enroute_curl_set_ptr(easy, CURLOPT_HEADERDATA, me)
        enroute_curl_set_long(easy, CURLOPT_POST, 1)
        enroute_curl_set_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
        let payload = request.body.isEmpty ? [UInt8(0)] : request.body
        payload.withUnsafeBytes { _ = enroute_curl_set_ptr(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        var lines = request.headers.map { "\($0.0): \($0.1)" }
        lines += ["Content-Type: application/json", "Expect:", "Accept:"]
        for line in lines { headerList = curl_slist_append(headerList, line) }
        enroute_curl_set_ptr(easy, CURLOPT_HTTPHEADER, headerList)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
    }

    fileprivate func received(_ bytes: UnsafeRawBufferPointer) { body.append(contentsOf: bytes) }

    fileprivate func receivedHeader(_ line: String) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") { headers = [:]; return }
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        headers[trimmed[..<colon].lowercased()] = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    func complete(_ code: CURLcode) {
        guard code == CURLE_OK else { finish(.failure(Failure.curl(String(cString: curl_easy_strerror(code))))); return }
        var status = 0
        enroute_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &status)
        finish(.success(APNsHTTPResponse(status: status, headers: headers, body: body)))
    }

    func finish(_ result: Result<APNsHTTPResponse, any Error>) {
        guard !finished else { return }
        finished = true
        respond?(result)
        respond = nil
    }
}

private let apnsWrite: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, user in
    guard let user else { return 0 }
    let length = size * count
    if let data, length > 0 {
        Unmanaged<APNsCurlTransfer>.fromOpaque(user).takeUnretainedValue().received(UnsafeRawBufferPointer(start: data, count: length))
    }
    return length
}

private let apnsHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, user in
    guard let user else { return 0 }
    let length = size * count
    if let data, length > 0 {
        Unmanaged<APNsCurlTransfer>.fromOpaque(user).takeUnretainedValue()
            .receivedHeader(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self))
    }
    return length
}
