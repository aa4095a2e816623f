import Foundation
import EnRouteModels

extension TripEvent {
    /// Reads one WebSocket text frame, `{"type": "tripUpdated", "id": "7", "data": {...}}`; nil for an unknown type.
    static func decode(envelope frame: Data) throws -> TripEvent? {
        struct Header: Decodable { let type: String }
        let decoder = WireCoding.decoder()
        switch LiveEventName(rawValue: try decoder.decode(Header.self, from: frame).type) {
        case .tripUpdated: return .tripUpdated(try decoder.decode(LiveEnvelope<Trip>.self, from: frame).data)
        case .driverMoved: return .driverMoved(try decoder.decode(LiveEnvelope<DriverLocation>.self, from: frame).data)
        case .tracking, .offer, .offerWithdrawn, .accessEnded, nil: return nil
        }
    }
}
