extension CarProfile {
    /// A posted limit in km/h from a `maxspeed`-style value, or nil when it cannot be read:
    /// `50`, `50 km/h`, `30 mph`, `10 knots`, `FI:urban`-style implicit limits, `DE:30`, `none`, `walk`, and lists
    /// (`90;30`, the lowest wins).
    public func postedLimitKmh(_ value: String?) -> Double? {
        guard let value else { return nil }
        let parts = value.split(separator: ";").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        guard parts.count > 1 else { return parts.first.flatMap { singleLimitKmh(String($0)) } }
        return parts.compactMap { singleLimitKmh(String($0)) }.min()
    }

    func singleLimitKmh(_ raw: String) -> Double? {
        let value = raw.lowercased()
        switch value {
        case "none", "unlimited": return unlimitedSpeedKmh
        case "walk": return walkSpeedKmh
        case "signals", "variable", "no", "unknown": return nil
        default: break
        }
        guard let colon = value.firstIndex(of: ":") else { return numberWithUnit(value) }
        if let limit = implicitLimitsKmh[raw] ?? implicitLimitsKmh.first(where: { $0.key.lowercased() == value })?.value
        {
            return limit
        }
        // `DE:30`, `DE:zone:30`-style zone values that carry their number.
        let rest = value[value.index(after: colon)...]
        let digits = rest.drop(while: { !$0.isNumber })
        guard rest.count - digits.count <= 5, let number = Double(digits), number > 0 else { return nil }
        return number
    }

    /// `50`, `50 km/h`, `50kmh`, `50 kph`, `30 mph`, `30mph`, `10 knots`; nil for anything else or ≤ 0.
    func numberWithUnit(_ value: String) -> Double? {
        let numberPart = value.prefix(while: { $0.isNumber || $0 == "." })
        guard let number = Double(numberPart), number > 0 else { return nil }
        let unit = value.dropFirst(numberPart.count).trimmingSpaces()
        switch unit {
        case "", "km/h", "kmh", "kph", "kmph": return number
        case "mph": return number * Self.kmhPerMph
        case "knots", "kn": return number * 1.852
        default: return nil
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces (Foundation-free).
    fileprivate func trimmingSpaces() -> SubSequence {
        let start = firstIndex(where: { $0 != " " }) ?? endIndex
        let end = lastIndex(where: { $0 != " " }).map { index(after: $0) } ?? start
        return self[start..<Swift.max(start, end)]
    }
}
