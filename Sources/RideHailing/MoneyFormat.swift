/// Writes an amount in minor units as the rider reads it, with as many decimals as the currency has.
public enum MoneyFormat {
    /// "USD 12.50", "JPY 100", "BHD 1.250", "USD -0.50".
    public static func string(amountMinor: Int, currency: String) -> String {
        let digits = minorDigits(currency: currency)
        guard digits > 0 else { return "\(currency) \(amountMinor)" }
        var scale = 1
        for _ in 0..<digits { scale *= 10 }
        let sign = amountMinor < 0 ? "-" : ""
        let units = amountMinor.magnitude
        let fraction = String(units % UInt(scale))
        let padded = String(repeating: "0", count: digits - fraction.count) + fraction
        return "\(currency) \(sign)\(units / UInt(scale)).\(padded)"
    }

    /// The currency's decimal places (ISO 4217): none for the yen and won, three for the dinars, two otherwise.
    public static func minorDigits(currency: String) -> Int {
        if zeroDecimal.contains(currency) { return 0 }
        if threeDecimal.contains(currency) { return 3 }
        return 2
    }

    private static let zeroDecimal: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF",
        "XPF",
    ]
    private static let threeDecimal: Set<String> = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"]
}
