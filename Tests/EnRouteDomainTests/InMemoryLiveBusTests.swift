import Foundation
import Testing
import EnRouteModels
import EnRouteDomain

/// The in-process bus keeps Redis's rule for numbered versions: a number at or below its city's top is refused as
/// already published, so tests without Redis see what a relay's retry does.
@Suite struct InMemoryLiveBusTests {
    func version(_ sequence: UInt64, city: String = "helsinki") -> BusEnvelope {
        BusEnvelope(origin: "a", city: city, message: .relayDue, sequence: sequence)
    }

    @Test func aNumberAtOrBelowItsCitysTopIsRefusedAndReachesNoSubscriber() async throws {
        let bus = InMemoryLiveBus()
        var reader = bus.subscribe(cities: ["helsinki", "tampere"]).makeAsyncIterator()
        #expect(try await bus.publish([version(1), version(2)]) == 0)
        #expect(try await bus.publish([version(2), version(3), version(1)]) == 2, "2 and 1 are there already")
        #expect(try await bus.publish([version(1, city: "tampere")]) == 0, "each city has its own numbers")
        #expect(
            try await bus.publish([BusEnvelope(origin: "a", city: "helsinki", message: .relayDue)]) == 0,
            "unnumbered messages always go")
        var read: [String] = []
        for _ in 0..<5 {
            read.append(try await reader.next().map { "\($0.city):\($0.sequence.map(String.init) ?? "-")" } ?? "end")
        }
        #expect(read == ["helsinki:1", "helsinki:2", "helsinki:3", "tampere:1", "helsinki:-"])
    }
}
