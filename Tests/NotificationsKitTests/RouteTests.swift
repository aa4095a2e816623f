import Testing
import NotificationsKit

@Suite struct RouteTests {
    @Test(arguments: [
        ("orders/8F3K", Route.order("8F3K")),
        ("offers/42", Route.offer("42")),
        ("home", Route.home),
    ])
    func knownRoutesParse(path: String, route: Route) { #expect(Route(path: path) == route) }

    @Test(arguments: ["orders", "orders/", "orders/8F3K/extra", "rides/1", "", "orders/../admin", "orders/a b"])
    func unknownRoutesAreUnreadable(path: String) { #expect(Route(path: path) == nil) }
}
