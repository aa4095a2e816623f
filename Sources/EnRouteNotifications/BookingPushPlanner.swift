public import Foundation
public import EnRouteDomain
import EnRouteModels

/// The moments of a trip booked ahead that its customer is pushed about.
public enum BookingMoment: String, Codable, Sendable, CaseIterable {
    /// The search began, shortly before the booked time.
    case searching
    /// A booked ride ended with nobody found.
    case nobodyFound
    /// The card was refused when the search began, so the backend cancelled the trip before anyone was assigned.
    case declined

    /// The alert's title ("Finding your driver").
    public func title(_ kind: TripKind) -> String {
        switch self {
        case .searching: "Finding your \(Self.provider(kind))"
        case .nobodyFound: "No \(Self.provider(kind)) found"
        case .declined: "Booking cancelled"
        }
    }

    /// The alert's body, naming the booked time `time` ("08:30").
    public func body(_ kind: TripKind, at time: String) -> String {
        let trip = "your \(time) \(Self.noun(kind))"
        return switch self {
        case .searching: "For \(trip)"
        case .nobodyFound: "No \(Self.provider(kind)) was free for \(trip). You have not been charged."
        case .declined: "Your card was declined when we began looking for \(trip). You have not been charged."
        }
    }

    private static func provider(_ kind: TripKind) -> String { kind == .ride ? "driver" : "courier" }
    private static func noun(_ kind: TripKind) -> String { kind == .ride ? "ride" : "delivery" }
}

/// What one change of a trip booked ahead tells its customer: the moment, the kind of trip and its booked time.
public struct BookingReminder: Sendable, Equatable {
    public let moment: BookingMoment
    public let kind: TripKind
    /// When the provider is due at the pickup.
    public let scheduledFor: Date

    /// A reminder of `moment` for a `kind` trip booked for `scheduledFor`.
    public init(moment: BookingMoment, kind: TripKind, scheduledFor: Date) {
        self.moment = moment; self.kind = kind; self.scheduledFor = scheduledFor
    }
}

/// Turns changes of trips booked ahead (rides and deliveries) into customer alerts, in the change's own transaction:
/// the search began, a booked ride found nobody, or the card was refused when the search began.
public final class BookingPushPlanner: TripChangeObserver {
    /// The zone the booked time is shown in. Neither accounts nor cities carry a zone, so this is the service area's
    /// (UTC unless the deployment names one).
    public let timeZone: TimeZone
    /// How long a reminder is worth delivering.
    public let alertLifetime: TimeInterval

    /// A planner showing booked times in `timeZone`.
    public init(timeZone: TimeZone = TimeZone(identifier: "UTC")!, alertLifetime: TimeInterval = 3600) {
        self.timeZone = timeZone; self.alertLifetime = alertLifetime
    }

    public func tripChanged(from old: TripRecord?, to new: TripRecord, in transaction: any TripTransaction) async throws
    {
        guard let reminder = Self.reminder(from: old, to: new) else { return }
        let at = new.updatedAt
        var job = PushJob(
            kind: .booking, orderId: new.id, accountId: new.customerId, orderVersion: new.version,
            expiresAt: at.addingTimeInterval(alertLifetime))
        job.notificationId = "booking.\(new.id).\(new.version)"
        job.booking = reminder.moment
        job.bookedKind = reminder.kind
        job.bookedTime = Self.clockTime(reminder.scheduledFor, in: timeZone)
        try await transaction.enqueue(
            OutboxMessage(
                id: "apns.booking.\(new.id).\(new.version)", topic: PushJob.topic, payload: try job.encoded(),
                createdAt: at))
    }

    /// The reminder this change of a trip booked ahead calls for, if any; a trip asked for now never gets one.
    ///
    /// The search began: `matchingStartedAt` went from nil to a date on an existing trip still running. Nobody found:
    /// a ride reached `noDriversFound`. Declined: the backend cancelled the trip before a provider was assigned, with
    /// the card-declined reason. Every other change (a customer's cancel included) calls for none.
    public static func reminder(from old: TripRecord?, to new: TripRecord) -> BookingReminder? {
        guard let scheduledFor = new.scheduledFor, let old else { return nil }
        func reminder(_ moment: BookingMoment) -> BookingReminder {
            BookingReminder(moment: moment, kind: new.kind, scheduledFor: scheduledFor)
        }
        if old.matchingStartedAt == nil, new.matchingStartedAt != nil, new.status.isActive {
            return reminder(.searching)
        }
        guard old.status.isActive, !new.status.isActive else { return nil }
        if new.status == .ride(.noDriversFound) { return reminder(.nobodyFound) }
        if new.status == .ride(.cancelled) || new.status == .delivery(.cancelled), old.providerId == nil,
            let cancellation = new.cancellation, cancellation.by == .backend,
            cancellation.reason == TripLifecycle.declinedReason
        {
            return reminder(.declined)
        }
        return nil
    }

    /// `date` on the 24-hour clock of `zone` ("08:30").
    public static func clockTime(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }
}
