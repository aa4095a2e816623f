import Foundation
import Synchronization
import Testing
import EnRouteModels
@testable import RideHailing

/// A `RidePaymentsAPI` that fails the test on any call it was not told to expect.
final class FakeRidePaymentsAPI: RidePaymentsAPI {
    struct Handlers {
        var paymentMethods: (@Sendable () throws -> [PaymentMethodSummary])?
        var addPaymentMethod: (@Sendable (String, Bool) throws -> PaymentMethodSummary)?
        var makeDefault: (@Sendable (String) throws -> Void)?
        var remove: (@Sendable (String) throws -> Void)?
        var settle: (@Sendable (UUID) throws -> AccountBalance)?
    }

    let log: CallLog
    private let handlers = Mutex(Handlers())

    init(log: CallLog = CallLog()) { self.log = log }

    /// Tells the fake what to answer; unset calls fail the test.
    func expect(_ change: (inout Handlers) -> Void) { handlers.withLock { change(&$0) } }

    func paymentMethods() async throws -> [PaymentMethodSummary] {
        log.record("paymentMethods")
        return try handler(\.paymentMethods, "paymentMethods")()
    }

    func addPaymentMethod(token: String, makeDefault: Bool) async throws -> PaymentMethodSummary {
        log.record("addPaymentMethod(\(token))")
        return try handler(\.addPaymentMethod, "addPaymentMethod")(token, makeDefault)
    }

    func makeDefaultPaymentMethod(id: String) async throws {
        log.record("makeDefault(\(id))")
        try handler(\.makeDefault, "makeDefault")(id)
    }

    func removePaymentMethod(id: String) async throws {
        log.record("remove(\(id))")
        try handler(\.remove, "remove")(id)
    }

    func settleBalance(idempotencyKey: UUID) async throws -> AccountBalance {
        log.record("settle(\(idempotencyKey.uuidString.suffix(2)))")
        return try handler(\.settle, "settle")(idempotencyKey)
    }

    private func handler<H>(_ path: KeyPath<Handlers, H?>, _ name: String) throws -> H {
        let current = handlers.withLock { $0 }
        guard let handler = current[keyPath: path] else {
            Issue.record("unexpected call: \(name)")
            throw FakeError(reason: "unexpected \(name)")
        }
        return handler
    }
}

/// A `TripReceiptAPI` that fails the test on any call it was not told to expect.
final class FakeTripReceiptAPI: TripReceiptAPI {
    struct Handlers {
        var receipt: (@Sendable (_ call: Int) throws -> Receipt)?
        var tip: (@Sendable (_ call: Int, Int, UUID) throws -> Void)?
        var rate: (@Sendable (Int, String?) throws -> Void)?
    }

    let log: CallLog
    private let handlers = Mutex(Handlers())
    private let keys = Mutex<[UUID]>([])

    init(log: CallLog = CallLog()) { self.log = log }

    /// Tells the fake what to answer; unset calls fail the test.
    func expect(_ change: (inout Handlers) -> Void) { handlers.withLock { change(&$0) } }

    /// The idempotency keys of every `tip` call, in order.
    var tipKeys: [UUID] { keys.withLock { $0 } }

    func receipt(tripID: String) async throws -> Receipt {
        log.record("receipt(\(tripID))")
        return try handler(\.receipt, "receipt")(log.count("receipt"))
    }

    func tip(tripID: String, amountMinor: Int, idempotencyKey: UUID) async throws {
        log.record("tip(\(tripID), \(amountMinor))")
        let call = keys.withLock {
            $0.append(idempotencyKey); return $0.count
        }
        try handler(\.tip, "tip")(call, amountMinor, idempotencyKey)
    }

    func rate(tripID: String, stars: Int, comment: String?) async throws {
        log.record("rate(\(tripID), \(stars))")
        try handler(\.rate, "rate")(stars, comment)
    }

    private func handler<H>(_ path: KeyPath<Handlers, H?>, _ name: String) throws -> H {
        let current = handlers.withLock { $0 }
        guard let handler = current[keyPath: path] else {
            Issue.record("unexpected call: \(name)")
            throw FakeError(reason: "unexpected \(name)")
        }
        return handler
    }
}

/// A `TripHistoryAPI` answering from a handler the test sets; unset, a call fails the test.
final class FakeTripHistoryAPI: TripHistoryAPI {
    let log: CallLog
    private let answer = Mutex<(@Sendable (String?, Int) throws -> TripSnapshotList)?>(nil)

    init(log: CallLog = CallLog()) { self.log = log }

    /// Tells the fake what to answer.
    func expect(_ handler: @escaping @Sendable (_ cursor: String?, _ limit: Int) throws -> TripSnapshotList) {
        answer.withLock { $0 = handler }
    }

    func history(cursor: String?, limit: Int) async throws -> TripSnapshotList {
        log.record("history(\(cursor ?? "-"), \(limit))")
        guard let handler = answer.withLock({ $0 }) else {
            Issue.record("unexpected call: history")
            throw FakeError(reason: "unexpected history")
        }
        return try handler(cursor, limit)
    }
}
