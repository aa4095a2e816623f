import CCurl
import HTTPTransport
import Foundation
import Synchronization

/// One curl multi handle driven by one thread. Other threads hand transfers over through a locked inbox
/// and wake the thread with `curl_multi_wakeup`; every easy handle is touched only on this thread.
final class CurlMultiEngine: @unchecked Sendable {
    /// A reply handler travels with its transfer through the inbox and is set on the engine thread, so
    /// the transfer's reply state is only ever touched there.
    private enum Command {
        case add(CurlTransfer, respond: (@Sendable (Result<HTTPClientResponse, any Error>) -> Void)?)
        case cancel(CurlTransfer)
        /// The next transfer added opens a new connection.
        case freshConnection
    }

    private static let globalInit: Void = { _ = curl_global_init(3) }()  // CURL_GLOBAL_ALL

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex<(commands: [Command], stopping: Bool)>(([], false))
    private let opened = Atomic<Int>(0)
    /// Engine-thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var nextIsFresh = false

    /// An engine on its own thread named `name`. With `oneConnectionPerHost`, HTTP/2 transfers to one host
    /// multiplex onto a single connection (curl waits for it rather than opening a second).
    init(name: String = "enroute.curl", oneConnectionPerHost: Bool = false) {
        _ = Self.globalInit
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
        if oneConnectionPerHost {
            enroute_curl_multi_set_long(multi, CURLMOPT_PIPELINING, 2)  // CURLPIPE_MULTIPLEX
            enroute_curl_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1)
        }
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Connections opened by finished transfers so far.
    var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    /// The next transfer submitted after this call opens a new connection instead of reusing one.
    func requireFreshConnection() { post(.freshConnection) }

    /// Starts `transfer` on the engine thread; `respond` (for a request, not a stream) gets its result there.
    func submit(_ transfer: CurlTransfer, respond: (@Sendable (Result<HTTPClientResponse, any Error>) -> Void)? = nil) {
        post(.add(transfer, respond: respond))
    }

    /// Aborts `transfer` (before, during or after it runs) and fails it with `CancellationError`.
    func cancel(_ transfer: CurlTransfer) { post(.cancel(transfer)) }

    /// Fails every transfer and ends the thread.
    func shutdown() {
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    private func post(_ command: Command) {
        inbox.withLock { $0.commands.append(command) }
        curl_multi_wakeup(multi)
    }

    private func run() {
        while true {
            let (commands, stopping) = inbox.withLock { inbox in
                defer { inbox.commands.removeAll() }
                return (inbox.commands, inbox.stopping)
            }
            for command in commands {
                switch command {
                case .add(let transfer, let respond):
                    if let respond { transfer.respond = respond }
                    add(transfer)
                case .cancel(let transfer): abort(transfer)
                case .freshConnection: nextIsFresh = true
                }
            }
            if stopping { break }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            collectFinished()
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for transfer in Array(active.values) { abort(transfer) }
        curl_multi_cleanup(multi)
    }

    private func add(_ transfer: CurlTransfer) {
        if transfer.isDone { return }
        if transfer.isCancelled { transfer.fail(CancellationError()); return }
        if nextIsFresh {
            transfer.requireFreshConnection()
            nextIsFresh = false
        }
        active[transfer.easy] = transfer
        curl_multi_add_handle(multi, transfer.easy)
    }

    private func abort(_ transfer: CurlTransfer) {
        transfer.isCancelled = true
        guard active.removeValue(forKey: transfer.easy) != nil else { return }
        curl_multi_remove_handle(multi, transfer.easy)
        transfer.fail(CancellationError())
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result
            guard let transfer = active.removeValue(forKey: easy) else { continue }
            let connects = transfer.connectionsOpened
            if connects > 0 { opened.add(connects, ordering: .relaxed) }
            curl_multi_remove_handle(multi, easy)
            transfer.complete(result)
        }
    }
}
