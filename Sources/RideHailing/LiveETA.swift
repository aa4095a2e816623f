public import Foundation
public import EnRouteModels

/// The rider's newest ETA, from a trip version or from a driver's fix, with the ride tracking screen's guard: a late
/// answer never overwrites a newer one.
///
/// A `tripUpdated` counts as newer when its `version` is higher; a `driverMoved` when its `seq` is higher than the
/// newest fix applied. A higher version always wins, even over a fix's ETA that arrived before it. A new trip id
/// starts over.
public struct LiveETA: Sendable, Equatable {
    /// Seconds to the next stop, as of the newest answer applied; nil before one.
    public private(set) var seconds: Int?
    /// The same ETA as an absolute time, when the newest answer was a fix that carried it.
    public private(set) var latest: Date?
    /// The trip the ETA belongs to.
    public private(set) var tripID: String?
    /// The newest trip version applied.
    public private(set) var version: Int = .min
    /// The newest fix `seq` whose ETA was applied.
    public private(set) var seq: Int64 = .min

    /// No ETA yet.
    public init() {}

    /// Takes the ETA of a trip version; returns false when the version is not newer than the one applied.
    @discardableResult
    public mutating func apply(_ trip: Trip) -> Bool {
        if tripID != trip.id { self = LiveETA(); tripID = trip.id }
        guard trip.version > version else { return false }
        version = trip.version
        seconds = trip.etaSeconds
        latest = nil
        return true
    }

    /// Takes the ETA a fix carries; returns false when it has none, comes before any trip, or is not newer than the
    /// newest fix applied.
    @discardableResult
    public mutating func apply(_ location: DriverLocation) -> Bool {
        guard tripID != nil, let eta = location.etaSeconds, location.seq > seq else { return false }
        seq = location.seq
        seconds = eta
        latest = location.etaLatest
        return true
    }

    /// An order over everything applied, for the ride tracking screen's `DriverUpdate.sequence`: it grows whenever a
    /// newer version or fix is applied and never falls (the version in the high 32 bits, the fix's `seq` in the low
    /// 32).
    public var sequence: Int {
        let v = min(Int(clamping: max(0, version)), 0x7FFF_FFFF)
        let s = min(Int(clamping: max(0, seq)), 0xFFFF_FFFF)
        return v << 32 | s
    }
}
