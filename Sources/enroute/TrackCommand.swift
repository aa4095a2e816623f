import Foundation
import ClientKit
import HTTPTransport
import CurlTransport
import OrderTracking

/// `enroute track <order-id>`: the customer's tracking screen in a terminal, on the client kit.
enum TrackCommand {
    static let spec = CommandSpec(
        name: "track",
        synopsis: """
            Usage: enroute track <order-id> [--server URL] [--token T] [--events]

            Follows one delivery with the same store, polling engine and view model the iOS app uses, and
            redraws its screen in place: the steps, the ETA wording, the rider pin and its age, any banner,
            and "Offline" while the server cannot be reached. Ends when the order is delivered or cancelled.
            """,
        sections: [
            (
                nil,
                Terminal.serverOptions(role: "customer") + [
                    .flag("events", "Also follow the server's SSE stream for sub-second updates.")
                ]
            )
        ], positionals: 1,
        footer: """
            SIGUSR1 sends the tracker to the background (polling stops, as in a suspended app) and SIGUSR2
            brings it back to the foreground (it fetches at once).
            """)

    @MainActor
    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        guard let raw = options.positional.first else {
            throw CLIError("an order id is required (see `enroute track --help`)")
        }
        let (url, token) = try Terminal.server(options)
        let order = OrderID(raw)
        let clock = ContinuousClock()
        let repository = RemoteOrderTrackingRepository(
            http: CurlHTTPClient(), server: APIServer(baseURL: url, credentials: StaticAccessToken(token)),
            clock: clock)
        let store = OrderTrackingStore(tracking: repository)
        let storeTask = Task { await store.start() }
        let lifecycle = ManualAppLifecycle(phase: .foreground)
        let engine = TrackingPollingEngine(
            tracking: repository, lifecycle: lifecycle, network: ManualNetworkStatus(), clock: clock)
        let phaseSignals = AsyncStream<Int32>.makeStream()
        SignalCatcher.start([SIGUSR1, SIGUSR2], into: phaseSignals.continuation)
        let phases = Task { @MainActor in
            for await sig in phaseSignals.stream { lifecycle.set(sig == SIGUSR1 ? .background : .foreground) }
        }
        engine.start()
        engine.follow(order)
        let events = options.has("events") ? Task { try? await repository.followEvents(of: order) } : nil
        let viewModel = OrderTrackingViewModel(
            order: order, store: store,
            freshness: TrackingFreshnessPolicy(locale: .current, timeZone: .current),
            clock: SystemDateProvider(), ticks: clock)
        let ticking = Task { await viewModel.onAppear() }
        defer {
            ticking.cancel(); events?.cancel(); storeTask.cancel()
            viewModel.onDisappear()
            engine.stop()
            phases.cancel()
        }
        while true {
            let background = lifecycle.phase == .background ? ["(in the background: not polling)"] : []
            Terminal.redraw(
                ["EnRoute · order \(raw)", ""] + TrackerScreen.render(viewModel.viewState, offline: engine.isFailing)
                    + background)
            if case .loaded(let tracking) = store.state(of: order), tracking.status.isTerminal { return 0 }
            try await clock.sleep(for: .seconds(1))
        }
    }
}
