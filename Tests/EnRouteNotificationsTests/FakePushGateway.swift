import Foundation
import Testing
import EnRouteNotifications
import EnRouteAPNs
import Synchronization

/// A gateway that records pushes and answers from a script; an unscripted push is a test failure
/// unless `defaultOutcome` says what to expect.
final class FakePushGateway: PushGateway {
    private let state = Mutex<(sent: [APNsPush], script: [PushOutcome])>(([], []))
    let defaultOutcome: PushOutcome?
    /// Called before answering, e.g. to stop a "killed" sender mid-drain.
    let onSend: (@Sendable (APNsPush) async -> Void)?

    init(
        script: [PushOutcome] = [], defaultOutcome: PushOutcome? = nil,
        onSend: (@Sendable (APNsPush) async -> Void)? = nil
    ) {
        state.withLock { $0.script = script }
        self.defaultOutcome = defaultOutcome
        self.onSend = onSend
    }

    var sent: [APNsPush] { state.withLock { $0.sent } }

    func send(_ push: APNsPush) async -> PushOutcome {
        await onSend?(push)
        return state.withLock { s in
            s.sent.append(push)
            if !s.script.isEmpty { return s.script.removeFirst() }
            if let defaultOutcome { return defaultOutcome }
            Issue.record("unexpected push to \(push.token)")
            return .rejected(reason: "unexpected")
        }
    }
}
