public import Foundation
public import EnRouteModels
import Synchronization

/// One page of a directory list, in id order, and where the next starts.
public struct DirectoryPage<Item: Sendable & Equatable>: Sendable, Equatable {
    public let items: [Item]
    /// The id to pass as `after` for the next page; nil on the last page.
    public let next: String?
    public init(items: [Item], next: String?) { self.items = items; self.next = next }
}

/// Where merchants and provider profiles live. Writes are async (they reach the store); the lookups
/// `PartyDirectory` makes on the hot path (`merchant(id:)`, `provider(id:)`) are answered from an
/// in-memory view the adapter keeps current on every write it commits.
public protocol DirectoryRepository: PartyDirectory {
    /// Creates or replaces the merchant with `merchant.id`; true when it was created.
    @discardableResult func save(_ merchant: Merchant) async throws -> Bool
    /// Creates or replaces the provider profile with `profile.id`; true when it was created.
    @discardableResult func save(_ profile: ProviderProfile) async throws -> Bool
    /// The provider's stored profile, nil if the directory has none (unlike `provider(id:)`, no plain stand-in).
    func storedProvider(id: String) -> ProviderProfile?
    /// Merchants in id order after `cursor`, at most `limit`, read from the store by its key.
    func merchants(after cursor: String?, limit: Int) async throws -> DirectoryPage<Merchant>
    /// Provider profiles in id order after `cursor`, at most `limit`, read from the store by its key.
    func providers(after cursor: String?, limit: Int) async throws -> DirectoryPage<ProviderProfile>
    /// Writes `content`'s merchants and provider profiles at once, creating or replacing each (for a backend being
    /// built).
    func seed(_ content: StaticDirectory) throws
}

/// The in-memory view a directory adapter answers lookups from: every merchant and profile by id.
public final class DirectoryView: Sendable {
    private struct State {
        var merchants: [String: Merchant] = [:]
        var providers: [String: ProviderProfile] = [:]
    }
    private let state = Mutex(State())

    public init(merchants: [Merchant] = [], providers: [ProviderProfile] = []) {
        state.withLock { s in
            for m in merchants { s.merchants[m.id] = m }
            for p in providers { s.providers[p.id] = p }
        }
    }

    public func merchant(id: String) -> Merchant? { state.withLock { $0.merchants[id] } }
    public func provider(id: String) -> ProviderProfile? { state.withLock { $0.providers[id] } }
    /// Puts `merchant` in the view; true when it was not there.
    @discardableResult public func put(_ merchant: Merchant) -> Bool {
        state.withLock { $0.merchants.updateValue(merchant, forKey: merchant.id) == nil }
    }
    /// Puts `profile` in the view; true when it was not there.
    @discardableResult public func put(_ profile: ProviderProfile) -> Bool {
        state.withLock { $0.providers.updateValue(profile, forKey: profile.id) == nil }
    }
    /// Every merchant, in id order.
    public var allMerchants: [Merchant] { state.withLock { $0.merchants.values.sorted { $0.id < $1.id } } }
    /// Every provider profile, in id order.
    public var allProviders: [ProviderProfile] { state.withLock { $0.providers.values.sorted { $0.id < $1.id } } }
}

/// The directory in memory, for tests and benchmarks.
public final class InMemoryDirectory: DirectoryRepository, PhoneBook {
    private let view: DirectoryView
    private let phones = Mutex<[Account: E164PhoneNumber]>([:])

    public func phoneNumber(of account: Account) -> E164PhoneNumber? { phones.withLock { $0[account] } }
    public func setPhoneNumber(_ number: E164PhoneNumber, for account: Account) async throws {
        phones.withLock { $0[account] = number }
    }

    /// A directory holding `content`'s merchants and providers.
    public init(_ content: StaticDirectory = StaticDirectory()) {
        view = DirectoryView(merchants: content.merchants, providers: content.providers)
    }

    public func merchant(id: String) -> Merchant? { view.merchant(id: id) }
    public func provider(id: String) -> ProviderProfile { view.provider(id: id) ?? Self.plainProfile(id) }
    public func storedProvider(id: String) -> ProviderProfile? { view.provider(id: id) }

    @discardableResult public func save(_ merchant: Merchant) async throws -> Bool { view.put(merchant) }
    @discardableResult public func save(_ profile: ProviderProfile) async throws -> Bool { view.put(profile) }

    /// Writes `content` at once (for a backend being built).
    public func seed(_ content: StaticDirectory) {
        for m in content.merchants { view.put(m) }
        for p in content.providers { view.put(p) }
    }

    public func merchants(after cursor: String?, limit: Int) async throws -> DirectoryPage<Merchant> {
        Self.page(view.allMerchants, id: \.id, after: cursor, limit: limit)
    }

    public func providers(after cursor: String?, limit: Int) async throws -> DirectoryPage<ProviderProfile> {
        Self.page(view.allProviders, id: \.id, after: cursor, limit: limit)
    }

    static func page<Item>(
        _ sorted: [Item], id: KeyPath<Item, String>, after cursor: String?, limit: Int
    ) -> DirectoryPage<Item> {
        let rest = cursor.map { c in sorted.drop { $0[keyPath: id] <= c } } ?? sorted[...]
        let items = Array(rest.prefix(max(0, limit)))
        return DirectoryPage(items: items, next: rest.count > items.count ? items.last?[keyPath: id] : nil)
    }
}
