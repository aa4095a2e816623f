import Foundation
import Synchronization
import EnRouteLogging

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
            let id = server.configuration.requestIDs.id(given: request.headers["X-Request-Id"])
            var response = LogContext.$requestID.withValue(id) { Router.run { try handle(request) } }
            response.headers.set("X-Request-Id", id)
            answer(response, context)
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
        let id = server.configuration.requestIDs.id(given: request.headers["X-Request-Id"])
        let run: @Sendable () async -> Void = {
            var response: HTTPResponse
            do {
                response = try await LogContext.$requestID.withValue(id) { try await handle(request) }
            } catch {
                response = Router.answer(for: error)
            }
            response.headers.set("X-Request-Id", id)
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
        var cancel = false
        let answered = state.withLock { machine -> Answered? in
            switch machine.handlerStarted(serial: serial, task: task) {
            case .gone, .running:
                return nil
            case .cancel:
                cancel = true
                return nil
            case .answer(let ready, let context, let cancelRequested):
                cancel = cancelRequested
                return respond(ready, context, in: &machine, into: &loop.output)
            }
        }
        if let answered { finish(answered) }
        if cancel { task.cancel() }
    }

    /// Answers now, from the loop.
    func answer(_ response: HTTPResponse, _ context: AnswerContext) {
        finish(state.withLock { respond(response, context, in: &$0, into: &loop.output) })
    }

    // MARK: - Answers (any thread)

    /// The async handler's answer (or the deadline's): the first one for `serial` wins.
    func complete(serial: UInt64, with response: HTTPResponse) {
        var wake = false
        let answered = state.withLock { machine -> Answered? in
            guard case .answer(let context) = machine.handlerFinished(serial: serial, response: response) else {
                return nil
            }
            var buffer: [UInt8] = []
            let answered = respond(response, context, in: &machine, into: &buffer)
            wake = machine.takeWaitingInput()
            return answered
        }
        guard let answered else { return }
        finish(answered)
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
        _ response: HTTPResponse, _ context: AnswerContext, in machine: inout ConnectionStateMachine,
        into buffer: inout [UInt8]
    ) -> Answered {
        let draining = server.isDraining
        guard
            let encoded = machine.answer(
                response, context, draining: draining, date: loop.dates.current, into: &buffer)
        else { return Answered(after: .none, status: response.status, context: context) }
        _ = write(buffer, in: &machine)
        let after: After
        switch encoded.then {
        case .next:
            machine.keptAlive(now: server.elapsed())
            after = .none
        case .close:
            finishWrites(in: &machine)
            after = .none
        case .stream(let stream, let chunked, let keepAlive):
            let sink = StreamSink(connection: self, chunked: chunked, keepAlive: keepAlive)
            machine.streamStarted(sink, chunked: chunked, keepAlive: keepAlive)
            after = .stream(sink, stream)
        case .upgrade(let session):
            let (messages, continuation) = AsyncStream<WebSocketMessage>.makeStream(
                bufferingPolicy: .bufferingNewest(1024))
            let socket = UpgradedSocket(
                connection: self, configuration: server.configuration, clock: server.clock, continuation: continuation)
            machine.upgraded(socket)
            after = .webSocket(socket, session, messages)
        }
        return Answered(after: after, status: encoded.status, context: context)
    }

    /// Counts the answer and starts what follows it; no lock held.
    func finish(_ answered: Answered) {
        let context = answered.context
        server.metrics.recordRequest(
            route: context.route, method: context.method, status: answered.status,
            seconds: context.started.secondsElapsed)
        switch answered.after {
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
}
