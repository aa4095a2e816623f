public import Foundation

/// Every path of the EnRoute HTTP API, defined once for the server's router and the client kits.
///
/// `Template` holds each path in the router's syntax (`{name}` stands for one path segment); the functions fill a
/// template with values, each percent-encoded as one segment so an id can never change the path.
public enum APIPath {
    /// The path templates, exactly as the server routes them.
    public enum Template {
        // Rider
        /// `POST`: prices and pickup times per product for a route.
        public static let estimates = "/v1/estimates"
        /// `GET ?lat=&lng=`: free cars near a point.
        public static let nearbyDrivers = "/v1/drivers/nearby"
        /// `POST` with `Idempotency-Key`: request a ride.
        public static let trips = "/v1/trips"
        /// `GET`: the rider's active trip, or 204.
        public static let activeTrip = "/v1/trips/active"
        /// `GET`: one trip; a WebSocket upgrade here is the rider app's live channel.
        public static let trip = "/v1/trips/{id}"
        /// `POST`: the rider cancels.
        public static let tripCancel = "/v1/trips/{id}/cancel"
        /// `GET`: the trip's live events (SSE, or WebSocket on upgrade).
        public static let tripEvents = "/v1/trips/{id}/events"
        /// `GET`: the ride's remaining route as a JSON array of `{lat, lng}` (the ride tracking screen's `routeData`).
        public static let tripRoute = "/v1/trips/{id}/route"

        // Chat
        /// `POST {messageId, text}` writes, `GET ?after=` reads the trip's conversation.
        public static let tripMessages = "/v1/trips/{id}/messages"
        /// `GET` (WebSocket): the trip's conversation live, messages both ways with typing and receipts.
        public static let tripChat = "/v1/trips/{id}/chat"

        // Customer's orders
        /// `POST` with `Idempotency-Key`: place an order.
        public static let orders = "/v1/orders"
        /// `GET`: the customer's active orders.
        public static let activeOrders = "/v1/orders/active"
        /// `GET`: one order's tracking snapshot.
        public static let orderTracking = "/v1/orders/{id}/tracking"
        /// `PUT`: the order's Live Activity push token.
        public static let orderLiveActivityToken = "/v1/orders/{id}/live-activity-token"
        /// `POST`: the customer cancels an order.
        public static let orderCancel = "/v1/orders/{id}/cancel"
        /// `GET`: the order's live tracking events (SSE, or WebSocket on upgrade).
        public static let orderEvents = "/v1/orders/{id}/events"
        /// `GET`: the order's remaining route as a JSON array of `{lat, lng}`.
        public static let orderRoute = "/v1/orders/{id}/route"

        // Provider
        /// `POST`: going online or offline.
        public static let providerAvailability = "/v1/provider/availability"
        /// `GET`: the provider's live events (offers, withdrawals, trip updates) as SSE.
        public static let providerEvents = "/v1/provider/events"
        /// `POST`: accept a live offer.
        public static let providerOfferAccept = "/v1/provider/offers/{offerId}/accept"
        /// `POST`: decline a live offer.
        public static let providerOfferDecline = "/v1/provider/offers/{offerId}/decline"
        /// `POST`: accept the caller's live offer of a trip.
        public static let providerTripAccept = "/v1/provider/trips/{id}/accept"
        /// `POST`: one step of a held trip (the provider's outbox).
        public static let providerTripSteps = "/v1/provider/trips/{id}/steps"
        /// `GET`: the trips the provider holds.
        public static let providerActiveTrips = "/v1/provider/trips/active"
        /// `GET ?from=lat,lng&heading=`: the route from the provider to the trip's next stop, with steps.
        public static let providerTripRoute = "/v1/provider/trips/{id}/route"
        /// `POST`: a batch of fixes.
        public static let providerLocations = "/v1/provider/locations"

        // Merchant
        /// `GET ?cursor=&limit=`: the merchant's active orders, newest first.
        public static let merchantOrders = "/v1/merchant/orders"
        /// `POST` with `Idempotency-Key`: the merchant accepts an order.
        public static let merchantOrderAccept = "/v1/merchant/orders/{id}/accept"
        /// `POST` with `Idempotency-Key`: the order is ready for pickup.
        public static let merchantOrderReady = "/v1/merchant/orders/{id}/ready"

        // Ops
        /// `GET ?state=&cursor=&limit=`: every trip, newest first.
        public static let opsTrips = "/v1/ops/trips"
        /// `POST`: ops hands a waiting trip to a provider.
        public static let opsTripAssign = "/v1/ops/trips/{id}/assign"
        /// `POST`: ops shows or clears a problem on a trip.
        public static let opsTripProblem = "/v1/ops/trips/{id}/problem"
        /// `GET ?cursor=&limit=`: the directory's merchants, by id.
        public static let opsMerchants = "/v1/ops/merchants"
        /// `GET` reads, `PUT` creates or replaces one merchant.
        public static let opsMerchant = "/v1/ops/merchants/{id}"
        /// `GET ?cursor=&limit=`: the directory's provider profiles, by id.
        public static let opsProviders = "/v1/ops/providers"
        /// `GET` reads, `PUT` creates or replaces one provider profile.
        public static let opsProvider = "/v1/ops/providers/{id}"

        // Notifications
        /// `PUT` registers, `DELETE` forgets a device token.
        public static let device = "/v1/devices/{token}"
        /// `POST`: a notification was opened.
        public static let notificationOpened = "/v1/notifications/{id}/opened"

        // Money
        /// `POST`: a basket's item lines, fees and total as a quote.
        public static let orderQuote = "/v1/orders/quote"
        /// `GET` lists the customer's saved payment methods, masked; `POST {token}` saves one.
        public static let paymentMethods = "/v1/payment-methods"
        /// `DELETE` removes a saved method; `POST …/default` (see `paymentMethodDefault`) makes it the default.
        public static let paymentMethod = "/v1/payment-methods/{id}"
        /// `POST`: make a saved method the default.
        public static let paymentMethodDefault = "/v1/payment-methods/{id}/default"
        /// `GET`: what the account owes.
        public static let accountBalance = "/v1/account/balance"
        /// `POST` with `Idempotency-Key`: pay what the account owes with the default method.
        public static let accountBalanceSettle = "/v1/account/balance/settle"
        /// `POST {amountMinor}` with `Idempotency-Key`: tip the provider, once, within 72 h of completion.
        public static let tripTip = "/v1/trips/{id}/tip"
        /// `POST {stars, comment}`: rate the other party, once per party.
        public static let tripRating = "/v1/trips/{id}/rating"
        /// `GET`: the receipt, once the payment settles.
        public static let tripReceipt = "/v1/trips/{id}/receipt"
        /// `POST` with `Idempotency-Key`: the merchant marks basket items missing or replaced before ready.
        public static let merchantOrderItems = "/v1/merchant/orders/{id}/items"
        /// `GET ?from=&to=`: the provider's earnings from the ledger.
        public static let providerEarnings = "/v1/provider/earnings"
        /// `POST`: Stripe's webhook events, verified by `Stripe-Signature`.
        public static let stripeWebhook = "/v1/payments/webhooks/stripe"
        /// `GET` shows, `POST` answers a sandbox bank challenge (the sandbox gateway's stand-in for 3-D Secure).
        public static let sandboxChallenge = "/v1/payments/sandbox/challenges/{id}"

        /// `POST`/`DELETE`: a signed link to the order's share page, or turning its links off.
        public static let orderShare = "/v1/orders/{id}/share"
        /// `POST`/`DELETE`: the same for a ride.
        public static let tripShare = "/v1/trips/{id}/share"
        /// The ops console's live city: counts by state, online providers, active trips.
        public static let opsOverview = "/v1/ops/overview"
        /// One trip as ops sees it: change log, path, offers, payment, pushes.
        public static let opsTrip = "/v1/ops/trips/{id}"
        /// One provider as ops sees it: presence, position, trips, live offer.
        public static let opsProviderActivity = "/v1/ops/providers/{id}/activity"
        /// The share-tracking page (HTML, no account).
        public static let sharePage = "/share/{token}"
        /// The share page's state as JSON.
        public static let shareState = "/share/{token}/state"
        /// The share page's live feed (SSE).
        public static let shareEvents = "/share/{token}/events"
        /// The operations console (HTML).
        public static let opsConsole = "/ops"
        /// Trades an ops bearer token for the console's short-lived cookie.
        public static let opsConsoleSession = "/ops/session"
        /// The console's live feed (SSE, with the console's cookie).
        public static let opsConsoleEvents = "/ops/events"
        /// The city's roads from the loaded graph, as GeoJSON.
        public static let roadMap = "/map/roads.geojson"
        /// Leaflet's files (leaflet.js, leaflet.css) from Debian's libjs-leaflet.
        public static let leafletAsset = "/assets/leaflet/{file}"
        // Calls and proof
        /// `PUT` sets, `GET` reads the caller's own phone number (E.164).
        public static let accountPhone = "/v1/account/phone"
        /// `POST`: the relay number this party dials to reach the other party of the trip.
        public static let tripCall = "/v1/trips/{id}/call"
        /// `OPTIONS` (tus capabilities), `POST` (tus creation): a proof-of-delivery upload.
        public static let uploads = "/v1/uploads"
        /// `HEAD` (where to resume), `PATCH` (append), `DELETE` (terminate): one tus upload.
        public static let upload = "/v1/uploads/{id}"
        /// `GET`: the trip's proof of delivery, once its upload is complete.
        public static let tripProof = "/v1/trips/{id}/proof"

        /// The browser pages and their feeds, outside the `/v1` API.
        public static let pages: [String] = [
            sharePage, shareState, shareEvents, opsConsole, opsConsoleSession, opsConsoleEvents, roadMap, leafletAsset,
        ]

        /// Every template above, in the order listed.
        public static let all: [String] = [
            estimates, nearbyDrivers, trips, activeTrip, trip, tripCancel, tripEvents, tripRoute,
            orders, activeOrders, orderTracking, orderLiveActivityToken, orderCancel, orderEvents, orderRoute,
            providerAvailability, providerEvents, providerOfferAccept, providerOfferDecline, providerTripAccept,
            providerTripSteps, providerActiveTrips, providerTripRoute, providerLocations,
            merchantOrders, merchantOrderAccept, merchantOrderReady,
            opsTrips, opsTripAssign, opsTripProblem, opsMerchants, opsMerchant, opsProviders, opsProvider,
            device, notificationOpened,
            orderQuote, paymentMethods, paymentMethod, paymentMethodDefault, accountBalance, accountBalanceSettle,
            tripTip, tripRating, tripReceipt, merchantOrderItems, providerEarnings, stripeWebhook, sandboxChallenge,
            orderShare, tripShare, opsOverview, opsTrip, opsProviderActivity,
            tripMessages, tripChat,
            accountPhone, tripCall, uploads, upload, tripProof,
        ]
    }

    // MARK: - Rider

    /// `/v1/estimates`.
    public static var estimates: String { Template.estimates }
    /// `/v1/drivers/nearby?lat=..&lng=..`.
    public static func nearbyDrivers(lat: Double, lng: Double) -> String {
        "\(Template.nearbyDrivers)?lat=\(lat)&lng=\(lng)"
    }
    /// `/v1/trips`.
    public static var trips: String { Template.trips }
    /// `/v1/trips/active`.
    public static var activeTrip: String { Template.activeTrip }
    /// `/v1/trips/{id}`.
    public static func trip(_ id: String) -> String { fill(Template.trip, id) }
    /// `/v1/trips/{id}/cancel`.
    public static func tripCancel(_ id: String) -> String { fill(Template.tripCancel, id) }
    /// `/v1/trips/{id}/events`.
    public static func tripEvents(_ id: String) -> String { fill(Template.tripEvents, id) }
    /// `/v1/trips/{id}/route`.
    public static func tripRoute(_ id: String) -> String { fill(Template.tripRoute, id) }
    /// `/v1/trips/{id}/messages`, with `?after=` when given.
    public static func tripMessages(_ id: String, after: Int64? = nil) -> String {
        fill(Template.tripMessages, id) + (after.map { "?after=\($0)" } ?? "")
    }
    /// `/v1/trips/{id}/chat`.
    public static func tripChat(_ id: String) -> String { fill(Template.tripChat, id) }

    // MARK: - Orders

    /// `/v1/orders`.
    public static var orders: String { Template.orders }
    /// `/v1/orders/active`.
    public static var activeOrders: String { Template.activeOrders }
    /// `/v1/orders/{id}/tracking`.
    public static func orderTracking(_ id: String) -> String { fill(Template.orderTracking, id) }
    /// `/v1/orders/{id}/live-activity-token`.
    public static func orderLiveActivityToken(_ id: String) -> String { fill(Template.orderLiveActivityToken, id) }
    /// `/v1/orders/{id}/cancel`.
    public static func orderCancel(_ id: String) -> String { fill(Template.orderCancel, id) }
    /// `/v1/orders/{id}/events`.
    public static func orderEvents(_ id: String) -> String { fill(Template.orderEvents, id) }
    /// `/v1/orders/{id}/route`.
    public static func orderRoute(_ id: String) -> String { fill(Template.orderRoute, id) }

    // MARK: - Provider

    /// `/v1/provider/availability`.
    public static var providerAvailability: String { Template.providerAvailability }
    /// `/v1/provider/events`.
    public static var providerEvents: String { Template.providerEvents }
    /// `/v1/provider/offers/{offerId}/accept`.
    public static func providerOfferAccept(_ offerId: String) -> String { fill(Template.providerOfferAccept, offerId) }
    /// `/v1/provider/offers/{offerId}/decline`.
    public static func providerOfferDecline(_ offerId: String) -> String {
        fill(Template.providerOfferDecline, offerId)
    }
    /// `/v1/provider/trips/{id}/accept`.
    public static func providerTripAccept(_ id: String) -> String { fill(Template.providerTripAccept, id) }
    /// `/v1/provider/trips/{id}/steps`.
    public static func providerTripSteps(_ id: String) -> String { fill(Template.providerTripSteps, id) }
    /// `/v1/provider/trips/active`.
    public static var providerActiveTrips: String { Template.providerActiveTrips }
    /// `/v1/provider/trips/{id}/route`, with `?from=lat,lng` (and `&heading=`) when given.
    public static func providerTripRoute(_ id: String, from: Coordinate? = nil, heading: Double? = nil) -> String {
        var path = fill(Template.providerTripRoute, id)
        if let from {
            path += "?from=\(from.lat),\(from.lng)"
            if let heading { path += "&heading=\(heading)" }
        }
        return path
    }
    /// `/v1/provider/locations`.
    public static var providerLocations: String { Template.providerLocations }

    // MARK: - Merchant

    /// `/v1/merchant/orders`, with `?cursor=` for a page after the first.
    public static func merchantOrders(cursor: String? = nil) -> String {
        Template.merchantOrders + (cursor.map { "?cursor=\(queryValue($0))" } ?? "")
    }
    /// `/v1/merchant/orders/{id}/accept`.
    public static func merchantOrderAccept(_ id: String) -> String { fill(Template.merchantOrderAccept, id) }
    /// `/v1/merchant/orders/{id}/ready`.
    public static func merchantOrderReady(_ id: String) -> String { fill(Template.merchantOrderReady, id) }

    // MARK: - Ops

    /// `/v1/ops/trips`.
    public static var opsTrips: String { Template.opsTrips }
    /// `/v1/ops/trips/{id}/assign`.
    public static func opsTripAssign(_ id: String) -> String { fill(Template.opsTripAssign, id) }
    /// `/v1/ops/trips/{id}/problem`.
    public static func opsTripProblem(_ id: String) -> String { fill(Template.opsTripProblem, id) }
    /// `/v1/ops/merchants`.
    public static var opsMerchants: String { Template.opsMerchants }
    /// `/v1/ops/merchants/{id}`.
    public static func opsMerchant(_ id: String) -> String { fill(Template.opsMerchant, id) }
    /// `/v1/ops/providers`.
    public static var opsProviders: String { Template.opsProviders }
    /// `/v1/ops/providers/{id}`.
    public static func opsProvider(_ id: String) -> String { fill(Template.opsProvider, id) }

    // MARK: - Notifications

    /// `/v1/devices/{token}`.
    public static func device(_ token: String) -> String { fill(Template.device, token) }
    /// `/v1/notifications/{id}/opened`.
    public static func notificationOpened(_ id: String) -> String { fill(Template.notificationOpened, id) }

    // MARK: - Money

    /// `/v1/orders/quote`.
    public static var orderQuote: String { Template.orderQuote }
    /// `/v1/payment-methods`.
    public static var paymentMethods: String { Template.paymentMethods }
    /// `/v1/payment-methods/{id}`.
    public static func paymentMethod(_ id: String) -> String { fill(Template.paymentMethod, id) }
    /// `/v1/payment-methods/{id}/default`.
    public static func paymentMethodDefault(_ id: String) -> String { fill(Template.paymentMethodDefault, id) }
    /// `/v1/account/balance`.
    public static var accountBalance: String { Template.accountBalance }
    /// `/v1/account/balance/settle`.
    public static var accountBalanceSettle: String { Template.accountBalanceSettle }
    /// `/v1/trips/{id}/tip`.
    public static func tripTip(_ id: String) -> String { fill(Template.tripTip, id) }
    /// `/v1/trips/{id}/rating`.
    public static func tripRating(_ id: String) -> String { fill(Template.tripRating, id) }
    /// `/v1/trips/{id}/receipt`.
    public static func tripReceipt(_ id: String) -> String { fill(Template.tripReceipt, id) }
    /// `/v1/trips?limit=&cursor=`: the caller's trips, newest first.
    public static func tripHistory(cursor: String? = nil, limit: Int? = nil) -> String {
        var query: [String] = []
        if let cursor { query.append("cursor=\(queryValue(cursor))") }
        if let limit { query.append("limit=\(limit)") }
        return Template.trips + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }
    /// `/v1/merchant/orders/{id}/items`.
    public static func merchantOrderItems(_ id: String) -> String { fill(Template.merchantOrderItems, id) }
    /// `/v1/provider/earnings?from=&to=` (ISO 8601 times).
    public static func providerEarnings(from: String, to: String) -> String {
        "\(Template.providerEarnings)?from=\(queryValue(from))&to=\(queryValue(to))"
    }
    /// `/v1/payments/sandbox/challenges/{id}`.
    public static func sandboxChallenge(_ id: String) -> String { fill(Template.sandboxChallenge, id) }
    /// `/v1/orders/{id}/share`.
    public static func orderShare(_ id: String) -> String { fill(Template.orderShare, id) }
    /// `/v1/trips/{id}/share`.
    public static func tripShare(_ id: String) -> String { fill(Template.tripShare, id) }
    /// `/v1/ops/trips/{id}`.
    public static func opsTrip(_ id: String) -> String { fill(Template.opsTrip, id) }
    /// `/v1/ops/providers/{id}/activity`.
    public static func opsProviderActivity(_ id: String) -> String { fill(Template.opsProviderActivity, id) }
    /// `/share/{token}`.
    public static func share(_ token: String) -> String { fill(Template.sharePage, token) }
    /// `/share/{token}/state`.
    public static func shareState(_ token: String) -> String { fill(Template.shareState, token) }
    /// `/share/{token}/events`.
    public static func shareEvents(_ token: String) -> String { fill(Template.shareEvents, token) }

    // MARK: - Calls and proof

    /// `/v1/account/phone`.
    public static var accountPhone: String { Template.accountPhone }
    /// `/v1/trips/{id}/call`.
    public static func tripCall(_ id: String) -> String { fill(Template.tripCall, id) }
    /// `/v1/uploads`.
    public static var uploads: String { Template.uploads }
    /// `/v1/uploads/{id}`.
    public static func upload(_ id: String) -> String { fill(Template.upload, id) }
    /// `/v1/trips/{id}/proof`.
    public static func tripProof(_ id: String) -> String { fill(Template.tripProof, id) }

    // MARK: - Filling templates

    /// `template` with its `{name}` placeholders replaced in order by `values`, each encoded as one path segment.
    public static func fill(_ template: String, _ values: String...) -> String {
        var out = "", rest = Substring(template), next = values.makeIterator()
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out += rest[..<open]
            guard let value = next.next() else {
                preconditionFailure("\(template) needs more values than \(values.count)")
            }
            out += segment(value)
            rest = rest[rest.index(after: close)...]
        }
        precondition(next.next() == nil, "\(template) takes fewer values than \(values.count)")
        return out + rest
    }

    /// The names of `template`'s placeholders, in order (`"/v1/trips/{id}"` → `["id"]`).
    public static func parameters(of template: String) -> [String] {
        var names: [String] = [], rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// `value` percent-encoded for one path segment: `/`, `?`, `#` and `%` are escaped.
    public static func segment(_ value: String) -> String {
        isUnreserved(value) ? value : value.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? value
    }

    /// `value` percent-encoded for a query value: only unreserved characters stay.
    public static func queryValue(_ value: String) -> String {
        isUnreserved(value) ? value : value.addingPercentEncoding(withAllowedCharacters: queryAllowed) ?? value
    }

    /// Whether `value` is only ASCII letters, digits and `-._~` (RFC 3986's unreserved characters), which no part of a
    /// URL escapes: ids are, and they skip Foundation's encoder, which cost more than the rest of a request's path.
    static func isUnreserved(_ value: String) -> Bool {
        value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                true
            default: false
            }
        }
    }

    private static let segmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))
    private static let queryAllowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
}
