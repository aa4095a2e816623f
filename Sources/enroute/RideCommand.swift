import Foundation
import ClientKit
import CurlTransport
import EnRouteModels
import RideHailing

/// `enroute ride --from LAT,LNG --to LAT,LNG`: the rider app in a terminal, on the client kit.
enum RideCommand {
    static let spec = CommandSpec(name: "ride", synopsis: """
    Usage: enroute ride --from LAT,LNG --to LAT,LNG [--product ID] [--server URL] [--token T]

    Shows the estimates, requests a ride (one Idempotency-Key per request, reused on retries), then
    watches the trip live: its state, the driver, the ETA and the driver's marker interpolated between
    fixes. Ctrl-C cancels the ride (while it can still be cancelled) and exits.
    """, sections: [(nil, [
        .value("from", "LAT,LNG", "Pickup."),
        .value("to", "LAT,LNG", "Drop-off."),
        .value("product", "ID", "economy (default) or xl."),
    ] + Terminal.serverOptions(role: "customer"))])

    @MainActor
    static func run(_ args: [String]) async throws -> Int32 {
        let options = try spec.parse(args)
        if options.has("help") { print(spec.helpText); return 0 }
        let from = try Terminal.coordinate(options.string("from"), flag: "from")
        let to = try Terminal.coordinate(options.string("to"), flag: "to")
        let (url, token) = try Terminal.server(options)
        let server = APIServer(baseURL: url, credentials: StaticAccessToken(token))
        let http = CurlHTTPClient()
        let clock = ContinuousClock()
        let viewModel = TripViewModel(api: RemoteTripAPI(client: http, server: server), channel: SSELiveTripChannel(client: http, server: server),
                                      clock: clock, logger: StandardErrorRideLogger())
        let pickup = Coordinate(lat: from.lat, lng: from.lng), dropoff = Coordinate(lat: to.lat, lng: to.lng)
        await viewModel.loadEstimates(pickup: pickup, dropoff: dropoff)
        let product = options.string("product") ?? "economy"
        guard viewModel.state.estimates.contains(where: { $0.productID == product }) else {
            Terminal.redraw(RideScreen.render(viewModel.state, marker: nil))
            throw CLIError(viewModel.state.errorMessage ?? "no estimate for product \(product)")
        }

        // Ctrl-C cancels the ride rather than leaving it searching.
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .main)
        let interrupted = AsyncStream<Void>.makeStream()
        interrupt.setEventHandler { interrupted.continuation.yield() }
        interrupt.resume()
        defer { interrupt.cancel() }

        await viewModel.requestRide(TripRequest(pickup: pickup, dropoff: dropoff, productID: product))
        if let message = viewModel.state.errorMessage, viewModel.state.trip == nil {
            Terminal.redraw(RideScreen.render(viewModel.state, marker: nil))
            throw CLIError(message)
        }
        let watcher = Task { @MainActor in await viewModel.waitForLiveToEnd() }
        let cancelOnInterrupt = Task { @MainActor in
            for await _ in interrupted.stream {
                if viewModel.state.canCancel { await viewModel.cancelTrip() } else { viewModel.stopLive() }
            }
        }
        defer { cancelOnInterrupt.cancel() }
        while true {
            Terminal.redraw(["EnRoute · ride", ""] + RideScreen.render(viewModel.state, marker: viewModel.markerFrame()))
            if let trip = viewModel.state.trip, !trip.state.isActive {
                await watcher.value
                return trip.state == .completed ? 0 : 3
            }
            try await clock.sleep(for: .milliseconds(250))
        }
    }
}
