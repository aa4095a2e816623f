import CCurl
import ClientKit
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
    }

    private static let globalInit: Void = { _ = curl_global_init(3) }()  // CURL_GLOBAL_ALL

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex<(commands: [Command], stopping: Bool)>(([], false))
    /// Engine-thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    init() {
        _ = Self.globalInit
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
        let thread = Thread { [self] in run() }
        thread.name = "enroute.curl"
        thread.start()
    }

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
            curl_multi_remove_handle(multi, easy)
            transfer.complete(result)
        }
    }
}
