public import Foundation

extension SimulationReport {
    /// The report as a two-column table for the terminal, with the counts behind it.
    public func table(_ seen: SimulationObservations) -> String {
        func f(_ value: Double?, _ digits: Int = 1) -> String {
            value.map { String(format: "%.\(digits)f", $0) } ?? "–"
        }
        var rows: [(String, String)] = [
            ("demand", demand?.text ?? "unknown"),
            (
                "trips completed",
                "\(tripsCompleted) (rides \(seen.ridesCompleted) of \(seen.ridesRequested), orders "
                    + "\(seen.ordersDelivered) of \(seen.ordersPlaced))"
            ),
            ("ETA honesty (arrival inside last window)", Self.percent(etaHonesty)),
            ("ETA window median width", "\(f(etaRangeMedianMinutes)) min"),
            ("ETA honesty (every second on the way)", Self.percent(etaHonestyOnTheWay)),
            ("ETA error MAE / p90", "\(f(etaErrorSeconds.mae, 0)) s / \(f(etaErrorSeconds.p90, 0)) s"),
            ("pins shown live with a fix > 20 s", "\(staleShownAsLive) of \(seen.livePinAges.count) live pins drawn"),
            (
                "snapshot age shown p50 / p99",
                "\(f(snapshotAgeShownSeconds.p50)) s / \(f(snapshotAgeShownSeconds.p99)) s"
            ),
            ("out-of-order drops", "\(outOfOrderDrops)"),
            ("Live Activity stale rate", Self.percent(liveActivityStaleRate)),
            (
                "polls / order-minute picking · on the way · background",
                "\(f(pollsPerOrderMinute.picking, 2)) · \(f(pollsPerOrderMinute.onTheWay, 2)) · "
                    + "\(f(pollsPerOrderMinute.background, 2))"
            ),
            ("time to match p50 / p99", "\(f(matchSeconds.p50)) s / \(f(matchSeconds.p99)) s"),
            ("no-provider rate", Self.percent(noProviderRate)),
            ("dispatch policy", dispatchPolicyText),
            (
                "pickup time mean / p90 (assignment to pickup)",
                "\(f(dispatch.pickupSeconds.mean)) s / \(f(dispatch.pickupSeconds.p90)) s"
            ),
            (
                "request to assignment p50 / p99 (rides and orders)",
                "\(f(dispatch.matchSeconds.p50)) s / \(f(dispatch.matchSeconds.p99)) s"
            ),
            (
                "requests matched · empty km per matched trip",
                "\(Self.percent(dispatch.matchedShare)) of \(Set(seen.tripIDs).count) · "
                    + "\(f(dispatch.emptyKmPerTrip, 2)) km"
            ),
            (
                "steps lost / applied twice",
                "\(stepsLost.map(String.init) ?? "unknown") / \(stepsDuplicated.map(String.init) ?? "unknown")"
                    + (seen.unsentSteps > 0 ? " (\(seen.unsentSteps) never sent: still in an outbox at the end)" : "")
            ),
            (
                "offers received · accepted · declined · expired",
                "\(seen.offersReceived) · \(seen.offersAccepted) · \(seen.offersDeclined) · \(offersExpired)"
            ),
            ("payments captured / expected", "\(paymentsCaptured.map(String.init) ?? "unknown") / \(paymentsExpected)"),
            ("ledger balanced", ledgerBalanced.map { $0 ? "yes" : "NO" } ?? "unknown"),
            (
                "fixes recorded / accepted by the server",
                "\(seen.fixesRecorded) / \(seen.fixesAccepted) (\(seen.uploadFailures) failed uploads, retried)"
            ),
            (
                "rides refused at payment · cancelled · challenges answered",
                "\(seen.ridesRefusedPayment) · \(seen.ridesCancelled) · \(seen.challengesAnswered)"
            ),
            ("tips · ratings", "\(seen.tips) · \(seen.ratings)"),
        ]
        // The rides booked ahead, the stacked orders and the busy-time prices follow the dispatch rows.
        let afterDispatch = (rows.firstIndex { $0.0.hasPrefix("requests matched") } ?? rows.count - 1) + 1
        rows.insert(contentsOf: scheduledRows(seen) + stackedRows() + surgeRows(), at: afterDispatch)
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(
            separator: "\n")
    }

    /// A share as a percentage with one decimal ("97.5 %"), or a dash when there is none.
    static func percent(_ value: Double?) -> String { value.map { String(format: "%.1f %%", $0 * 100) } ?? "–" }

    /// The rows of the rides booked ahead, with why they missed; none when no ride was booked.
    func scheduledRows(_ seen: SimulationObservations) -> [(String, String)] {
        let booked = dispatch.scheduled, misses = ScheduledMisses(seen)
        guard booked.count > 0 else { return [] }
        return [
            (
                "booked ahead · matched before due · at pickup ±5 min",
                "\(booked.count) · \(Self.percent(booked.matchedBeforeDueShare)) · \(Self.percent(booked.onTimeShare))"
            ),
            (
                "booked unmatched (cancelled · no driver · waiting)",
                "\(misses.cancelledUnmatched) · \(misses.noProvider) · \(misses.unfinished)"
            ),
            (
                "booked matched late · at pickup early · late · never",
                "\(misses.matchedLate) · \(misses.arrivedEarly) · \(misses.arrivedLate) · \(misses.neverAtPickup)"
            ),
        ]
    }

    /// `greedy`, `batched, window 2 s`, or unknown (a server that did not say).
    var dispatchPolicyText: String {
        guard let policy = dispatch.policy else { return "unknown" }
        guard let window = dispatch.windowSeconds else { return policy }
        return policy + ", window " + String(format: "%g", window) + " s"
    }

    /// One row per delivered order, times in seconds relative to its arrival at the door (negative: before it):
    /// when the customer saw it delivered, the last and the first on-the-way window shown, and how many seconds a
    /// window was on screen on the way and how many of those held the arrival. For finding the orders a window failed.
    public static func arrivalsCSV(_ seen: SimulationObservations) -> String {
        func rel(_ date: Date?, _ arrival: Date) -> String {
            date.map { String(format: "%.0f", $0.timeIntervalSince(arrival)) } ?? ""
        }
        var lines = ["order,seenDelivered,lastEarliest,lastLatest,firstEarliest,firstLatest,secondsShown,secondsHeld"]
        for (n, a) in seen.orderArrivals.enumerated() {
            let shown = a.onTheWayWindows.values.reduce(0, +)
            let held = a.onTheWayWindows.filter { $0.key.contains(a.arrival) }.values.reduce(0, +)
            lines.append(
                [
                    String(n + 1), rel(a.deliveredAt, a.arrival), rel(a.lastWindow?.lowerBound, a.arrival),
                    rel(a.lastWindow?.upperBound, a.arrival),
                    rel(a.firstOnTheWayWindow?.lowerBound, a.arrival),
                    rel(a.firstOnTheWayWindow?.upperBound, a.arrival),
                    String(shown), String(held),
                ].joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A self-contained page: the table and inline SVG charts (ETA error, snapshot age, time to match); no external
    /// assets.
    public func html(_ seen: SimulationObservations, title: String) -> String {
        let errors =
            seen.orderArrivals.compactMap { a in
                a.firstOnTheWayWindow.map { a.arrival.timeIntervalSince(Self.middle($0)) }
            }
            + seen.rideArrivals.compactMap { r in r.promised.map { r.arrivedAt.timeIntervalSince($0) } }
        let honest = seen.orderArrivals.compactMap(\.lastWindow).count
        let pickups = seen.assignments.values.compactMap { a in a.atPickup.map { $0.timeIntervalSince(a.assignedAt) } }
        let rows = table(seen).split(separator: "\n").map { line -> String in
            let text = String(line)
            let split =
                text.range(of: "  ", options: .backwards).map {
                    text[..<$0.lowerBound].trimmingCharacters(in: .whitespaces)
                } ?? text
            let value = text.dropFirst(split.count).trimmingCharacters(in: .whitespaces)
            return "<tr><th>\(Self.escape(split))</th><td>\(Self.escape(value))</td></tr>"
        }.joined(separator: "\n")
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>\(Self.escape(title))</title>
            <style>body{font:14px \
            system-ui,sans-serif;margin:2em;max-width:60em;color:#222}th{text-align:left;padding-right:2em;\
            font-weight:normal;color:#555}
            td{font-variant-numeric:tabular-nums}h2{margin-top:2em;font-size:1.1em}svg{background:#fafafa;border:1px \
            solid #ddd}</style></head>
            <body><h1>\(Self.escape(title))</h1>
            <table>\(rows)</table>
            <h2>ETA error (actual − promised), seconds; \(errors.count) trips</h2>
            \(Self.histogram(errors, bins: 24, unit: "s"))
            <h2>Snapshot age when shown, seconds; \(seen.snapshotAgesShown.count) screens (\(honest) orders shown a \
            window)</h2>
            \(Self.histogram(seen.snapshotAgesShown, bins: 24, unit: "s"))
            <h2>Time to match, seconds; \(seen.matchSeconds.count) rides</h2>
            \(Self.histogram(seen.matchSeconds, bins: 24, unit: "s"))
            <h2>Pickup time (assignment to pickup), seconds; \(pickups.count) trips</h2>
            \(Self.histogram(pickups, bins: 24, unit: "s"))
            <h2>Polls per order-minute by stage (seed 000's cadence: ≤ 4 picking, ≤ 12 on the way, 0 in the \
            background)</h2>
            \(Self.bars([
                ("picking", pollsPerOrderMinute.picking ?? 0, 4), ("on the way", pollsPerOrderMinute.onTheWay ?? 0, 12),
                ("background", pollsPerOrderMinute.background ?? 0, 0),
            ]))
            </body></html>
            """
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// An SVG histogram of `values` in `bins` equal bins between their minimum and maximum.
    static func histogram(_ values: [Double], bins: Int, unit: String) -> String {
        let width = 640.0, height = 180.0, pad = 24.0
        guard let low = values.min(), let high = values.max() else {
            return
                "<svg width=\"\(Int(width))\" height=\"40\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"8\" "
                + "y=\"24\">no data</text></svg>"
        }
        let span = max(high - low, 1e-9)
        var counts = [Int](repeating: 0, count: bins)
        for v in values { counts[min(bins - 1, Int((v - low) / span * Double(bins)))] += 1 }
        let top = Double(counts.max() ?? 1), barWidth = (width - 2 * pad) / Double(bins)
        let bars = counts.enumerated().map { i, c in
            let h = (height - 2 * pad) * Double(c) / top
            return String(
                format:
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    + "fill=\"#3b7dd8\"><title>%d</title></rect>",
                pad + Double(i) * barWidth, height - pad - h, barWidth - 1, h, c)
        }.joined()
        let labels =
            "<text x=\"\(Int(pad))\" y=\"\(Int(height - 6))\" font-size=\"11\">\(Int(low.rounded())) \(unit)</text>"
            + "<text x=\"\(Int(width - pad))\" y=\"\(Int(height - 6))\" font-size=\"11\" "
            + "text-anchor=\"end\">\(Int(high.rounded())) \(unit)</text>"
        return
            "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" "
            + "xmlns=\"http://www.w3.org/2000/svg\">\(bars)\(labels)</svg>"
    }

    /// Horizontal bars with a goal mark each.
    static func bars(_ rows: [(String, Double, Double)]) -> String {
        let width = 640.0, rowHeight = 28.0, left = 110.0
        let top = max(rows.map { max($0.1, $0.2) }.max() ?? 1, 1) * 1.2
        let scale = (width - left - 20) / top
        let items = rows.enumerated().map { i, row in
            let y = Double(i) * rowHeight + 8
            return "<text x=\"4\" y=\"\(Int(y + 12))\" font-size=\"12\">\(escape(row.0))</text>"
                + String(
                    format: "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.1f\" height=\"16\" fill=\"#3b7dd8\"/>"
                        + "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#d33\" "
                        + "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.0f\" font-size=\"11\">%.2f</text>",
                    left, y, row.1 * scale, left + row.2 * scale, left + row.2 * scale, y - 2, y + 18,
                    left + row.1 * scale + 4, y + 12, row.1)
        }.joined()
        return
            "<svg width=\"\(Int(width))\" height=\"\(Int(Double(rows.count) * rowHeight + 12))\" "
            + "xmlns=\"http://www.w3.org/2000/svg\">\(items)</svg>"
    }
}
