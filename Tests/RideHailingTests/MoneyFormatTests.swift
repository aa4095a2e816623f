import Foundation
import Testing
import EnRouteModels
@testable import RideHailing

@Suite struct MoneyFormatTests {
    @Test(arguments: [
        (1250, "USD", "USD 12.50"), (100, "USD", "USD 1.00"), (5, "EUR", "EUR 0.05"), (-50, "USD", "USD -0.50"),
        (100, "JPY", "JPY 100"), (1500, "KRW", "KRW 1500"), (1250, "BHD", "BHD 1.250"), (0, "GBP", "GBP 0.00"),
    ])
    func anAmountHasItsCurrencysDecimals(minor: Int, currency: String, text: String) {
        #expect(MoneyFormat.string(amountMinor: minor, currency: currency) == text)
    }

    /// ¥100 is a hundred yen, not "1.00".
    @Test func theTipLabelIsInTheReceiptsCurrency() throws {
        var state = ReceiptViewState()
        #expect(state.tipLabel(amountMinor: 100) == "Tip 100")
        state.receipt = try Self.receipt(currency: "JPY")
        #expect(state.tipLabel(amountMinor: 100) == "Tip JPY 100")
        state.receipt = try Self.receipt(currency: "USD")
        #expect(state.tipLabel(amountMinor: 100) == "Tip USD 1.00")
    }

    static func receipt(currency: String) throws -> Receipt {
        let json = """
            {"tripId":"T1","kind":"ride","payment":"captured","lines":[],"total":{"amountMinor":900,\
            "currency":"\(currency)"},
             "requestedAt":"2026-10-20T18:00:00Z"}
            """
        return try WireCoding.decoder().decode(Receipt.self, from: Data(json.utf8))
    }
}
