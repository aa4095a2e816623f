import Foundation
import ClientKit
import EnRouteModels
import ProviderKit

/// One merchant's counter on ProviderKit's merchant orders model: looks at its orders every few seconds, accepts new
/// ones stating a preparation time (3–12 min), and marks each ready when that time has passed.
@MainActor
final class SimulatedKitchen {
    let merchant: SimulatedMerchant
    private let context: SimulationContext
    private let viewModel: MerchantOrdersViewModel
    private var random: SeededGenerator
    private var readyAt: [String: Date] = [:]

    init(merchant: SimulatedMerchant, context: SimulationContext) throws {
        self.merchant = merchant
        self.context = context
        let account = merchant.id
        let api = RemoteMerchantAPI(
            client: context.network(for: "merchant:" + account), server: try context.server(account, .merchant))
        var salt = SeededGenerator(seed: context.seed, stream: "keys:" + account)
        let keys = IDCounter(prefix: "merchant-" + account, salt: salt.next())
        viewModel = MerchantOrdersViewModel(api: api, clock: context.clock, makeKey: { keys.next() })
        random = SeededGenerator(seed: context.seed, stream: "merchant:" + account)
    }

    /// Runs the counter until the calling task is cancelled.
    func run() async {
        while !Task.isCancelled {
            guard await context.pause(5) else { return }
            await viewModel.load()
            let now = context.dates.now()
            for order in viewModel.state.orders {
                switch MerchantOrdersViewState.action(for: order) {
                case .accept?:
                    let minutes = 3 + Int(random.unit() * 10)
                    await viewModel.accept(order.id, preparationMinutes: minutes)
                    readyAt[order.id] = now.addingTimeInterval(TimeInterval(minutes * 60))
                case .markReady?:
                    if let due = readyAt[order.id], now < due { continue }
                    await viewModel.markReady(order.id)
                case nil:
                    continue
                }
            }
        }
    }
}
