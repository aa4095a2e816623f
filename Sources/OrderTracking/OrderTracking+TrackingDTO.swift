import Foundation
import EnRouteModels

// Card 9's mapping: nothing above the repository sees a DTO.
extension OrderTracking {
    /// Maps the wire snapshot; `problem` carries the problem message or the cancel reason.
    init(_ dto: TrackingDTO) {
        let status: OrderStatus =
            switch dto.status {
            case .placed: .placed
            case .picking: .picking
            case .onTheWay: .onTheWay
            case .arriving: .arriving
            case .delivered: .delivered
            case .cancelled: .cancelled(reason: dto.problem ?? "")
            case .problem: .problem(message: dto.problem ?? "There's a problem with your order")
            }
        // A window the server sent backwards is still a window; never trap on it.
        let eta = dto.eta.map { min($0.earliest, $0.latest)...max($0.earliest, $0.latest) }
        let rider = dto.rider.map {
            RiderFix(
                coordinate: Coordinate(lat: $0.lat, lng: $0.lng), recordedAt: $0.recordedAt, firstName: $0.firstName)
        }
        self.init(
            orderID: OrderID(dto.orderId), version: dto.version, status: status, eta: eta, rider: rider,
            destination: dto.destination, generatedAt: dto.generatedAt, stopsBefore: dto.stopsBefore)
    }
}
