import Foundation
import EnRouteDomain
import EnRouteModels

/// The merchants the demo and the simulator order from, in central Helsinki.
enum DemoDirectory {
    static let helsinki = StaticDirectory(merchants: [
        Merchant(id: "m1", name: "Kamppi Kitchen", location: Coordinate(lat: 60.1689, lng: 24.9316)),
        Merchant(id: "m2", name: "Kallio Deli", location: Coordinate(lat: 60.1841, lng: 24.9497)),
        Merchant(id: "m3", name: "Punavuori Pharmacy", location: Coordinate(lat: 60.1612, lng: 24.9398)),
    ])
}
