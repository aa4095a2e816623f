public import EnRouteModels
import Foundation

/// Blurs provider positions for the decorative map before a request (`GET /v1/drivers/nearby`): each position is moved
/// by a fixed per-provider offset, then snapped to a grid of about 100 m.
///
/// The offset is derived from the provider id and a secret seed, so a marker does not jitter between
/// polls, and a snapped marker does not reveal the provider's exact position.
public struct NearbyCoarsening: Sendable {
    /// Grid step in metres.
    public let step: Double
    /// Largest offset in metres along each axis.
    public let jitter: Double
    private let seed: UInt64

    public init(seed: UInt64, step: Double = 100, jitter: Double = 60) {
        self.seed = seed; self.step = step; self.jitter = jitter
    }

    /// The coarse marker for `provider` at `coordinate`.
    public func marker(for provider: String, at coordinate: Coordinate) -> Coordinate {
        let metresPerDegree = 111_195.0
        let cosLat = max(0.01, cos(coordinate.lat * .pi / 180))
        let h = Self.fnv1a(provider, seed: seed)
        let jy = (Double(h & 0xFFFF) / 65_535 * 2 - 1) * jitter
        let jx = (Double((h >> 16) & 0xFFFF) / 65_535 * 2 - 1) * jitter
        let latStep = step / metresPerDegree, lngStep = step / (metresPerDegree * cosLat)
        let lat = ((coordinate.lat + jy / metresPerDegree) / latStep).rounded() * latStep
        let lng = ((coordinate.lng + jx / (metresPerDegree * cosLat)) / lngStep).rounded() * lngStep
        // Six decimals (about 0.1 m) keep the JSON short without undoing the snapping.
        return Coordinate(
            lat: min(90, max(-90, (lat * 1e6).rounded() / 1e6)), lng: min(180, max(-180, (lng * 1e6).rounded() / 1e6)))
    }

    /// A stable 64-bit hash (FNV-1a), the same in every process, unlike `Hasher`.
    static func fnv1a(_ text: String, seed: UInt64) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x100_0000_01b3
        }
        // Final avalanche so that similar ids get unrelated offsets.
        h ^= h >> 33; h = h &* 0xff51_afd7_ed55_8ccd; h ^= h >> 33
        return h
    }
}
