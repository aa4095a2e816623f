import Foundation
import Synchronization
import Testing
import EnRouteModels
import EnRouteDomain
import EnRouteSandbox
import TestSupport

/// Issue 13 end to end through the API: quotes, the hold at confirmation, the capture after the trip, declines,
/// challenges, debts, fees, tips, ratings, receipts and the ledger, on the sandbox gateway and a manual clock.
@Suite struct MoneyFlowTests {
    static let pickup = TestBackend.pickup, dropoff = TestBackend.dropoff

    static func sandbox(_ backend: TestBackend) -> SandboxGateway { backend.payments as! SandboxGateway }

    static func expectBalanced(
        _ backend: TestBackend, _ id: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let rows = try backend.store.ledger(tripId: id)
        #expect(!rows.isEmpty, sourceLocation: sourceLocation)
        #expect(Ledger.isBalanced(rows), "every movement sums to zero", sourceLocation: sourceLocation)
        #expect(
            rows.reduce(0) { $0 + $1.amountMinor } == 0, "the trip's rows sum to zero", sourceLocation: sourceLocation)
    }

    @Test func aRideHoldsTheQuoteAtConfirmationAndCapturesTheFixedPriceAfterCompletion() async throws {
        let backend = TestBackend()
        await backend.addCard("c1")
        let quote = try #require(
            try await backend.rideQuotes("c1", pickup: Self.pickup, dropoff: Self.dropoff).first {
                $0.productID == "economy"
            })
        #expect(quote.quoteId != nil && quote.expiresAt == backend.clock.date.addingTimeInterval(300))
        let body =
            #"{"pickup":\#(Self.pickup),"dropoff":\#(Self.dropoff),"productID":"economy","#
            + #""quoteId":"\#(quote.quoteId!)","amountMinor":1}"#
        let created = try await MoneyFlow.request(backend, "c1", body: body)
        #expect(created.status == 201)
        let trip = try MoneyFlow.trip(created.body)
        #expect(trip.fare == quote.fare, "the quoted fare, whatever amount the body states")
        let holds = Self.sandbox(backend).openHolds()
        #expect(holds.map(\.amountCapturable) == [quote.fare.amountMinor])

        try await MoneyFlow.drive(backend, trip.id)
        let record = try #require(try backend.service.cached(trip.id))
        #expect(record.payment?.state == .captured)
        #expect(record.payment?.capturedMinor == quote.fare.amountMinor)
        #expect(record.fare == quote.fare)
        #expect(Self.sandbox(backend).openHolds().isEmpty)
        try Self.expectBalanced(backend, trip.id)

        let receipt = await backend.call("GET", APIPath.tripReceipt(trip.id), token: backend.token("c1", .customer))
        #expect(receipt.status == 200)
        let decoded = try WireCoding.decoder().decode(Receipt.self, from: Data(receipt.body))
        #expect(decoded.total == quote.fare)
        #expect(decoded.lines.reduce(0) { $0 + $1.amount.amountMinor } == quote.fare.amountMinor)
        #expect(decoded.card == CardSummary(brand: "visa", last4: "4242"))
        #expect(Set(decoded.lines.map(\.kind)).isSuperset(of: ["base", "distance", "time"]))

        // The provider's share is in the ledger, and the provider sees it as earnings.
        let day = ISO8601DateFormatter()
        let earnings = await backend.call(
            "GET",
            APIPath.providerEarnings(
                from: day.string(from: backend.clock.date.addingTimeInterval(-86_400)),
                to: day.string(from: backend.clock.date.addingTimeInterval(86_400))),
            token: backend.token("p1", .provider))
        #expect(earnings.status == 200)
        let e = try WireCoding.decoder().decode(ProviderEarnings.self, from: Data(earnings.body))
        #expect(e.total.amountMinor == Pricing.providerShare(of: quote.fare.amountMinor, rules: PricingRules()))
    }

    @Test(arguments: [
        ("pm_card_visa_chargeDeclined", "generic_decline"),
        ("pm_card_visa_chargeDeclinedInsufficientFunds", "insufficient_funds"),
    ])
    func aDeclinedCardIs402WithTheBanksReasonAndNoTripAndTheSameKeyReplaysIt(card: String, code: String) async throws {
        let backend = TestBackend()
        let first = try await MoneyFlow.request(backend, "c1", card: card, key: "decline-key-1")
        #expect(first.status == 402)
        let problem = try WireCoding.decoder().decode(PaymentProblem.self, from: Data(first.body))
        #expect(problem.type == PaymentProblemType.declined && problem.declineCode == code)
        #expect(problem.nextStep?.contains("another card") == true)
        #expect(backend.service.activeTrips(customer: "c1").isEmpty, "no trip is created")
        let replay = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer), json: first.json,
            headers: ["Idempotency-Key": "decline-key-1"])
        #expect(replay.status == 402 && replay.body == first.body && replay.headers["Idempotent-Replayed"] == "true")
        #expect(Self.sandbox(backend).openHolds().isEmpty)
        // Another card, the same quote, a new key: the ride goes ahead.
        await backend.addCard("c1", "pm_card_visa")
        let again = try await MoneyFlow.request(backend, "c1", card: nil, key: "decline-key-2", body: first.json)
        #expect(again.status == 201)
    }

    @Test func aBankChallengeIs402WithItsLinkAndTheRepeatAfterAnsweringUsesThatOneHold() async throws {
        let backend = TestBackend()
        let first = try await MoneyFlow.request(
            backend, "c1", card: "pm_card_authenticationRequired", key: "challenge-1")
        #expect(first.status == 402)
        let problem = try WireCoding.decoder().decode(PaymentProblem.self, from: Data(first.body))
        #expect(problem.type == PaymentProblemType.actionRequired)
        let url = try #require(problem.actionURL)
        // Not answered yet: the repeat is told again.
        #expect(
            try await MoneyFlow.request(backend, "c1", card: nil, key: "challenge-2", body: first.json).status == 402)
        let answered = await backend.call("POST", url.path, token: nil, json: #"{"confirm":true}"#)
        #expect(answered.status == 200)
        let created = try await MoneyFlow.request(backend, "c1", card: nil, key: "challenge-3", body: first.json)
        #expect(created.status == 201)
        #expect(Self.sandbox(backend).intents().count == 1, "never a second hold")
        #expect(Self.sandbox(backend).openHolds().count == 1)
    }

    @Test func anExpiredQuoteIs409WithAFreshOneThatThenGoesThrough() async throws {
        let backend = TestBackend()
        let body = try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)
        await backend.clock.advance(by: .seconds(301))
        let expired = try await MoneyFlow.request(backend, "c1", body: body)
        #expect(expired.status == 409)
        let problem = try WireCoding.decoder().decode(QuoteExpiredProblem<Estimate>.self, from: Data(expired.body))
        #expect(problem.type == PaymentProblemType.quoteExpired)
        let fresh = try #require(problem.quote.quoteId)
        #expect(!body.contains(fresh) && problem.quote.expiresAt! > backend.clock.date)
        #expect(Self.sandbox(backend).intents().isEmpty, "nothing is held for an expired quote")
        let confirmed = try await MoneyFlow.request(
            backend, "c1",
            body: #"{"pickup":\#(Self.pickup),"dropoff":\#(Self.dropoff),"productID":"economy","quoteId":"\#(fresh)"}"#)
        #expect(confirmed.status == 201)
    }

    @Test func aQuoteIsTheAccountsOwnAndMakesOneTrip() async throws {
        let backend = TestBackend()
        let body = try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)
        await backend.addCard("c2")
        let stolen = try await MoneyFlow.request(backend, "c2", body: body)
        #expect(stolen.status == 422 && String(decoding: stolen.body, as: UTF8.self).contains("/quoteId"))
        let missing = await backend.call(
            "POST", APIPath.trips, token: backend.token("c1", .customer), json: TestBackend.rideBody,
            headers: ["Idempotency-Key": UUID().uuidString])
        #expect(missing.status == 422 && String(decoding: missing.body, as: UTF8.self).contains("/quoteId"))
        let created = try await MoneyFlow.request(backend, "c1", body: body)
        #expect(created.status == 201)
        _ = await backend.call(
            "POST", APIPath.tripCancel(try MoneyFlow.trip(created.body).id), token: backend.token("c1", .customer))
        let reused = try await MoneyFlow.request(backend, "c1", body: body)
        #expect(reused.status == 422, "one quote, one trip")
    }

    @Test func aCustomerWithoutACardIsAskedToAddOne() async throws {
        let backend = TestBackend()
        let r = try await MoneyFlow.request(backend, "c1", card: nil)
        #expect(r.status == 402)
        #expect(
            try WireCoding.decoder().decode(PaymentProblem.self, from: Data(r.body)).type
                == PaymentProblemType.methodRequired)
    }

    @Test func aFinalPriceTheCardRefusesOffSessionIsADebtThatBlocksNewRequestsUntilSettled() async throws {
        let backend = TestBackend()
        let created = try await MoneyFlow.request(backend, "c1", card: "pm_card_chargeCustomerFail")
        #expect(created.status == 201)
        let trip = try MoneyFlow.trip(created.body)
        // Twelve minutes at pickup: past the three free ones, so the price is measured again and a wait is added above
        // the hold.
        try await MoneyFlow.drive(backend, trip.id, wait: 12 * 60)
        let record = try #require(try backend.service.cached(trip.id))
        #expect(record.payment?.state == .debt)
        let owed = try #require(record.payment?.owedMinor)
        #expect(owed > 0 && record.finalPrice?.lines.contains { $0.kind == "wait" && $0.reason != nil } == true)
        try Self.expectBalanced(backend, trip.id)

        let balance = await backend.call("GET", APIPath.accountBalance, token: backend.token("c1", .customer))
        #expect(
            try WireCoding.decoder().decode(AccountBalance.self, from: Data(balance.body)).outstanding.amountMinor
                == owed)
        let blocked = try await MoneyFlow.request(backend, "c1", card: nil)
        #expect(blocked.status == 402)
        let problem = try WireCoding.decoder().decode(PaymentProblem.self, from: Data(blocked.body))
        #expect(problem.type == PaymentProblemType.outstandingBalance && problem.amount?.amountMinor == owed)
        #expect(
            await backend.call(
                "POST", APIPath.orders, token: backend.token("c1", .customer),
                json: try await backend.orderBody(
                    "c1", items: #"[{"sku":"coffee","quantity":1}]"#, destination: Self.dropoff, card: nil),
                headers: ["Idempotency-Key": UUID().uuidString]
            ).status == 402)

        await backend.addCard("c1", "pm_card_visa")
        let settled = await backend.call(
            "POST", APIPath.accountBalanceSettle, token: backend.token("c1", .customer),
            headers: ["Idempotency-Key": "settle-key-1"])
        #expect(settled.status == 200)
        #expect(
            try WireCoding.decoder().decode(AccountBalance.self, from: Data(settled.body)).outstanding.amountMinor == 0)
        #expect(try backend.service.cached(trip.id)?.payment?.state == .captured)
        try Self.expectBalanced(backend, trip.id)
        #expect(try await MoneyFlow.request(backend, "c1", card: nil).status == 201)
    }

    @Test func aCancellationInsideTheGraceReleasesTheHoldAndANoShowCostsTheFee() async throws {
        let backend = TestBackend()
        let free = try MoneyFlow.trip(try await MoneyFlow.request(backend, "c1").body)
        #expect(await backend.assign(free.id, to: "p1").status == 200)
        await backend.clock.advance(by: .seconds(60))
        #expect(
            await backend.call("POST", APIPath.tripCancel(free.id), token: backend.token("c1", .customer)).status == 200
        )
        try await backend.settlePayments()
        #expect(try backend.service.cached(free.id)?.payment?.state == .released)
        #expect(Self.sandbox(backend).openHolds().isEmpty)
        try Self.expectBalanced(backend, free.id)

        let noShow = try MoneyFlow.trip(try await MoneyFlow.request(backend, "c2").body)
        #expect(await backend.assign(noShow.id, to: "p2").status == 200)
        #expect(await backend.step(noShow.id, "driverArrived", provider: "p2").status == 200)
        await backend.clock.advance(by: .seconds(6 * 60))
        let cancel = await backend.call(
            "POST", APIPath.providerTripSteps(noShow.id), token: backend.token("p2", .provider),
            json:
                #"{"changeId":"noshow","step":"cancelled","deviceTime":"2026-10-20T18:40:00Z","reason":"rider "#
                + #"did not come"}"#
        )
        #expect(cancel.status == 200, "\(String(decoding: cancel.body, as: UTF8.self))")
        try await backend.settlePayments()
        let record = try #require(try backend.service.cached(noShow.id))
        #expect(record.payment?.state == .partiallyCaptured)
        #expect(record.payment?.capturedMinor == PricingRules().cancellation.feeMinor)
        #expect(record.finalPrice?.lines.first?.kind == "cancellationFee")
        try Self.expectBalanced(backend, noShow.id)
    }

    @Test func aTipIsRecordedAtOnceChargedToTheProviderOnceAndARatingIsOncePerParty() async throws {
        let backend = TestBackend()
        let trip = try MoneyFlow.trip(try await MoneyFlow.request(backend, "c1").body)
        let early = await backend.call(
            "POST", APIPath.tripTip(trip.id), token: backend.token("c1", .customer), json: #"{"amountMinor":200}"#,
            headers: ["Idempotency-Key": "tip-early-key"])
        #expect(early.status == 409, "no tip before the trip is complete")
        try await MoneyFlow.drive(backend, trip.id)
        let tip = await backend.call(
            "POST", APIPath.tripTip(trip.id), token: backend.token("c1", .customer), json: #"{"amountMinor":200}"#,
            headers: ["Idempotency-Key": "tip-key-1"])
        #expect(tip.status == 201)
        #expect(try backend.service.cached(trip.id)?.tip?.state == .pending, "recorded before it is charged")
        let replay = await backend.call(
            "POST", APIPath.tripTip(trip.id), token: backend.token("c1", .customer), json: #"{"amountMinor":200}"#,
            headers: ["Idempotency-Key": "tip-key-1"])
        #expect(replay.status == 201 && replay.body == tip.body)
        let second = await backend.call(
            "POST", APIPath.tripTip(trip.id), token: backend.token("c1", .customer), json: #"{"amountMinor":300}"#,
            headers: ["Idempotency-Key": "tip-key-2"])
        #expect(second.status == 409)
        try await backend.settlePayments()
        #expect(try backend.service.cached(trip.id)?.tip?.state == .charged)
        #expect(
            try await backend.store.ledgerBalance(account: Ledger.provider("p1")) == Pricing.providerShare(
                of: trip.fare!.amountMinor, rules: PricingRules()) + 200)
        try Self.expectBalanced(backend, trip.id)
        let receipt = try WireCoding.decoder().decode(
            Receipt.self,
            from: Data(
                await backend.call("GET", APIPath.tripReceipt(trip.id), token: backend.token("c1", .customer)).body))
        #expect(receipt.lines.last?.kind == "tip" && receipt.total.amountMinor == trip.fare!.amountMinor + 200)

        #expect(
            await backend.call(
                "POST", APIPath.tripRating(trip.id), token: backend.token("c1", .customer),
                json: #"{"stars":3,"comment":"Smooth"}"#
            ).status == 201)
        let rated = try MoneyFlow.trip(
            await backend.call("GET", APIPath.trip(trip.id), token: backend.token("c1", .customer)).body)
        #expect(rated.driver?.rating == 3.0, "the customers' average is the driver's rating")
        #expect(
            await backend.call(
                "POST", APIPath.tripRating(trip.id), token: backend.token("c1", .customer), json: #"{"stars":1}"#
            ).status == 409)
        #expect(
            await backend.call(
                "POST", APIPath.tripRating(trip.id), token: backend.token("p1", .provider), json: #"{"stars":4}"#
            ).status == 201)
        #expect(
            await backend.call(
                "POST", APIPath.tripRating(trip.id), token: backend.token("p1", .provider), json: #"{"stars":9}"#
            ).status == 422)
        #expect(
            await backend.call(
                "POST", APIPath.tripRating(trip.id), token: backend.token("c2", .customer), json: #"{"stars":3}"#
            ).status == 404)
    }

    @Test func aBasketWithAMissingItemIsCapturedLessWithTheReasonOnTheReceipt() async throws {
        let backend = TestBackend()
        let body = try await backend.orderBody(
            "c1", items: #"[{"sku":"coffee","quantity":2},{"sku":"tea","quantity":1}]"#, destination: Self.dropoff)
        let placed = await backend.call(
            "POST", APIPath.orders, token: backend.token("c1", .customer), json: body,
            headers: ["Idempotency-Key": "order-key-1"])
        #expect(placed.status == 201)
        let order = try WireCoding.decoder().decode(TrackingDTO.self, from: Data(placed.body))
        let quoted = try #require(try backend.service.cached(order.orderId)?.quote)
        #expect(
            await backend.call(
                "POST", APIPath.merchantOrderAccept(order.orderId), token: backend.token("m1", .merchant),
                json: #"{"preparationMinutes":5}"#
            ).status == 200)
        let changed = await backend.call(
            "POST", APIPath.merchantOrderItems(order.orderId), token: backend.token("m1", .merchant),
            json: #"{"changes":[{"sku":"tea","kind":"missing"}]}"#)
        #expect(changed.status == 200)
        #expect(
            await backend.call(
                "POST", APIPath.merchantOrderItems(order.orderId), token: backend.token("m1", .merchant),
                json: #"{"changes":[{"sku":"cake","kind":"missing"}]}"#
            ).status == 422)
        #expect(await backend.assign(order.orderId, to: "p1").status == 200)
        #expect(
            await backend.call("POST", APIPath.merchantOrderReady(order.orderId), token: backend.token("m1", .merchant))
                .status == 200)
        #expect(await backend.step(order.orderId, "onTheWay").status == 200)
        #expect(await backend.step(order.orderId, "delivered").status == 200)
        try await backend.settlePayments()
        let record = try #require(try backend.service.cached(order.orderId))
        #expect(record.payment?.state == .partiallyCaptured)
        let final = try #require(record.fare)
        #expect(final.amountMinor < quoted.amountMinor)
        let receipt = try WireCoding.decoder().decode(
            Receipt.self,
            from: Data(
                await backend.call("GET", APIPath.tripReceipt(order.orderId), token: backend.token("c1", .customer))
                    .body))
        #expect(
            receipt.lines.contains {
                $0.kind == "adjustment" && $0.sku == "tea" && $0.reason == "Out of stock"
                    && $0.amount.amountMinor == -300
            })
        #expect(receipt.total == final)
        try Self.expectBalanced(backend, order.orderId)
        // The goods are the merchant's; the courier's share is of the fees only.
        let items = try #require(record.finalPrice).lines.filter { $0.kind == "item" || $0.kind == "adjustment" }
            .reduce(0) { $0 + $1.amount.amountMinor }
        #expect(try await backend.store.ledgerBalance(account: Ledger.merchant("m1")) == items)
        #expect(
            try await backend.store.ledgerBalance(account: Ledger.provider("p1"))
                == Pricing.providerShare(of: final.amountMinor - items, rules: PricingRules()))
    }

    @Test func aThousandConcurrentCreatesWithOneKeyMakeOneTripAndOneHold() async throws {
        let backend = TestBackend()
        let body = try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<1000 {
                group.addTask {
                    await backend.call(
                        "POST", APIPath.trips, token: backend.token("c1", .customer), json: body,
                        headers: ["Idempotency-Key": "one-key-for-a-thousand"]
                    ).status
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(
            statuses.filter { $0 == 201 }.count >= 1, "\(Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count))"
        )
        #expect(
            statuses.allSatisfy { $0 == 201 || $0 == 409 }, "the rest wait for the first (409 in flight) or replay it")
        #expect(backend.service.activeTrips(customer: "c1").count == 1)
        #expect(Self.sandbox(backend).intents().count == 1)
    }

    /// The hold is saved by the transaction that creates the trip; a create refused after it (a second ride that
    /// passed the early check while the first was still being held) gives that hold back at once, by the intent the
    /// gateway answered, without asking for it again.
    @Test func aRideRefusedAfterItsHoldReleasesThatHoldAtOnceWithoutPlacingItAgain() async throws {
        let clock = ManualClock()
        let sandbox = SandboxGateway(
            baseURL: URL(string: "http://enroute.test")!, ids: SequentialIDGenerator(prefix: ""), now: { clock.date })
        let gated = GatedGateway(base: sandbox)
        let backend = TestBackend(clock: clock, payments: gated)
        let slow = try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)
        let fast = try await backend.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)
        gated.holdNextAuthorization()
        let first = Task { try await MoneyFlow.request(backend, "c1", body: slow) }
        try await eventually("the first request waits for its hold", within: .seconds(30)) { gated.isHolding }
        let second = try await MoneyFlow.request(backend, "c1", body: fast)
        #expect(second.status == 201)
        gated.letGo()
        let refused = try await first.value
        #expect(refused.status == 409, "one active ride per customer, decided by the creating transaction")
        #expect(sandbox.intents().count == 2, "one hold per request, none placed twice")
        #expect(
            gated.authorizations == 2,
            "the refused hold is released by the intent its request was answered, not looked up again")
        #expect(sandbox.openHolds().count == 1, "the refused request's hold is given back at once")
        let trip = try MoneyFlow.trip(second.body)
        let attached = try #require(try backend.store.trip(id: trip.id)?.payment)
        #expect(attached.state == .held && attached.intentId != nil)
        let unattached = try backend.store.unattachedPaymentAttempts(before: clock.date.addingTimeInterval(1))
        #expect(unattached.count == 1 && unattached.allSatisfy { $0.payment.state == .released })
    }

    @Test func aHoldWhoseAnswerWasLostIsReleasedByTheReconcilerWhenNoTripTookIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "enroute-money-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("trips.sqlite").path
        let clock = ManualClock()
        let sandbox = SandboxGateway(
            baseURL: URL(string: "http://enroute.test")!, ids: SequentialIDGenerator(prefix: ""), now: { clock.date })
        let first = TestBackend(clock: clock, storage: .sqlite(path: db), payments: sandbox)
        let body = try await first.rideBody("c1", pickup: Self.pickup, dropoff: Self.dropoff)
        // The hold is placed, and its answer never comes back (as when the process dies during the call).
        sandbox.failNext(.authorize, afterApplying: true)
        let lost = try await MoneyFlow.request(first, "c1", body: body)
        #expect(lost.status == 503)
        #expect(sandbox.openHolds().count == 1 && first.service.activeTrips(customer: "c1").isEmpty)

        // The server restarts on the same file; the customer never comes back for that request.
        let second = TestBackend(clock: clock, storage: .sqlite(path: db), payments: sandbox)
        _ = try await second.service.warm()
        try await second.settlePayments()
        #expect(sandbox.openHolds().count == 1, "not before the timeout: the request could still be retried")
        await clock.advance(by: .seconds(16 * 60))
        try await second.settlePayments()
        #expect(sandbox.openHolds().isEmpty, "no hold left without a trip")
        #expect(sandbox.intents().count == 1, "found by its key, not placed again")
        #expect(try second.store.trips(status: nil, limit: 10).isEmpty, "no trip without a hold")
    }
    /// Each of the sandbox's Stripe test cards through a whole ride: what the customer meets and where the money ends.
    @Test(arguments: [
        ("pm_card_visa", 201, PaymentStatus.captured),
        ("pm_card_mastercard", 201, .captured),
        ("pm_card_visa_chargeDeclined", 402, .failed),
        ("pm_card_visa_chargeDeclinedInsufficientFunds", 402, .failed),
        ("pm_card_authenticationRequired", 402, .captured),
        ("pm_card_chargeCustomerFail", 201, .captured),
    ])
    func eachSandboxTestCardThroughAWholeRide(card: String, firstAnswer: Int, settles: PaymentStatus) async throws {
        let backend = TestBackend()
        var answer = try await MoneyFlow.request(backend, "c1", card: card)
        #expect(answer.status == firstAnswer)
        if answer.status == 402 {
            let problem = try WireCoding.decoder().decode(PaymentProblem.self, from: Data(answer.body))
            guard let url = problem.actionURL else {
                #expect(problem.type == PaymentProblemType.declined)
                #expect(
                    backend.service.activeTrips(customer: "c1").isEmpty && Self.sandbox(backend).openHolds().isEmpty)
                return
            }
            #expect(await backend.call("POST", url.path, token: nil).status == 200)
            answer = try await MoneyFlow.request(backend, "c1", card: nil, body: answer.json)
            #expect(answer.status == 201)
        }
        let trip = try MoneyFlow.trip(answer.body)
        try await MoneyFlow.drive(backend, trip.id)
        let record = try #require(try backend.service.cached(trip.id))
        #expect(record.payment?.state == settles)
        #expect(record.payment?.capturedMinor == trip.fare?.amountMinor)
        #expect(Self.sandbox(backend).openHolds().isEmpty)
        try Self.expectBalanced(backend, trip.id)
        #expect(
            await backend.call("GET", APIPath.tripReceipt(trip.id), token: backend.token("c1", .customer)).status == 200
        )
    }

    @Test func aHoldTheBankLetGoWhileTheTripWasStillOnIsReleasedOnTheTripByTheReconciler() async throws {
        let backend = TestBackend()
        let trip = try MoneyFlow.trip(try await MoneyFlow.request(backend, "c1").body)
        let intent = try #require(try backend.service.cached(trip.id)?.payment?.intentId)
        _ = try Self.sandbox(backend).expireHold(intentId: intent)
        try await backend.settlePayments()
        #expect(try backend.service.cached(trip.id)?.payment?.state == .held, "young holds are not asked about")
        await backend.clock.advance(by: .seconds(4 * 86_400 + 60))
        try await backend.settlePayments()
        #expect(try backend.service.cached(trip.id)?.payment?.state == .released)
        try Self.expectBalanced(backend, trip.id)
    }

    @Test func anUnbalancedPostingIsRefusedByTheStore() async throws {
        let backend = TestBackend()
        await #expect(throws: LedgerUnbalanced.self) {
            try await backend.store.transaction { tx in
                try await tx.post([
                    LedgerEntry(
                        movementId: "m", kind: "capture", tripId: "T1", account: "a", amountMinor: 5, currency: "EUR",
                        at: backend.clock.date)
                ])
            }
        }
        #expect(try backend.store.ledger(tripId: "T1").isEmpty)
    }
    @Test func ridesWaitingInThePickupsZoneWithNoFreeProviderRaiseTheQuoteByTheBusyTimeMultiplier() async throws {
        let backend = TestBackend()
        let calm = try #require(
            try await backend.rideQuotes("c9", pickup: Self.pickup, dropoff: Self.dropoff).first {
                $0.productID == "economy"
            })
        #expect(try await MoneyFlow.request(backend, "c1").status == 201)
        #expect(try await MoneyFlow.request(backend, "c2").status == 201)
        // Priced from the zone's last count: nothing changes until supply and demand are counted again.
        let before = try #require(
            try await backend.rideQuotes("c9", pickup: Self.pickup, dropoff: Self.dropoff).first {
                $0.productID == "economy"
            })
        #expect(before.fare == calm.fare)
        await backend.backend.zones.sample()
        // Two rides waiting and nobody free: 2 requests per provider, so 1 + (2 - 1) × 0.5 = ×1.5.
        let busy = try #require(
            try await backend.rideQuotes("c9", pickup: Self.pickup, dropoff: Self.dropoff).first {
                $0.productID == "economy"
            })
        let busyId = try #require(busy.quoteId)
        let recorded = try #require(try await backend.backend.payments.quotes.store.quote(id: busyId))
        #expect(recorded.demand == 1.5)
        #expect(recorded.price.lines.contains { $0.kind == "demand" })
        #expect(busy.fare.amountMinor > calm.fare.amountMinor)
    }
}

/// A gateway that can hold one authorization until the test lets it go; everything else goes straight to `base`.
final class GatedGateway: PaymentGateway {
    let base: SandboxGateway
    private struct Gate {
        var armed = false; var waiting: CheckedContinuation<Void, Never>?; var open = false; var asked = 0
    }
    private let gate = Mutex(Gate())
    init(base: SandboxGateway) { self.base = base }

    /// The next authorization waits for `letGo()`.
    func holdNextAuthorization() { gate.withLock { $0 = Gate(armed: true, asked: $0.asked) } }
    /// Authorizations asked for so far.
    var authorizations: Int { gate.withLock { $0.asked } }
    /// True while an authorization waits.
    var isHolding: Bool { gate.withLock { $0.waiting != nil } }
    func letGo() {
        let waiting = gate.withLock { g -> CheckedContinuation<Void, Never>? in
            g.open = true
            defer { g.waiting = nil }
            return g.waiting
        }
        waiting?.resume()
    }

    var name: String { base.name }
    func describe(token: String) async throws(PaymentGatewayError) -> CardDetails {
        try await base.describe(token: token)
    }
    func authorize(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = gate.withLock { g -> Bool in
                g.asked += 1
                guard g.armed, !g.open else { return true }
                g.armed = false
                g.waiting = continuation
                return false
            }
            if now { continuation.resume() }
        }
        return try await base.authorize(request)
    }
    func retrieve(intentId: String) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.retrieve(intentId: intentId)
    }
    func capture(
        intentId: String, amountMinor: Int, idempotencyKey: String
    ) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.capture(intentId: intentId, amountMinor: amountMinor, idempotencyKey: idempotencyKey)
    }
    func cancel(intentId: String, idempotencyKey: String) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.cancel(intentId: intentId, idempotencyKey: idempotencyKey)
    }
    func charge(_ request: AuthorizationRequest) async throws(PaymentGatewayError) -> GatewayIntent {
        try await base.charge(request)
    }
}
