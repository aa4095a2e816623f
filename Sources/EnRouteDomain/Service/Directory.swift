public import Foundation
public import EnRouteModels

/// A merchant that prepares deliveries.
public struct Merchant: Sendable, Equatable, Codable {
    public let id: String
    public let name: String
    public let location: Coordinate
    public init(id: String, name: String, location: Coordinate) { self.id = id; self.name = name; self.location = location }
}

/// What the customer is shown about a provider.
public struct ProviderProfile: Sendable, Equatable, Codable {
    public let id: String
    public let firstName: String
    public let lastInitial: String
    public let carModel: String
    public let plate: String
    public let rating: Double
    public let photoURL: URL

    public init(id: String, firstName: String, lastInitial: String = "", carModel: String = "", plate: String = "",
                rating: Double = 5.0, photoURL: URL) {
        self.id = id; self.firstName = firstName; self.lastInitial = lastInitial; self.carModel = carModel
        self.plate = plate; self.rating = rating; self.photoURL = photoURL
    }

    /// The seed 002 `Driver` for this profile.
    public var driver: Driver {
        Driver(id: id, name: lastInitial.isEmpty ? firstName : "\(firstName) \(lastInitial).", carModel: carModel, plate: plate,
               rating: rating, photoURL: photoURL)
    }
}

/// Looks up merchants and provider profiles.
public protocol PartyDirectory: Sendable {
    func merchant(id: String) -> Merchant?
    func provider(id: String) -> ProviderProfile
}

/// A fixed directory: the merchants given, and a plain profile for any provider not listed.
public struct StaticDirectory: PartyDirectory {
    private let merchants: [String: Merchant]
    private let providers: [String: ProviderProfile]
    private let photoBase: URL

    public init(merchants: [Merchant] = [], providers: [ProviderProfile] = [],
                photoBase: URL = URL(string: "https://photos.enroute.invalid/providers/")!) {
        self.merchants = Dictionary(merchants.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.providers = Dictionary(providers.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        self.photoBase = photoBase
    }

    public func merchant(id: String) -> Merchant? { merchants[id] }

    public func provider(id: String) -> ProviderProfile {
        providers[id] ?? ProviderProfile(id: id, firstName: id.prefix(1).uppercased() + id.dropFirst(),
                                         photoURL: photoBase.appendingPathComponent("\(id).jpg"))
    }

}
