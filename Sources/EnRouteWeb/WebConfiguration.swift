public import Foundation

/// The browser surfaces' settings: where Leaflet is, how long links and the console's cookie last, how often pages
/// re-word.
public struct WebConfiguration: Sendable {
    /// Debian's libjs-leaflet (scripts/install-web.sh); served at `/assets/leaflet/leaflet.js` and `.css`.
    public var leafletDirectory = "/usr/share/javascript/leaflet"
    /// A share link stops working this long after it was made, whatever the trip does.
    public var shareLinkLifetime: TimeInterval = 24 * 3600
    /// A share link shows the trip's end this long, then says "This trip has ended" (410).
    public var shareEndsAfter: TimeInterval = 30 * 60
    /// The ops console's cookie lasts this long; the page fetches a new one with its ops token.
    public var consoleCookieLifetime: TimeInterval = 15 * 60
    /// The share page's re-wording tick without new data (the order tracker's 5-second tick: the pin's age grows, then
    /// dims and hides).
    public var shareTick: Duration = .seconds(5)
    /// The console's refresh without a committed change (providers' positions move between commits).
    public var consoleTick: Duration = .seconds(2)
    /// Where links point (`https://track.example.com`): the server's public URL, or where it listens. Links are built
    /// from this alone, never from a request's `Host`; nil: a link is its path, relative to the server's address. An
    /// `https` address also marks the console's cookie `Secure`.
    public var publicBaseURL: String?
    /// The zone and locale the share page words times in (the service area's).
    public var timeZone = TimeZone(identifier: "UTC")!
    public var locale = Locale(identifier: "en_GB")

    /// The defaults above.
    public init() {}
}
