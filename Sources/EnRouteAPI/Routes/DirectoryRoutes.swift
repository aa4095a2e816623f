import Foundation
import HTTPEngine
import EnRouteDomain
import EnRouteModels

/// `PUT /v1/ops/merchants/{id}` body: the merchant without its id (the path names it).
struct MerchantInput: Codable, Sendable {
    let name: String
    let address: String
    let position: Coordinate
    let openingHours: [OpeningHours]?
    let catalogue: [CatalogueItem]?
}

/// `PUT /v1/ops/providers/{id}` body: the profile without its id (the path names it).
struct ProviderInput: Codable, Sendable {
    let firstName: String
    let lastName: String?
    let vehicle: Vehicle?
    let rating: Double?
    let photoURL: URL
}

/// `GET /v1/ops/merchants`: one page, and the cursor of the next.
struct MerchantList: Codable, Sendable {
    let merchants: [Merchant]
    let nextCursor: String?
}

/// `GET /v1/ops/providers`: one page, and the cursor of the next.
struct ProviderList: Codable, Sendable {
    let providers: [ProviderProfile]
    let nextCursor: String?
}

/// The `?cursor=&limit=` of a directory list: the cursor is the last id of the page before, base64url-encoded.
struct DirectoryListPage {
    let after: String?
    let limit: Int

    init(_ query: [String: String]) throws(HTTPError) {
        if let text = query["limit"], !text.isEmpty {
            guard let limit = Int(text), (1...ListPage.maxLimit).contains(limit) else {
                throw HTTPError.invalid("/limit", "must be an integer from 1 to \(ListPage.maxLimit)")
            }
            self.limit = limit
        } else {
            limit = ListPage.maxLimit
        }
        if let text = query["cursor"], !text.isEmpty {
            guard let id = Self.decode(text) else {
                throw HTTPError.invalid("/cursor", "is not a cursor this server returned as nextCursor")
            }
            after = id
        } else {
            after = nil
        }
    }

    /// The opaque cursor for a page that ends at `id`.
    static func encode(_ id: String) -> String {
        Data(id.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ token: String) -> String? {
        guard token.count <= 128,
            token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let id = String(data: data, encoding: .utf8),
            DirectoryRules.isValidID(id)
        else { return nil }
        return id
    }
}

extension EnRouteAPI {
    /// Ops manages the directory: merchants (address, hours, catalogue) and provider profiles (with vehicles).
    func addDirectoryRoutes(_ r: inout Router) {
        r.get(APIPath.Template.opsMerchants) { req in
            _ = try auth.account(for: req, roles: [.ops])
            let page = try DirectoryListPage(req.query)
            let found = try await directory.merchants(after: page.after, limit: page.limit)
            return try .json(MerchantList(merchants: found.items, nextCursor: found.next.map(DirectoryListPage.encode)))
        }
        r.get(APIPath.Template.opsMerchant) { req in
            _ = try auth.account(for: req, roles: [.ops])
            guard let merchant = directory.merchant(id: try req.parameter("id")) else {
                throw HTTPError.notFound("No such merchant.")
            }
            return try .json(merchant)
        }
        r.put(
            APIPath.Template.opsMerchant, bodyLimit: Self.merchantBodyLimit,
            limited(.steps) { req in
                _ = try auth.account(for: req, roles: [.ops])
                let id = try Self.directoryID(req)
                let body = try req.decode(MerchantInput.self)
                let merchant = Merchant(
                    id: id, name: body.name, address: body.address, position: body.position,
                    openingHours: body.openingHours ?? [], catalogue: body.catalogue ?? [])
                if let problem = merchant.problem() { throw HTTPError.invalid(problem.pointer, problem.detail) }
                let created = try await directory.save(merchant)
                return try .json(merchant, status: created ? 201 : 200)
            })
        r.get(APIPath.Template.opsProviders) { req in
            _ = try auth.account(for: req, roles: [.ops])
            let page = try DirectoryListPage(req.query)
            let found = try await directory.providers(after: page.after, limit: page.limit)
            return try .json(ProviderList(providers: found.items, nextCursor: found.next.map(DirectoryListPage.encode)))
        }
        r.get(APIPath.Template.opsProvider) { req in
            _ = try auth.account(for: req, roles: [.ops])
            guard let profile = directory.storedProvider(id: try req.parameter("id")) else {
                throw HTTPError.notFound("No such provider profile.")
            }
            return try .json(profile)
        }
        r.put(
            APIPath.Template.opsProvider,
            limited(.steps) { req in
                _ = try auth.account(for: req, roles: [.ops])
                let id = try Self.directoryID(req)
                let body = try req.decode(ProviderInput.self)
                let profile = ProviderProfile(
                    id: id, firstName: body.firstName, lastName: body.lastName ?? "", vehicle: body.vehicle,
                    rating: body.rating ?? 5.0, photoURL: body.photoURL)
                if let problem = profile.problem() { throw HTTPError.invalid(problem.pointer, problem.detail) }
                let created = try await directory.save(profile)
                return try .json(profile, status: created ? 201 : 200)
            })
    }

    /// A merchant's body may carry a long catalogue: 256 KiB.
    static let merchantBodyLimit = 256 * 1024

    /// The `{id}` of a directory PUT, checked: 422 at `/id` when it is not 1 to 64 of letters, digits, `.`, `_`, `-`.
    static func directoryID(_ req: HTTPRequest) throws(HTTPError) -> String {
        let id = try req.parameter("id")
        guard DirectoryRules.isValidID(id) else {
            throw HTTPError.invalid("/id", "must be 1 to 64 of letters, digits, '.', '_' and '-'")
        }
        return id
    }
}
