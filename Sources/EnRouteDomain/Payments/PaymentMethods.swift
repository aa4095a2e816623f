public import Foundation
import Synchronization

/// A customer's saved payment method: the gateway token (kept server-side, never shown) and the card's display details.
public struct StoredPaymentMethod: Sendable, Equatable, Codable {
    /// EnRoute's id (`card_…`), what clients name the method by.
    public let id: String
    public let accountId: String
    /// The gateway's token (`pm_…`): used to pay, never returned to a client.
    public let token: String
    public let card: CardDetails
    public var isDefault: Bool
    public let createdAt: Date
    public init(id: String, accountId: String, token: String, card: CardDetails, isDefault: Bool, createdAt: Date) {
        self.id = id; self.accountId = accountId; self.token = token; self.card = card; self.isDefault = isDefault;
        self.createdAt = createdAt
    }
}

/// What `PaymentMethodStore.add` did.
public enum PaymentMethodAddition: Sendable, Equatable {
    /// Saved as given (the default when it was asked to be, or is the account's first).
    case added(StoredPaymentMethod)
    /// The account already had this token: the method saved before, unchanged.
    case existing(StoredPaymentMethod)
    /// The account already has `limit` methods; nothing was saved.
    case full
}

/// Where saved payment methods live, per account.
///
/// Each call keeps an account's methods consistent on its own, so concurrent calls cannot break the rules: at most one
/// default, and exactly one whenever the account has any; a token saved at most once per account; `limit` respected.
public protocol PaymentMethodStore: Sendable {
    /// Saves `method` unless the account has its token already or has `limit` methods. It becomes the default when its
    /// `isDefault` is set or it is the account's first (any other default is cleared).
    func add(_ method: StoredPaymentMethod, limit: Int) async throws -> PaymentMethodAddition
    /// The account's methods, oldest first.
    func list(accountId: String) async throws -> [StoredPaymentMethod]
    /// Removes the account's method `id`; when it was the default, the newest remaining becomes the default.
    /// False when the account has no such method.
    func remove(id: String, accountId: String) async throws -> Bool
    /// Makes the account's method `id` the default; nil when the account has no such method.
    func setDefault(id: String, accountId: String) async throws -> StoredPaymentMethod?
    /// The account's default method, nil when it has none.
    func defaultMethod(for accountId: String) async throws -> StoredPaymentMethod?
}

/// A `PaymentMethodStore` in memory, for tests and the in-memory backend.
public final class InMemoryPaymentMethodStore: PaymentMethodStore {
    private let methods = Mutex<[StoredPaymentMethod]>([])

    public init() {}

    public func add(_ method: StoredPaymentMethod, limit: Int) async throws -> PaymentMethodAddition {
        methods.withLock { all in
            let mine = all.filter { $0.accountId == method.accountId }
            if let existing = mine.first(where: { $0.token == method.token }) { return .existing(existing) }
            guard mine.count < limit else { return .full }
            var method = method
            method.isDefault = method.isDefault || mine.isEmpty
            if method.isDefault {
                for i in all.indices where all[i].accountId == method.accountId { all[i].isDefault = false }
            }
            all.append(method)
            return .added(method)
        }
    }

    public func list(accountId: String) async throws -> [StoredPaymentMethod] {
        methods.withLock { $0.filter { $0.accountId == accountId } }
    }

    public func remove(id: String, accountId: String) async throws -> Bool {
        methods.withLock { all in
            guard let index = all.firstIndex(where: { $0.id == id && $0.accountId == accountId }) else { return false }
            let removed = all.remove(at: index)
            if removed.isDefault, let newest = all.lastIndex(where: { $0.accountId == accountId }) {
                all[newest].isDefault = true
            }
            return true
        }
    }

    public func setDefault(id: String, accountId: String) async throws -> StoredPaymentMethod? {
        methods.withLock { all in
            guard let index = all.firstIndex(where: { $0.id == id && $0.accountId == accountId }) else { return nil }
            for i in all.indices where all[i].accountId == accountId { all[i].isDefault = i == index }
            return all[index]
        }
    }

    public func defaultMethod(for accountId: String) async throws -> StoredPaymentMethod? {
        methods.withLock { $0.first { $0.accountId == accountId && $0.isDefault } }
    }
}

/// Why a payment method could not be saved or found.
public enum PaymentMethodError: Error, Sendable, Equatable {
    /// The token is not of the gateway's shape (`pm_` and letters, digits, underscores).
    case malformedToken
    /// The gateway does not know the token (or refused to describe it); its message.
    case unknownToken(String)
    /// The account has `limit` methods already.
    case limitReached(limit: Int)
    /// No such method on the account (absent, or another account's).
    case notFound
    /// The gateway did not answer; worth retrying.
    case gatewayUnavailable(String)
}

/// The customer's saved payment methods: checks a token with the
/// gateway and keeps only its display details beside it; the card number never reaches EnRoute.
public final class PaymentMethods: Sendable {
    /// Methods an account may keep.
    public static let limit = 10
    /// Longest token accepted (Stripe's ids are far shorter).
    public static let maxTokenLength = 255

    private let store: any PaymentMethodStore
    private let gateway: any PaymentGateway
    private let ids: any IDGenerator
    private let now: @Sendable () -> Date

    /// Methods in `store`, checked with `gateway`, named `card_<id>` from `ids` and dated by `now`.
    public init(
        store: any PaymentMethodStore, gateway: any PaymentGateway, ids: any IDGenerator,
        now: @escaping @Sendable () -> Date
    ) {
        self.store = store; self.gateway = gateway; self.ids = ids; self.now = now
    }

    /// True for a token of the gateway's shape: `pm_` then one or more ASCII letters, digits and underscores.
    public static func isWellFormed(token: String) -> Bool {
        guard token.hasPrefix("pm_"), token.count > 3, token.utf8.count <= maxTokenLength else { return false }
        return token.dropFirst(3).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// Saves `token` for `accountId` with the card's display details from the gateway; `created` is false when the
    /// account had the token already (the saved method is returned, made the default if asked).
    public func add(
        token: String, makeDefault: Bool, for accountId: String
    ) async throws -> (method: StoredPaymentMethod, created: Bool) {
        guard Self.isWellFormed(token: token) else { throw PaymentMethodError.malformedToken }
        let card: CardDetails
        do throws(PaymentGatewayError) {
            card = try await gateway.describe(token: token)
        } catch {
            switch error {
            case .ambiguous(let message): throw PaymentMethodError.gatewayUnavailable(message)
            case .rejected(let message): throw PaymentMethodError.unknownToken(message)
            case .declined(let decline, _): throw PaymentMethodError.unknownToken(decline.message)
            }
        }
        let method = StoredPaymentMethod(
            id: "card_" + ids.next(), accountId: accountId, token: token, card: card,
            isDefault: makeDefault, createdAt: now())
        switch try await store.add(method, limit: Self.limit) {
        case .added(let added):
            return (added, true)
        case .existing(let existing):
            guard makeDefault, !existing.isDefault else { return (existing, false) }
            return (try await store.setDefault(id: existing.id, accountId: accountId) ?? existing, false)
        case .full:
            throw PaymentMethodError.limitReached(limit: Self.limit)
        }
    }

    /// The account's methods, oldest first.
    public func list(for accountId: String) async throws -> [StoredPaymentMethod] {
        try await store.list(accountId: accountId)
    }

    /// Removes one of the account's methods; the newest remaining becomes the default if it was.
    public func remove(id: String, for accountId: String) async throws {
        guard try await store.remove(id: id, accountId: accountId) else { throw PaymentMethodError.notFound }
    }

    /// Makes one of the account's methods the default.
    public func setDefault(id: String, for accountId: String) async throws -> StoredPaymentMethod {
        guard let method = try await store.setDefault(id: id, accountId: accountId) else {
            throw PaymentMethodError.notFound
        }
        return method
    }

    /// The method a payment for the account is made with; nil when it has none.
    public func defaultMethod(for accountId: String) async throws -> StoredPaymentMethod? {
        try await store.defaultMethod(for: accountId)
    }
}
