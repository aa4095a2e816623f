import Foundation
import Testing
import EnRouteDomain
import EnRouteAPI
import EnRouteNotifications
import EnRouteAPNs
import HTTPEngine
import TestSupport

/// docs/openapi.yaml against the router the server really builds: every route documented, nothing documented that is
/// not routed.
@Suite struct OpenAPICoverageTests {
    /// One method on one path template, as `GET /v1/trips/{id}`.
    struct Operation: Hashable, CustomStringConvertible {
        let method: String
        let path: String
        var description: String { "\(method) \(path)" }
    }

    /// Every route the server registers today, written out from EnRouteAPI.swift (`EnRouteAPI.router()`, with its
    /// route files under Routes/) and NotificationsAPI.swift (`NotificationsAPI.register(into:)`).
    /// A route added or removed there must be added or removed here and in the document.
    static let registeredRoutes: [Operation] = [
        // System
        Operation(method: "GET", path: "/healthz"),
        Operation(method: "GET", path: "/readyz"),
        Operation(method: "GET", path: "/metrics"),
        Operation(method: "GET", path: "/openapi.yaml"),
        // Rides
        Operation(method: "POST", path: "/v1/estimates"),
        Operation(method: "GET", path: "/v1/drivers/nearby"),
        Operation(method: "POST", path: "/v1/trips"),
        Operation(method: "GET", path: "/v1/trips/active"),
        Operation(method: "GET", path: "/v1/trips/{id}"),
        Operation(method: "POST", path: "/v1/trips/{id}/cancel"),
        Operation(method: "GET", path: "/v1/trips/{id}/events"),
        Operation(method: "GET", path: "/v1/trips/{id}/route"),
        // Orders
        Operation(method: "POST", path: "/v1/orders"),
        Operation(method: "GET", path: "/v1/orders/active"),
        Operation(method: "GET", path: "/v1/orders/{id}/tracking"),
        Operation(method: "PUT", path: "/v1/orders/{id}/live-activity-token"),
        Operation(method: "POST", path: "/v1/orders/{id}/cancel"),
        Operation(method: "GET", path: "/v1/orders/{id}/events"),
        Operation(method: "GET", path: "/v1/orders/{id}/route"),
        // Providers
        Operation(method: "POST", path: "/v1/provider/trips/{id}/accept"),
        Operation(method: "POST", path: "/v1/provider/availability"),
        Operation(method: "GET", path: "/v1/provider/events"),
        Operation(method: "POST", path: "/v1/provider/offers/{offerId}/accept"),
        Operation(method: "POST", path: "/v1/provider/offers/{offerId}/decline"),
        Operation(method: "POST", path: "/v1/provider/trips/{id}/steps"),
        Operation(method: "GET", path: "/v1/provider/trips/active"),
        Operation(method: "GET", path: "/v1/provider/trips/{id}/route"),
        Operation(method: "POST", path: "/v1/provider/locations"),
        // Merchants
        Operation(method: "POST", path: "/v1/merchant/orders/{id}/accept"),
        Operation(method: "POST", path: "/v1/merchant/orders/{id}/ready"),
        Operation(method: "GET", path: "/v1/merchant/orders"),
        // Ops
        Operation(method: "GET", path: "/v1/ops/trips"),
        Operation(method: "POST", path: "/v1/ops/trips/{id}/assign"),
        Operation(method: "POST", path: "/v1/ops/trips/{id}/problem"),
        Operation(method: "GET", path: "/v1/ops/merchants"),
        Operation(method: "GET", path: "/v1/ops/merchants/{id}"),
        Operation(method: "PUT", path: "/v1/ops/merchants/{id}"),
        Operation(method: "GET", path: "/v1/ops/providers"),
        Operation(method: "GET", path: "/v1/ops/providers/{id}"),
        Operation(method: "PUT", path: "/v1/ops/providers/{id}"),
        // OSRM's HTTP API
        Operation(method: "GET", path: "/route/v1/{profile}/{coordinates}"),
        Operation(method: "GET", path: "/table/v1/{profile}/{coordinates}"),
        Operation(method: "GET", path: "/nearest/v1/{profile}/{coordinates}"),
        // Saved payment methods
        Operation(method: "GET", path: "/v1/payment-methods"),
        Operation(method: "POST", path: "/v1/payment-methods"),
        Operation(method: "DELETE", path: "/v1/payment-methods/{id}"),
        Operation(method: "POST", path: "/v1/payment-methods/{id}/default"),
        // Money, registered by MoneyRoutes
        Operation(method: "POST", path: "/v1/orders/quote"),
        Operation(method: "GET", path: "/v1/trips"),
        Operation(method: "POST", path: "/v1/trips/{id}/tip"),
        Operation(method: "POST", path: "/v1/trips/{id}/rating"),
        Operation(method: "GET", path: "/v1/trips/{id}/receipt"),
        Operation(method: "GET", path: "/v1/account/balance"),
        Operation(method: "POST", path: "/v1/account/balance/settle"),
        Operation(method: "GET", path: "/v1/provider/earnings"),
        Operation(method: "POST", path: "/v1/merchant/orders/{id}/items"),
        Operation(method: "POST", path: "/v1/payments/webhooks/stripe"),
        Operation(method: "GET", path: "/v1/payments/sandbox/challenges/{id}"),
        Operation(method: "POST", path: "/v1/payments/sandbox/challenges/{id}"),
        // The browser surfaces, registered by EnRouteWeb's WebSurfaces
        Operation(method: "POST", path: "/v1/orders/{id}/share"),
        Operation(method: "DELETE", path: "/v1/orders/{id}/share"),
        Operation(method: "POST", path: "/v1/trips/{id}/share"),
        Operation(method: "DELETE", path: "/v1/trips/{id}/share"),
        Operation(method: "GET", path: "/v1/ops/overview"),
        Operation(method: "GET", path: "/v1/ops/trips/{id}"),
        Operation(method: "GET", path: "/v1/ops/providers/{id}/activity"),
        // Chat, registered by ChatRoutes
        Operation(method: "POST", path: "/v1/trips/{id}/messages"),
        Operation(method: "GET", path: "/v1/trips/{id}/messages"),
        Operation(method: "GET", path: "/v1/trips/{id}/chat"),
        Operation(method: "GET", path: "/share/{token}"),
        Operation(method: "GET", path: "/share/{token}/state"),
        Operation(method: "GET", path: "/share/{token}/events"),
        Operation(method: "GET", path: "/ops"),
        Operation(method: "POST", path: "/ops/session"),
        Operation(method: "GET", path: "/ops/events"),
        Operation(method: "GET", path: "/map/roads.geojson"),
        Operation(method: "GET", path: "/assets/leaflet/{file}"),
        // Calls and proof, registered by ContactRoutes and UploadRoutes (with OPTIONS /v1/uploads and HEAD
        // /v1/uploads/{id}, which the document lists too)
        Operation(method: "PUT", path: "/v1/account/phone"),
        Operation(method: "GET", path: "/v1/account/phone"),
        Operation(method: "POST", path: "/v1/trips/{id}/call"),
        Operation(method: "POST", path: "/v1/uploads"),
        Operation(method: "PATCH", path: "/v1/uploads/{id}"),
        Operation(method: "DELETE", path: "/v1/uploads/{id}"),
        Operation(method: "GET", path: "/v1/trips/{id}/proof"),
        // Notifications, registered by NotificationsAPI
        Operation(method: "PUT", path: "/v1/devices/{token}"),
        Operation(method: "DELETE", path: "/v1/devices/{token}"),
        Operation(method: "POST", path: "/v1/notifications/{id}/opened"),
    ]

    /// The router as `enroute serve` builds it: the composition root's (`Backend`), here in memory.
    static func serverRouter() -> Router { TestBackend().router }

    /// The repository's root, two levels above this file's folder.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func documentText() throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
    }

    /// The operations under `paths:`, found by line: path keys are `  /...:`, method keys `    get:` and the like.
    static func documentedOperations(in text: String) -> [Operation] {
        var operations: [Operation] = []
        var inPaths = false
        var path: String?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : String(raw)
            if let first = line.first, !first.isWhitespace, first != "#" {
                inPaths = line.hasPrefix("paths:")
                path = nil
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let key = line.dropFirst(4).dropLast()
                if ["get", "post", "put", "delete", "patch"].contains(key) {
                    operations.append(Operation(method: key.uppercased(), path: path))
                }
            }
        }
        return operations
    }

    /// The path with each `{name}` segment filled with a sample value no literal route uses.
    static func samplePath(_ template: String) -> String {
        template.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("{") && $0.hasSuffix("}") ? "sample-\($0.dropFirst().dropLast())" : String($0) }
            .joined(separator: "/")
    }

    /// What the real router does with an operation: the route it lands on, or why it lands on none.
    enum Resolution {
        case route(Operation)
        case unrouted(String)
    }

    static func resolution(of operation: Operation, by router: Router) -> Resolution {
        switch router.resolve(method: operation.method, path: samplePath(operation.path)) {
        case .route(let route, _): .route(Operation(method: route.method, path: route.pattern))
        case .notFound: .unrouted("404, no such path")
        case .methodNotAllowed(let allow): .unrouted("405, allow \(allow.joined(separator: ", "))")
        }
    }

    /// Each operation's `x-body-limit`, by the line it stands on under its method key.
    static func documentedBodyLimits(in text: String) -> [Operation: Int] {
        var limits: [Operation: Int] = [:]
        var inPaths = false
        var path: String?, method: String?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if let first = line.first, !first.isWhitespace, first != "#" {
                inPaths = line.hasPrefix("paths:"); continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast()); method = nil
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                method = String(line.dropFirst(4).dropLast()).uppercased()
            } else if line.hasPrefix("      x-body-limit: "), let path, let method, let value = Int(line.dropFirst(20))
            {
                limits[Operation(method: method, path: path)] = value
            }
        }
        return limits
    }

    /// Every operation that takes a body states the router's limit for it, in bytes.
    @Test func eachBodyLimitInTheDocumentIsTheRoutersOwn() throws {
        let text = try Self.documentText()
        let limits = Self.documentedBodyLimits(in: text)
        #expect(
            limits.count == text.components(separatedBy: "\n      requestBody:").count - 1,
            "an operation with a body states no x-body-limit")
        let router = Self.serverRouter()
        for (operation, documented) in limits {
            guard
                case .route(let route, _) = router.resolve(
                    method: operation.method, path: Self.samplePath(operation.path))
            else {
                Issue.record("\(operation) is not routed"); continue
            }
            #expect(
                route.bodyLimit == documented,
                "\(operation): the router allows \(route.bodyLimit) bytes, the document says \(documented)")
        }
    }

    @Test func theDocumentListsEachOperationOnce() throws {
        let documented = Self.documentedOperations(in: try Self.documentText())
        #expect(documented.count >= Self.registeredRoutes.count)
        #expect(Set(documented).count == documented.count, "an operation is listed twice")
    }

    /// Probes the real router with each documented operation: it must land on exactly that route, not on a neighbour.
    @Test func everyDocumentedOperationExistsOnTheRouter() throws {
        let router = Self.serverRouter()
        let documented = Self.documentedOperations(in: try Self.documentText())
        #expect(!documented.isEmpty)
        for operation in documented {
            switch Self.resolution(of: operation, by: router) {
            case .route(let resolved):
                #expect(resolved == operation, "\(operation) is documented but routes to \(resolved)")
            case .unrouted(let reason):
                Issue.record("\(operation) is documented but the router answers: \(reason)")
            }
        }
    }

    @Test func everyRegisteredRouteIsDocumented() throws {
        let documented = Set(Self.documentedOperations(in: try Self.documentText()))
        for route in Self.registeredRoutes {
            #expect(documented.contains(route), "\(route) is registered but not documented")
        }
    }

    /// Keeps the hand-written list honest: each entry is a real route, and the document adds none beyond it.
    @Test func theRegisteredListMatchesTheRouterAndTheDocument() throws {
        let router = Self.serverRouter()
        for route in Self.registeredRoutes {
            switch Self.resolution(of: route, by: router) {
            case .route(let resolved): #expect(resolved == route, "\(route) routes to \(resolved)")
            case .unrouted(let reason):
                Issue.record("\(route) is listed as registered but the router answers: \(reason)")
            }
        }
        let documented = Set(Self.documentedOperations(in: try Self.documentText()))
        let extra = documented.subtracting(Self.registeredRoutes).map(\.description).sorted()
        #expect(extra.isEmpty, "documented but not in the registered list: \(extra)")
    }

    @Test func theServerServesTheDocumentAtOpenAPIYaml() async throws {
        let text = try Self.documentText()
        let backend = TestBackend(openAPI: text)
        let response = await backend.router.respond(to: HTTPRequest(method: "GET", path: "/openapi.yaml"))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "application/yaml")
        #expect(String(decoding: response.bodyBytes, as: UTF8.self) == text)
    }

    /// The executable ships Sources/enroute/Resources/openapi.yaml, the document itself (docs/openapi.yaml links to
    /// it),
    /// so the resource bundle holds a real file, not a link that breaks once copied.
    @Test func theShippedResourceIsTheDocument() throws {
        let resource = Self.root.appendingPathComponent("Sources/enroute/Resources/openapi.yaml")
        #expect(try String(contentsOf: resource, encoding: .utf8) == Self.documentText())
        let attributes = try FileManager.default.attributesOfItem(atPath: resource.path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
    }
}
