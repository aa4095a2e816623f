import Foundation
import Testing
import EnRouteModels

/// Pins the wire contract: every path template and live event name the server and the client kits share.
/// A change here is a change of the public API, so it must show up as a failing test first.
@Suite struct WireContractTests {
    @Test func everyPathTemplateIsPinned() {
        #expect(
            APIPath.Template.all == [
                "/v1/estimates", "/v1/drivers/nearby", "/v1/trips", "/v1/trips/active", "/v1/trips/{id}",
                "/v1/trips/{id}/cancel", "/v1/trips/{id}/events", "/v1/trips/{id}/route",
                "/v1/orders", "/v1/orders/active", "/v1/orders/{id}/tracking", "/v1/orders/{id}/live-activity-token",
                "/v1/orders/{id}/cancel", "/v1/orders/{id}/events", "/v1/orders/{id}/route",
                "/v1/provider/availability", "/v1/provider/events", "/v1/provider/offers/{offerId}/accept",
                "/v1/provider/offers/{offerId}/decline", "/v1/provider/trips/{id}/accept",
                "/v1/provider/trips/{id}/steps",
                "/v1/provider/trips/active", "/v1/provider/trips/{id}/route", "/v1/provider/locations",
                "/v1/merchant/orders", "/v1/merchant/orders/{id}/accept", "/v1/merchant/orders/{id}/ready",
                "/v1/ops/trips", "/v1/ops/trips/{id}/assign", "/v1/ops/trips/{id}/problem",
                "/v1/ops/merchants", "/v1/ops/merchants/{id}", "/v1/ops/providers", "/v1/ops/providers/{id}",
                "/v1/devices/{token}", "/v1/notifications/{id}/opened",
                "/v1/orders/quote", "/v1/payment-methods", "/v1/payment-methods/{id}",
                "/v1/payment-methods/{id}/default",
                "/v1/account/balance", "/v1/account/balance/settle", "/v1/trips/{id}/tip", "/v1/trips/{id}/rating",
                "/v1/trips/{id}/receipt", "/v1/merchant/orders/{id}/items", "/v1/provider/earnings",
                "/v1/payments/webhooks/stripe", "/v1/payments/sandbox/challenges/{id}",
                "/v1/orders/{id}/share", "/v1/trips/{id}/share", "/v1/ops/overview", "/v1/ops/trips/{id}",
                "/v1/ops/providers/{id}/activity",
                "/v1/trips/{id}/messages", "/v1/trips/{id}/chat",
                "/v1/account/phone", "/v1/trips/{id}/call", "/v1/uploads", "/v1/uploads/{id}", "/v1/trips/{id}/proof",
            ])
        #expect(Set(APIPath.Template.all).count == APIPath.Template.all.count, "no template listed twice")
    }

    /// Each builder fills its own template: the client's path is the server's route with the id in place.
    @Test func everyPathBuilderFillsItsTemplate() {
        let built: [(String, String)] = [
            (APIPath.estimates, "/v1/estimates"),
            (APIPath.nearbyDrivers(lat: 60.5, lng: 24.25), "/v1/drivers/nearby?lat=60.5&lng=24.25"),
            (APIPath.trips, "/v1/trips"),
            (APIPath.activeTrip, "/v1/trips/active"),
            (APIPath.trip("T-1"), "/v1/trips/T-1"),
            (APIPath.tripCancel("T-1"), "/v1/trips/T-1/cancel"),
            (APIPath.tripEvents("T-1"), "/v1/trips/T-1/events"),
            (APIPath.tripRoute("T-1"), "/v1/trips/T-1/route"),
            (APIPath.tripMessages("T-1"), "/v1/trips/T-1/messages"),
            (APIPath.tripMessages("T-1", after: 7), "/v1/trips/T-1/messages?after=7"),
            (APIPath.tripChat("T-1"), "/v1/trips/T-1/chat"),
            (APIPath.orders, "/v1/orders"),
            (APIPath.activeOrders, "/v1/orders/active"),
            (APIPath.orderTracking("O-1"), "/v1/orders/O-1/tracking"),
            (APIPath.orderLiveActivityToken("O-1"), "/v1/orders/O-1/live-activity-token"),
            (APIPath.orderCancel("O-1"), "/v1/orders/O-1/cancel"),
            (APIPath.orderEvents("O-1"), "/v1/orders/O-1/events"),
            (APIPath.orderRoute("O-1"), "/v1/orders/O-1/route"),
            (APIPath.providerAvailability, "/v1/provider/availability"),
            (APIPath.providerEvents, "/v1/provider/events"),
            (APIPath.providerOfferAccept("F-1"), "/v1/provider/offers/F-1/accept"),
            (APIPath.providerOfferDecline("F-1"), "/v1/provider/offers/F-1/decline"),
            (APIPath.providerTripAccept("T-1"), "/v1/provider/trips/T-1/accept"),
            (APIPath.providerTripSteps("T-1"), "/v1/provider/trips/T-1/steps"),
            (APIPath.providerActiveTrips, "/v1/provider/trips/active"),
            (APIPath.providerTripRoute("T-1"), "/v1/provider/trips/T-1/route"),
            (
                APIPath.providerTripRoute("T-1", from: Coordinate(lat: 60.5, lng: 24.25), heading: 90),
                "/v1/provider/trips/T-1/route?from=60.5,24.25&heading=90.0"
            ),
            (APIPath.providerLocations, "/v1/provider/locations"),
            (APIPath.merchantOrders(), "/v1/merchant/orders"),
            (APIPath.merchantOrders(cursor: "a b/c"), "/v1/merchant/orders?cursor=a%20b%2Fc"),
            (APIPath.merchantOrderAccept("O-1"), "/v1/merchant/orders/O-1/accept"),
            (APIPath.merchantOrderReady("O-1"), "/v1/merchant/orders/O-1/ready"),
            (APIPath.opsTrips, "/v1/ops/trips"),
            (APIPath.opsTripAssign("T-1"), "/v1/ops/trips/T-1/assign"),
            (APIPath.opsTripProblem("T-1"), "/v1/ops/trips/T-1/problem"),
            (APIPath.opsMerchants, "/v1/ops/merchants"),
            (APIPath.opsMerchant("m 1"), "/v1/ops/merchants/m%201"),
            (APIPath.opsProviders, "/v1/ops/providers"),
            (APIPath.opsProvider("p/1"), "/v1/ops/providers/p%2F1"),
            (APIPath.device("abc"), "/v1/devices/abc"),
            (APIPath.notificationOpened("N-1"), "/v1/notifications/N-1/opened"),
            (APIPath.orderShare("O-1"), "/v1/orders/O-1/share"),
            (APIPath.tripShare("T-1"), "/v1/trips/T-1/share"),
            (APIPath.opsTrip("T-1"), "/v1/ops/trips/T-1"),
            (APIPath.opsProviderActivity("p1"), "/v1/ops/providers/p1/activity"),
            (APIPath.share("a.b"), "/share/a.b"),
            (APIPath.shareEvents("a.b"), "/share/a.b/events"),
        ]
        for (path, expected) in built { #expect(path == expected) }
    }

    @Test func anIDCannotChangeThePath() {
        #expect(APIPath.tripCancel("../x?y#z%") == "/v1/trips/..%2Fx%3Fy%23z%25/cancel")
        #expect(APIPath.segment("a/b") == "a%2Fb")
    }

    @Test(arguments: [
        "T-01_x.y~z", "a b", "a/b", "é", "a%b", "a?b", "", "a:b@c", "a+b", "a&b=c", "ä.ö",
    ])
    func aValueIsEncodedAsFoundationWouldWithTheShortcutOrWithout(value: String) {
        let segment = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))
        let query = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        #expect(APIPath.segment(value) == value.addingPercentEncoding(withAllowedCharacters: segment))
        #expect(APIPath.queryValue(value) == value.addingPercentEncoding(withAllowedCharacters: query))
    }

    @Test func placeholdersAreNamedAndFilledInOrder() {
        #expect(APIPath.parameters(of: APIPath.Template.providerOfferAccept) == ["offerId"])
        #expect(APIPath.parameters(of: APIPath.Template.trips) == [])
        #expect(APIPath.fill("/a/{x}/b/{y}", "1", "2") == "/a/1/b/2")
        for template in APIPath.Template.all {
            #expect(template.hasPrefix("/v1/"), "\(template)")
            #expect(!template.hasSuffix("/"), "\(template)")
        }
    }

    /// docs/openapi.yaml documents exactly these API paths: a route added to the document without a template here
    /// fails.
    @Test func theTemplatesAreTheDocumentedAPIPaths() throws {
        let document = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appending(path: "docs/openapi.yaml")
        let documented = try String(contentsOf: document, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("  /v1/") && $0.hasSuffix(":") }
            .map { String($0.dropFirst(2).dropLast()) }
        #expect(Set(documented) == Set(APIPath.Template.all))
    }

    /// The chat socket's frames are pinned too: each `type` and its fields, as the server and the client kits write
    /// them.
    @Test func everyChatFrameHasItsPinnedShape() throws {
        let message = ChatMessage(
            messageId: "m-1", tripId: "T-1", seq: 3, from: .provider, text: "hei",
            sentAt: Date(timeIntervalSince1970: 1_792_520_000))
        let frames: [(ChatFrame, String)] = [
            (.send(messageId: "m-1", text: "hei"), #"{"messageId":"m-1","text":"hei","type":"send"}"#),
            (
                .message(message),
                #"{"message":{"from":"provider","messageId":"m-1","sentAt":"2026-10-20T18:13:20Z","seq":3,"#
                    + #""text":"hei","tripId":"T-1"},"type":"message"}"#
            ),
            (.typing(from: nil), #"{"type":"typing"}"#),
            (.typing(from: .customer), #"{"from":"customer","type":"typing"}"#),
            (.delivered(seq: 3, from: .customer), #"{"from":"customer","seq":3,"type":"delivered"}"#),
            (.read(seq: 3, from: nil), #"{"seq":3,"type":"read"}"#),
            (
                .error(Problem(title: "Conflict", status: 409, detail: "The trip has ended."), messageId: "m-2"),
                #"{"messageId":"m-2","problem":{"detail":"The trip has "#
                    + #"ended.","status":409,"title":"Conflict","type":"about:blank"},"type":"error"}"#
            ),
            (.closed(reason: "The trip has ended."), #"{"reason":"The trip has ended.","type":"closed"}"#),
        ]
        for (frame, text) in frames {
            #expect(try frame.text() == text)
            #expect(try ChatFrame.decode(text) == frame)
        }
        #expect(throws: DecodingError.self) { try ChatFrame.decode(#"{"type":"shout"}"#) }
    }

    @Test func everyLiveEventNameIsPinned() {
        #expect(
            LiveEventName.allCases.map(\.rawValue)
                == ["tripUpdated", "driverMoved", "tracking", "offer", "offerWithdrawn", "accessEnded"])
    }

    @Test func aTripEventTravelsUnderItsLiveEventName() throws {
        let trip = Trip(
            id: "T-1", state: .searching, pickup: Coordinate(lat: 1, lng: 2), dropoff: Coordinate(lat: 3, lng: 4),
            version: 1)
        let event = TripEvent.tripUpdated(trip)
        #expect(event.eventName == .tripUpdated)
        #expect(try TripEvent.decode(name: LiveEventName.tripUpdated.rawValue, payload: try event.payload()) == event)
        #expect(try TripEvent.decode(name: LiveEventName.offer.rawValue, payload: try event.payload()) == nil)
    }
}
