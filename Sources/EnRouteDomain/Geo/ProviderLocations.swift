public import Foundation
public import EnRouteModels

/// Who is online and where, as dispatch, ingest and the nearby map ask it: the seam between `ProviderPresence` in one
/// process's memory and a store that several nodes share (Redis).
///
/// The rules are `ProviderPresence`'s, and every implementation keeps them (one contract test runs them all): a
/// position is usable for `fixLifetime` after it was recorded, judged on the injected clock; only an online
/// provider with a usable position inside a city is findable, and a search looks only in the city holding its centre;
/// going offline keeps the position but makes the provider unfindable; a newer fix replaces an older one.
public protocol ProviderLocations: Sendable {
    /// How long a position stays usable after it was recorded, in seconds.
    var fixLifetime: TimeInterval { get }

    /// Marks the provider online or offline; a position given with it counts as a fix taken now. True when the
    /// provider has just become findable.
    @discardableResult
    func setOnline(_ provider: String, _ online: Bool, position: Coordinate?) async throws -> Bool

    /// Records a kept fix as the provider's latest position; true when the provider has just become findable.
    @discardableResult
    func update(_ provider: String, to coordinate: Coordinate, recordedAt: Date) async throws -> Bool

    /// The provider's latest position while it is usable.
    func position(of provider: String) async throws -> ProviderPresence.Position?

    /// True while the provider says they are online.
    func isOnline(_ provider: String) async throws -> Bool

    /// Every online provider, by id, with their latest position (nil before their first; a store shared by nodes may
    /// also forget one that is no longer usable).
    func onlineProviders() async throws -> [(id: String, position: ProviderPresence.Position?)]

    /// Online providers with a usable position within `radius` metres of `center`, in the city holding it, that
    /// `include` accepts, nearest first, at most `limit`.
    func nearest(
        to center: Coordinate, limit: Int, within radius: Double, where include: (String) -> Bool
    ) async throws -> [GeoHit<String>]
}

extension ProviderPresence: ProviderLocations {}
