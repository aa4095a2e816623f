import Testing
import EnRouteDomain
import EnRouteAPI

@Suite struct RateLimitsTests {
    @Test func theStandardLimitsAreOnAndGenerous() {
        #expect(RateLimits.standard.description == "creates=10/60s,estimates=60/60s,locations=600/60s,steps=120/60s")
    }

    @Test func offLiftsEveryLimit() throws {
        #expect(try RateLimits.parse("off") == .off)
        #expect(try RateLimits.parse(" off ").limits.isEmpty)
    }

    @Test(arguments: [
        ("creates=5/60s", RateLimitClass.creates, RateLimit(5, per: .seconds(60))),
        ("steps=30/1m", .steps, RateLimit(30, per: .seconds(60))),
        ("locations=100/s", .locations, RateLimit(100, per: .seconds(1))),
        ("estimates=1000/1h", .estimates, RateLimit(1000, per: .seconds(3600))),
        (" creates = 7/m ", .creates, RateLimit(7, per: .seconds(60))),
    ])
    func anEntrySetsItsClassAndLeavesTheOthersAtTheirDefaults(
        text: String, kind: RateLimitClass, rate: RateLimit
    ) throws {
        let parsed = try RateLimits.parse(text)
        #expect(parsed[kind] == rate)
        for other in RateLimitClass.allCases where other != kind {
            #expect(parsed[other] == RateLimits.standard[other])
        }
    }

    @Test func severalEntriesAndAClassSwitchedOff() throws {
        let parsed = try RateLimits.parse("creates=3/10s,estimates=off")
        #expect(parsed[.creates] == RateLimit(3, per: .seconds(10)))
        #expect(parsed[.estimates] == nil)
        #expect(parsed[.steps] == RateLimits.standard[.steps])
    }

    @Test(arguments: [
        ("chats=5/60s", "'chats' is not a rate limit class; the classes are creates, steps, locations, estimates"),
        ("creates", "'creates' is not class=N/PERIOD (e.g. creates=10/60s), or off"),
        (
            "creates=0/60s",
            "'creates=0/60s' is not creates=N/PERIOD with N and PERIOD positive (e.g. creates=10/60s, 10/1m, 10/m), or "
                + "creates=off"
        ),
        (
            "creates=10/60",
            "'creates=10/60' is not creates=N/PERIOD with N and PERIOD positive (e.g. creates=10/60s, 10/1m, 10/m), or "
                + "creates=off"
        ),
        (
            "creates=10/0s",
            "'creates=10/0s' is not creates=N/PERIOD with N and PERIOD positive (e.g. creates=10/60s, 10/1m, 10/m), or "
                + "creates=off"
        ),
        (
            "creates=ten/60s",
            "'creates=ten/60s' is not creates=N/PERIOD with N and PERIOD positive (e.g. creates=10/60s, 10/1m, 10/m), "
                + "or creates=off"
        ),
        (
            "creates=10/60s,",
            "'creates=10/60s,' has an empty entry; give class=N/PERIOD entries separated by commas, or off"
        ),
        ("", "'' has an empty entry; give class=N/PERIOD entries separated by commas, or off"),
    ])
    func aMalformedValueIsRefusedNamingTheEntry(text: String, message: String) {
        #expect(throws: RateLimits.ParseError(description: message)) { try RateLimits.parse(text) }
    }
}
