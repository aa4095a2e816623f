/// `--faults loss=0.1,partition=20,every=120`: a share of requests lost, and dead zones of `partition` seconds that
/// begin every `every` seconds, each device at its own phase (so the city is never all dark at once).
public struct FaultPlan: Sendable, Equatable, CustomStringConvertible {
    /// The share of requests that fail as if the network dropped them, 0..<1.
    public var loss: Double
    /// Seconds a dead zone lasts; 0 for none.
    public var partitionSeconds: Double
    /// Seconds from the start of one dead zone to the next.
    public var everySeconds: Double

    /// No faults.
    public static let none = FaultPlan(loss: 0, partitionSeconds: 0, everySeconds: 0)

    /// A plan with every field given.
    public init(loss: Double, partitionSeconds: Double, everySeconds: Double) {
        self.loss = loss; self.partitionSeconds = partitionSeconds; self.everySeconds = everySeconds
    }

    /// Reads `loss=F,partition=S,every=S` (any subset, any order; `none` for no faults).
    public static func parse(_ text: String) throws(SimulationOptionError) -> FaultPlan {
        if text == "none" || text == "off" { return .none }
        var plan = FaultPlan.none
        var seen: Set<String> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pieces.count == 2, let value = Double(pieces[1]), value.isFinite else {
                throw SimulationOptionError("--faults: '\(part)' is not KEY=NUMBER (loss=0.1,partition=20,every=120)")
            }
            guard seen.insert(pieces[0]).inserted else {
                throw SimulationOptionError("--faults: \(pieces[0]) is given twice")
            }
            switch pieces[0] {
            case "loss":
                guard (0..<1).contains(value) else {
                    throw SimulationOptionError("--faults: loss must be at least 0 and below 1, got \(pieces[1])")
                }
                plan.loss = value
            case "partition":
                guard value >= 0 else {
                    throw SimulationOptionError("--faults: partition must be seconds ≥ 0, got \(pieces[1])")
                }
                plan.partitionSeconds = value
            case "every":
                guard value > 0 else {
                    throw SimulationOptionError("--faults: every must be seconds > 0, got \(pieces[1])")
                }
                plan.everySeconds = value
            default:
                throw SimulationOptionError("--faults: unknown fault '\(pieces[0])' (known: loss, partition, every)")
            }
        }
        if plan.partitionSeconds > 0 {
            guard plan.everySeconds > 0 else {
                throw SimulationOptionError("--faults: partition needs every=SECONDS, how often one starts")
            }
            guard plan.partitionSeconds < plan.everySeconds else {
                throw SimulationOptionError(
                    "--faults: partition (\(plan.partitionSeconds) s) must be shorter than every "
                        + "(\(plan.everySeconds) s)"
                )
            }
        }
        return plan
    }

    /// Whether a device whose dead zones are shifted by `phase` (0..<1 of a period) is in one at `second` of the run.
    public func isPartitioned(atSecond second: Double, phase: Double) -> Bool {
        guard partitionSeconds > 0, everySeconds > 0 else { return false }
        let shifted = second + phase * everySeconds
        let into = shifted.truncatingRemainder(dividingBy: everySeconds)
        // The first period is clean, so every device gets online before its first dead zone.
        return second >= everySeconds && into >= everySeconds - partitionSeconds
    }

    public var description: String {
        self == .none ? "none" : "loss=\(loss),partition=\(Int(partitionSeconds)),every=\(Int(everySeconds))"
    }
}

/// A flag value the simulator cannot use, worded for the command line.
public struct SimulationOptionError: Error, Equatable, CustomStringConvertible {
    public let description: String
    /// An error reading `message`.
    public init(_ message: String) { description = message }
}
