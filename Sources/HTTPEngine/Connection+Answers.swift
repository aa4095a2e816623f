import Foundation
import Synchronization

extension Connection {
    // MARK: - Dispatch (loop thread)

    /// Answers `request` at once, or runs its route's handler.
    func dispatch(_ request: ReadRequest) {
        switch request.dispatch(draining: server.isDraining) {
        case .answer(let response, let context):
            answer(response, context)
        case .run(.sync(let handle), let request, let context):
            let now = loop.now
            state.withLock { $0.dispatchedSync(now: now) }
            answer(Router.run { try handle(request) }, context)
        case .run(.async(let handle), let request, let context):
            run(handle, request, context)
        }
    }

    /// Starts an async handler; it answers through `complete(serial:with:)`.
    private func run(
        _ handle: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse, _ request: HTTPRequest,
        _ context: AnswerContext
    ) {
        guard server.admit() else {
            answer(
                HTTPError.unavailable(retryAfterSeconds: 1, detail: "The server is busy; try again shortly.").response,
                context)
            return
        }
        let now = loop.now
        let serial = state.withLock { $0.dispatchedAsync(context, now: now) }
        let server = self.server
        let run: @Sendable () async -> Void = {
            let response: HTTPResponse
            do { response = try await handle(request) } catch { response = Router.answer(for: error) }
            server.dismiss()
            self.complete(serial: serial, with: response)
        }
        // The handler starts here, on the loop's thread, and moves to Swift's executor only when it first suspends:
        // one that answers without waiting (a read from memory, a refusal) is answered at once.
        let task: Task<Void, Never>
        if #available(macOS 26.0, iOS 26.0, *) {
            task = Task.immediate(operation: run)
        } else {
            task = Task(operation: run)
        }
        let (started, answered) = state.withLock { machine -> (Machine.Started, (After, Int)?) in
            let started = machine.handlerStarted(serial: serial, task: task)
            guard case .answer(let ready, let context, _) = started else { return (started, nil) }
            return (started, respond(ready, context, in: &machine, into: &loop.output))
        }
        switch started {
        case .gone, .running:
            break
        case .cancel:
            task.cancel()
        case .answer(_, let context, let cancel):
            if let (after, status) = answered { finish(after, status: status, context) }
            if cancel { task.cancel() }
        }
    }

    /// Answers now, from the loop.
    func answer(_ response: HTTPResponse, _ context: AnswerContext) {
        let (after, status) = state.withLock { respond(response, context, in: &$0, into: &loop.output) }
        finish(after, status: status, context)
    }

    // MARK: - Answers (any thread)

    /// The async handler's answer (or the deadline's): the first one for `serial` wins.
    func complete(serial: UInt64, with response: HTTPResponse) {
        let answered = state.withLock { machine -> (After, Int, AnswerContext, wake: Bool)? in
            guard case .answer(let context) = machine.handlerFinished(serial: serial, response: response) else {
                return nil
            }
            var buffer: [UInt8] = []
            let (after, status) = respond(response, context, in: &machine, into: &buffer)
            return (after, status, context, machine.takeWaitingInput())
        }
        guard let (after, status, context, wake) = answered else { return }
        finish(after, status: status, context)
        if wake { loop.post { [self] in drive() } }
    }

    /// The handler overran its deadline (or the server is stopping): answer `response` now, and cancel the handler.
    func timeOut(_ response: HTTPResponse) {
        guard let (serial, task) = state.withLock({ $0.handlerOverran() }) else { return }
        complete(serial: serial, with: response)
        task?.cancel()
    }

    /// True while a handler runs for this connection.
    var hasRequestInFlight: Bool { state.withLock { $0.hasRequestInFlight } }

    /// Writes `response`, under the lock. Returns what must follow once the lock is let go, and the status sent.
    func respond(
        _ response: HTTPResponse, _ context: AnswerContext, in machine: inout Machine, into buffer: inout [UInt8]
    ) -> (After, Int) {
        let draining = server.isDraining
        guard
            let (then, status) = machine.answer(
                response, context, draining: draining, date: loop.dates.current, into: &buffer)
        else { return (.none, response.status) }
        _ = write(buffer, in: &machine)
        switch then {
        case .next:
            machine.keptAlive(now: server.elapsed())
            return (.none, status)
        case .close:
            finishWrites(in: &machine)
            return (.none, status)
        case .stream(let stream, let chunked, let keepAlive):
            let sink = StreamSink(connection: self, chunked: chunked, keepAlive: keepAlive)
            machine.streamStarted(sink, chunked: chunked, keepAlive: keepAlive)
            return (.stream(sink, stream), status)
        case .upgrade(let session):
            let (messages, continuation) = AsyncStream<WebSocketMessage>.makeStream(
                bufferingPolicy: .bufferingNewest(1024))
            let socket = UpgradedSocket(
                connection: self, configuration: server.configuration, clock: server.clock, continuation: continuation)
            machine.upgraded(socket)
            return (.webSocket(socket, session, messages), status)
        }
    }

    /// Counts the answer and starts what follows it; no lock held.
    func finish(_ after: After, status: Int, _ context: AnswerContext) {
        server.metrics.recordRequest(
            route: context.route, method: context.method, status: status,
            seconds: Self.seconds(since: context.started))
        switch after {
        case .none:
            break
        case .stream(let sink, let stream):
            server.streamOpened(sink)
            sink.start(producer: stream.start(sink: sink, retryMilliseconds: server.configuration.sseRetryMilliseconds))
            if server.isDraining { sink.finish() }
        case .webSocket(let socket, let session, let messages):
            server.webSocketOpened(socket, session: session, messages: messages)
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
