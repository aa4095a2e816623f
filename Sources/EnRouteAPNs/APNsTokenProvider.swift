import EnRouteNotifications
public import Foundation
public import EnRouteCrypto
import Synchronization

/// The provider JWT (ES256), minted rarely and reused by every request.
///
/// A token is reused until it is `refreshAfter` old (between 20 and 60 minutes, default 50). APNs'
/// `ExpiredProviderToken` mints again, but never sooner than 20 minutes after the last mint, since a
/// faster change is refused with `TooManyProviderTokenUpdates`.
public final class APNsTokenProvider: Sendable {
    private let signer: ES256Signer
    private let keyID: String
    private let teamID: String
    private let now: @Sendable () -> Date
    private let state = Mutex<(token: String, issuedAt: Date)?>(nil)
    /// A token is replaced once it is this old.
    public let refreshAfter: TimeInterval
    /// APNs refuses token changes more often than this.
    public static let minimumAge: TimeInterval = 20 * 60

    public init(
        signer: ES256Signer, keyID: String, teamID: String, refreshAfter: TimeInterval = 50 * 60,
        now: @escaping @Sendable () -> Date
    ) {
        self.signer = signer; self.keyID = keyID; self.teamID = teamID; self.now = now
        self.refreshAfter = min(max(refreshAfter, Self.minimumAge), 60 * 60)
    }

    /// The token to send now, minting when none exists or the current one is due.
    public func token() throws -> String {
        let at = now()
        return try state.withLock { s in
            if let s, at.timeIntervalSince(s.issuedAt) < refreshAfter, at >= s.issuedAt { return s.token }
            let token = try signer.token(keyID: keyID, claims: ["iss": teamID, "iat": Int(at.timeIntervalSince1970)])
            s = (token, at)
            return token
        }
    }

    /// APNs said `token` has expired: drop it if it is still current and old enough to replace.
    /// Returns true when the next `token()` will be a new one.
    @discardableResult
    public func expired(_ token: String) -> Bool {
        let at = now()
        return state.withLock { s in
            guard let current = s else { return true }
            guard current.token == token else { return true }  // someone minted already
            guard at.timeIntervalSince(current.issuedAt) >= Self.minimumAge else { return false }
            s = nil
            return true
        }
    }

    /// When the current token was minted (for tests and metrics).
    public var issuedAt: Date? { state.withLock { $0?.issuedAt } }
}
