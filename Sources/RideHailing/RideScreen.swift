public import EnRouteModels

/// The `enroute ride` screen as plain text lines: state, driver, ETA, fare and the animated marker.
public enum RideScreen {
    /// The lines to print for `state`, with the marker as drawn at this moment.
    public static func render(_ state: TripViewState, marker: MarkerFrame?) -> [String] {
        var lines: [String] = []
        if let trip = state.trip {
            let booked = trip.isBookedAhead ? trip.scheduledFor.map { "Booked for \(ISO8601.format($0))" } : nil
            let title = booked ?? title(trip.state)
            lines.append("Trip \(trip.id) · \(title) (v\(trip.version))")
            if let driver = trip.driver {
                lines.append(
                    "Driver: \(driver.name) · \(driver.carModel) \(driver.plate) · ★ "
                        + "\(decimal(driver.rating, places: 1))"
                )
            }
            if let eta = state.etaSeconds, trip.state.isActive {
                lines.append("\(trip.state == .onTrip ? "Arrival" : "Pickup") in \(duration(seconds: eta))")
            }
            if let fare = trip.fare { lines.append("Fare: \(money(fare))") }
            if let marker {
                let arrow = compassArrows[Int((marker.heading / 45).rounded()) % 8]
                lines.append(
                    "Car: \(decimal(marker.coordinate.lat, places: 5)), \(decimal(marker.coordinate.lng, places: 5)) "
                        + "\(arrow) \(Int(marker.heading.rounded()) % 360)° \(compass(marker.heading))"
                        + (marker.isAnimating ? " (moving)" : ""))
            }
        } else if !state.estimates.isEmpty {
            lines.append("Choose a ride:")
            for estimate in state.estimates {
                let price =
                    state.refresh(of: estimate.productID).map { refresh in
                        refresh.priceChanged
                            ? "\(money(refresh.before)) → \(money(refresh.after)) (new price)"
                            : "\(money(refresh.after)) (refreshed)"
                    } ?? money(estimate.fare)
                lines.append("  \(estimate.productID): \(price), pickup in \(duration(seconds: estimate.etaSeconds))")
            }
            if state.quotesExpired {
                lines.append("Prices expired; refreshing…")
            } else if let left = state.quoteSecondsLeft {
                lines.append(left > 0 ? "Prices held for \(duration(seconds: left))" : "Prices expired; refreshing…")
            }
        } else {
            lines.append(state.isRequesting ? "Requesting a ride…" : "No ride yet.")
        }
        if state.isRequesting, state.trip != nil { lines.append("Requesting a ride…") }
        if state.isCancelling { lines.append("Cancelling…") }
        if let prompt = state.prompt {
            lines.append("! \(prompt.message)")
            if case .challenge(let url) = prompt { lines.append("  \(url.absoluteString)") }
        }
        if let error = state.errorMessage { lines.append("! \(error)") }
        return lines
    }

    /// A receipt as lines: each price line (with its reason), the total, the card and the payment's state.
    public static func receipt(_ receipt: Receipt) -> [String] {
        var lines = ["Receipt for trip \(receipt.tripId)"]
        let width = max(24, receipt.lines.map(\.label.count).max() ?? 0)
        let row = { (label: String, amount: Money) in
            label + String(repeating: " ", count: max(1, width + 2 - label.count)) + money(amount)
        }
        for line in receipt.lines {
            lines.append("  " + row(line.label, line.amount) + (line.reason.map { " (\($0))" } ?? ""))
        }
        lines.append("  " + row("Total", receipt.total))
        if let card = receipt.card {
            lines.append("Paid with \(card.brand.capitalized) ···· \(card.last4) · \(paymentTitle(receipt.payment))")
        } else {
            lines.append("Payment: \(paymentTitle(receipt.payment))")
        }
        return lines
    }

    /// The rider-facing name of a payment state.
    static func paymentTitle(_ status: PaymentStatus) -> String {
        switch status {
        case .authorizing: "authorizing"
        case .actionRequired: "waiting for your bank"
        case .held: "held"
        case .captured, .partiallyCaptured: "paid"
        case .released: "released, nothing charged"
        case .failed: "failed"
        case .debt: "owed"
        }
    }

    /// The rider-facing name of a state.
    static func title(_ state: TripState) -> String {
        switch state {
        case .searching: "Finding your driver…"
        case .driverAssigned: "Driver on the way"
        case .driverArrived: "Driver is here"
        case .onTrip: "On the way"
        case .completed: "Arrived"
        case .cancelled: "Cancelled"
        case .noDriversFound: "No drivers available"
        }
    }

    /// "45 s", "4 min 10 s", "12 min".
    static func duration(seconds: Int) -> String {
        let minutes = seconds / 60, rest = seconds % 60
        if minutes == 0 { return "\(rest) s" }
        return rest == 0 ? "\(minutes) min" : "\(minutes) min \(rest) s"
    }

    /// "USD 12.50"; minor units with the currency's own number of decimals.
    static func money(_ money: Money) -> String {
        MoneyFormat.string(amountMinor: money.amountMinor, currency: money.currency)
    }

    /// "N", "NE", ... for a heading in degrees.
    static func compass(_ heading: Double) -> String {
        compassNames[Int((heading / 45).rounded()) % 8]
    }

    private static func decimal(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int((abs(value) * scale).rounded())
        let whole = scaled / Int(scale), fraction = String(scaled % Int(scale))
        let padded = String(repeating: "0", count: places - fraction.count) + fraction
        return "\(value < 0 && scaled != 0 ? "-" : "")\(whole).\(padded)"
    }

    private static let compassNames = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
    private static let compassArrows = ["↑", "↗", "→", "↘", "↓", "↙", "←", "↖"]
}
