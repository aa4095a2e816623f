public import Foundation
public import EnRouteModels

/// One thing a merchant sells.
public struct CatalogueItem: Sendable, Equatable, Codable {
    public let sku: String
    public let name: String
    /// The price in minor units (the wire `Money`).
    public let price: Money
    public init(sku: String, name: String, price: Money) { self.sku = sku; self.name = name; self.price = price }
}

/// The hours a merchant is open on one day of the week, local time.
public struct OpeningHours: Sendable, Equatable, Codable {
    /// The days a week has, in order: `mon` ... `sun`.
    public static let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    /// `mon` ... `sun`.
    public let day: String
    /// `HH:MM`, 24-hour.
    public let opens: String
    /// `HH:MM`, 24-hour, after `opens`.
    public let closes: String
    public init(day: String, opens: String, closes: String) { self.day = day; self.opens = opens; self.closes = closes }

    /// Minutes after midnight of an `HH:MM` time, nil if it is not one.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            let h = Int(parts[0]), let m = Int(parts[1]), (0...24).contains(h), (0...59).contains(m),
            h * 60 + m <= 24 * 60
        else { return nil }
        return h * 60 + m
    }
}

/// A merchant that prepares deliveries: where it is, when it is open and what it sells.
public struct Merchant: Sendable, Equatable, Codable {
    public let id: String
    public let name: String
    /// The street address as the customer reads it.
    public let address: String
    /// Where couriers collect.
    public let position: Coordinate
    public let openingHours: [OpeningHours]
    public let catalogue: [CatalogueItem]

    public init(
        id: String, name: String, address: String = "", position: Coordinate, openingHours: [OpeningHours] = [],
        catalogue: [CatalogueItem] = []
    ) {
        self.id = id; self.name = name; self.address = address; self.position = position
        self.openingHours = openingHours; self.catalogue = catalogue
    }

    /// The catalogue item with `sku`, if the merchant sells it.
    public func item(sku: String) -> CatalogueItem? { catalogue.first { $0.sku == sku } }

    /// The first field that breaks a rule, as a JSON pointer and what is wrong; nil when the merchant is valid.
    public func problem() -> (pointer: String, detail: String)? {
        if let p = DirectoryRules.text(name, "/name", max: 200) { return p }
        if let p = DirectoryRules.text(address, "/address", max: 500) { return p }
        if !(-90...90).contains(position.lat) || !position.lat.isFinite {
            return ("/position/lat", "must be between -90 and 90")
        }
        if !(-180...180).contains(position.lng) || !position.lng.isFinite {
            return ("/position/lng", "must be between -180 and 180")
        }
        for (i, hours) in openingHours.enumerated() {
            if !OpeningHours.days.contains(hours.day) {
                return ("/openingHours/\(i)/day", "must be one of \(OpeningHours.days.joined(separator: ", "))")
            }
            guard let opens = OpeningHours.minutes(hours.opens) else {
                return ("/openingHours/\(i)/opens", "must be a time HH:MM")
            }
            guard let closes = OpeningHours.minutes(hours.closes) else {
                return ("/openingHours/\(i)/closes", "must be a time HH:MM")
            }
            if closes <= opens { return ("/openingHours/\(i)/closes", "must be after opens") }
        }
        var skus = Set<String>()
        for (i, item) in catalogue.enumerated() {
            if let p = DirectoryRules.text(item.sku, "/catalogue/\(i)/sku", max: 64) { return p }
            if !skus.insert(item.sku).inserted { return ("/catalogue/\(i)/sku", "repeats an earlier item's sku") }
            if let p = DirectoryRules.text(item.name, "/catalogue/\(i)/name", max: 200) { return p }
            if item.price.amountMinor < 0 || item.price.amountMinor > 100_000_000 {
                return ("/catalogue/\(i)/price/amountMinor", "must be from 0 to 100000000")
            }
            if item.price.currency.count != 3 || !item.price.currency.allSatisfy({ $0.isASCII && $0.isUppercase }) {
                return ("/catalogue/\(i)/price/currency", "must be an ISO 4217 code (three upper-case letters)")
            }
        }
        return nil
    }
}

/// A provider's vehicle as the customer is shown it.
public struct Vehicle: Sendable, Equatable, Codable {
    public let model: String
    public let plate: String
    public init(model: String, plate: String) { self.model = model; self.plate = plate }
}

/// What the customer is shown about a provider.
public struct ProviderProfile: Sendable, Equatable, Codable {
    public let id: String
    public let firstName: String
    /// The family name, or only its initial; the customer sees the initial.
    public let lastName: String
    public let vehicle: Vehicle?
    public let rating: Double
    public let photoURL: URL

    /// A profile with its vehicle.
    public init(
        id: String, firstName: String, lastName: String = "", vehicle: Vehicle?, rating: Double = 5.0, photoURL: URL
    ) {
        self.id = id; self.firstName = firstName; self.lastName = lastName; self.vehicle = vehicle
        self.rating = rating; self.photoURL = photoURL
    }

    /// A profile from the `Driver` fields; an empty model and plate mean no vehicle.
    public init(
        id: String, firstName: String, lastInitial: String = "", carModel: String = "", plate: String = "",
        rating: Double = 5.0, photoURL: URL
    ) {
        self.init(
            id: id, firstName: firstName, lastName: lastInitial,
            vehicle: carModel.isEmpty && plate.isEmpty ? nil : Vehicle(model: carModel, plate: plate), rating: rating,
            photoURL: photoURL)
    }

    /// The initial of `lastName`, upper-cased ("" without one).
    public var lastInitial: String { lastName.first.map { String($0).uppercased() } ?? "" }

    /// The `Driver` for this profile.
    public var driver: Driver {
        Driver(
            id: id, name: lastInitial.isEmpty ? firstName : "\(firstName) \(lastInitial).",
            carModel: vehicle?.model ?? "",
            plate: vehicle?.plate ?? "", rating: rating, photoURL: photoURL)
    }

    /// The first field that breaks a rule, as a JSON pointer and what is wrong; nil when the profile is valid.
    public func problem() -> (pointer: String, detail: String)? {
        if let p = DirectoryRules.text(firstName, "/firstName", max: 100) { return p }
        if lastName.count > 100 { return ("/lastName", "must be at most 100 characters") }
        if let vehicle {
            if let p = DirectoryRules.text(vehicle.model, "/vehicle/model", max: 100) { return p }
            if let p = DirectoryRules.text(vehicle.plate, "/vehicle/plate", max: 20) { return p }
        }
        if !rating.isFinite || !(0...5).contains(rating) { return ("/rating", "must be between 0 and 5") }
        guard let scheme = photoURL.scheme?.lowercased(), scheme == "https" || scheme == "http", photoURL.host != nil
        else {
            return ("/photoURL", "must be an absolute http or https URL")
        }
        return nil
    }
}

/// The rules directory ids and texts follow.
public enum DirectoryRules {
    /// Whether `id` may name a merchant or provider: 1 to 64 of letters, digits, `.`, `_` and `-`.
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.count)
            && id.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
            }
    }

    static func text(_ value: String, _ pointer: String, max: Int) -> (pointer: String, detail: String)? {
        value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || value.count > max
            ? (pointer, "must be 1 to \(max) characters, not blank") : nil
    }
}

/// Looks up merchants and provider profiles (the reads the hot path makes; answered from memory).
public protocol PartyDirectory: Sendable {
    /// The merchant with `id`, nil if there is none.
    func merchant(id: String) -> Merchant?
    /// The provider's profile, or a plain one for a provider the directory does not list.
    func provider(id: String) -> ProviderProfile
}

extension PartyDirectory {
    /// The plain profile shown for a provider the directory does not list.
    public static func plainProfile(_ id: String) -> ProviderProfile {
        ProviderProfile(
            id: id, firstName: id.prefix(1).uppercased() + id.dropFirst(),
            photoURL: URL(string: "https://photos.enroute.invalid/providers/")!.appendingPathComponent("\(id).jpg"))
    }
}

/// A fixed directory: the merchants given, and a plain profile for any provider not listed. Also the
/// content a store-backed directory is seeded with.
public struct StaticDirectory: PartyDirectory {
    public let merchants: [Merchant]
    public let providers: [ProviderProfile]
    private let merchantsByID: [String: Merchant]
    private let providersByID: [String: ProviderProfile]

    public init(merchants: [Merchant] = [], providers: [ProviderProfile] = []) {
        self.merchants = merchants; self.providers = providers
        merchantsByID = Dictionary(merchants.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        providersByID = Dictionary(providers.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public func merchant(id: String) -> Merchant? { merchantsByID[id] }

    public func provider(id: String) -> ProviderProfile { providersByID[id] ?? Self.plainProfile(id) }
}
