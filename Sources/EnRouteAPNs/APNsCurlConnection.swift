public import EnRouteNotifications
import CCurl
import Foundation
import Synchronization

/// One curl multi handle with HTTP/2 multiplexing, driven by its own thread: every request to one
/// APNs host shares one connection. Other threads hand requests over through a locked inbox.
final class APNsCurlConnection: @unchecked Sendable {
    private static let globalInit: Void = { _ = curl_global_init(3) }()  // CURL_GLOBAL_ALL

    private let baseURL: String
    private let caFile: String?
    private let timeoutMillis: Int
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex<(pending: [APNsCurlTransfer], cancelled: [ObjectIdentifier], stopping: Bool, fresh: Bool)>(([], [], false, false))
    private let opened = Atomic<Int>(0)
    /// Engine-thread only.
    private var active: [UnsafeMutableRawPointer: APNsCurlTransfer] = [:]

    init(baseURL: String, caFile: String?, timeout: Duration) {
        _ = Self.globalInit
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.caFile = caFile
        self.timeoutMillis = max(1000, Int(timeout.components.seconds) * 1000)
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
        enroute_curl_multi_set_long(multi, CURLMOPT_PIPELINING, 2)          // CURLPIPE_MULTIPLEX
        enroute_curl_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1)
        let thread = Thread { [self] in run() }
        thread.name = "enroute.apns"
        thread.start()
    }

    var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    func send(_ request: APNsHTTPRequest) async throws -> APNsHTTPResponse {
        try Task.checkCancellation()
        let transfer = try APNsCurlTransfer(url: baseURL + request.path, request: request, caFile: caFile, timeoutMillis: timeoutMillis)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.respond = { continuation.resume(with: $0) }
                inbox.withLock { $0.pending.append(transfer) }
                curl_multi_wakeup(multi)
            }
        } onCancel: {
            inbox.withLock { $0.cancelled.append(ObjectIdentifier(transfer)) }
            curl_multi_wakeup(multi)
        }
    }

    /// The next request opens a new connection.
    func reset() { inbox.withLock { $0.fresh = true } }

    func shutdown() {
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    private func run() {
        while true {
            let (pending, cancelled, stopping, fresh) = inbox.withLock { s in
                defer { s.pending.removeAll(); s.cancelled.removeAll(); s.fresh = false }
                return (s.pending, s.cancelled, s.stopping, s.fresh)
            }
            for transfer in pending {
                if fresh { enroute_curl_set_long(transfer.easy, CURLOPT_FRESH_CONNECT, 1) }
                active[transfer.easy] = transfer
                curl_multi_add_handle(multi, transfer.easy)
            }
            for id in cancelled {
                if let (easy, transfer) = active.first(where: { ObjectIdentifier($0.value) == id }) {
                    active[easy] = nil
                    curl_multi_remove_handle(multi, easy)
                    transfer.finish(.failure(CancellationError()))
                }
            }
            if stopping { break }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            collectFinished()
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for (easy, transfer) in active {
            curl_multi_remove_handle(multi, easy)
            transfer.finish(.failure(CancellationError()))
        }
        active.removeAll()
        curl_multi_cleanup(multi)
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = active.removeValue(forKey: easy) else { continue }
            let result = message.pointee.data.result
            var connects = 0
            enroute_curl_get_long(easy, CURLINFO_NUM_CONNECTS, &connects)
            if connects > 0 { opened.wrappingAdd(connects, ordering: .relaxed) }
            curl_multi_remove_handle(multi, easy)
            transfer.complete(result)
        }
    }
}
