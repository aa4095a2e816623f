public import Foundation

/// Trips booked ahead: how far ahead they may be, and when their search begins.
///
/// Pure: the caller passes the time.
public enum BookingAhead {
    /// The soonest a trip may be booked for: anything sooner is asked for now.
    public static let earliest: TimeInterval = 15 * 60
    /// The latest: a week ahead.
    public static let latest: TimeInterval = 7 * 86_400

    /// Checks a requested `scheduledFor` against the window at `now`; nil (a trip asked for now) always passes.
    public static func check(_ scheduledFor: Date?, now: Date) throws(TripError) {
        guard let scheduledFor else { return }
        let ahead = scheduledFor.timeIntervalSince(now)
        guard ahead >= earliest, ahead <= latest else {
            throw TripError.invalid(
                pointer: "/scheduledFor", detail: "must be between 15 minutes and 7 days from now")
        }
    }

    /// When the search of a trip due at the pickup at `due` begins: the expected road time of the nearest supply to the
    /// pickup (`pickupSeconds`, or `fallbackPickup` when nobody is near), and `margin` for offers to be answered,
    /// before `due`.
    public static func matchingStart(
        due: Date, pickupSeconds: Double?, margin: TimeInterval, fallbackPickup: TimeInterval
    ) -> Date {
        due.addingTimeInterval(-((pickupSeconds ?? fallbackPickup) + margin))
    }
}
