import Testing
@testable import Routing

@Suite struct CarProfileRestrictionTests {
    let profile = CarProfile()
    typealias Member = CarProfile.Member
    typealias Restriction = CarProfile.Restriction

    private func parse(
        _ tags: [String: String], _ members: [Member]
    ) -> Result<Restriction, CarProfile.RestrictionRejection> {
        profile.restriction(tags, members: members)
    }

    private let plainMembers = [
        Member(.way, 1, role: "from"), Member(.node, 2, role: "via"), Member(.way, 3, role: "to"),
    ]

    /// Monaco r12993.
    @Test func parsesARealNoUTurnViaNode() {
        let result = parse(
            ["type": "restriction", "restriction": "no_u_turn"],
            [
                Member(.way, 24336411, role: "from"), Member(.node, 1376293737, role: "via"),
                Member(.way, 156416612, role: "to"),
            ])
        #expect(
            result
                == .success(
                    Restriction(
                        kind: .no, maneuver: "u_turn", from: [24336411], via: .node(1376293737), to: [156416612])))
    }

    /// Helsinki r30402: members out of order, `only_straight_on`.
    @Test func parsesARealOnlyStraightOnWithMembersInAnyOrder() {
        let result = parse(
            ["type": "restriction", "restriction": "only_straight_on"],
            [
                Member(.way, 34732047, role: "to"), Member(.node, 4435014140, role: "via"),
                Member(.way, 372188349, role: "from"),
            ])
        #expect(
            result
                == .success(
                    Restriction(
                        kind: .only, maneuver: "straight_on", from: [372188349], via: .node(4435014140), to: [34732047])
                ))
    }

    /// Helsinki r9833 and r2214225: taxis or bicycles exempt, so it still binds cars.
    @Test(arguments: ["taxi", "bicycle", "bus;psv"])
    func exemptionsOfOtherVehiclesStillBindCars(except: String) {
        let result = parse(["type": "restriction", "restriction": "only_straight_on", "except": except], plainMembers)
        #expect((try? result.get())?.kind == .only)
    }

    @Test(arguments: ["motorcar", "psv;motorcar", "bicycle; motor_vehicle"])
    func exemptionOfCarsIsRefused(except: String) {
        let result = parse(["type": "restriction", "restriction": "no_left_turn", "except": except], plainMembers)
        guard case .failure(.notForCars(let why)) = result else { Issue.record("\(result)"); return }
        #expect(why.hasPrefix("except="))
    }

    @Test func carSpecificValueWinsOverThePlainOne() {
        let result = parse(
            ["type": "restriction", "restriction": "no_left_turn", "restriction:motorcar": "no_right_turn"],
            plainMembers)
        #expect((try? result.get())?.maneuver == "right_turn")
        let carsOnly = parse(["type": "restriction", "restriction:motorcar": "only_left_turn"], plainMembers)
        #expect((try? carsOnly.get())?.kind == .only)
    }

    @Test func parsesAViaWayChainInOrder() {
        let result = parse(
            ["type": "restriction", "restriction": "no_u_turn"],
            [
                Member(.way, 1, role: "from"), Member(.way, 5, role: "via"), Member(.way, 6, role: "via"),
                Member(.way, 3, role: "to"), Member(.node, 9, role: "location_hint"),
            ])
        #expect(result == .success(Restriction(kind: .no, maneuver: "u_turn", from: [1], via: .ways([5, 6]), to: [3])))
    }

    @Test func noEntryMayHaveSeveralFromWaysAndNoExitSeveralToWays() {
        let entry = parse(
            ["type": "restriction", "restriction": "no_entry"],
            [
                Member(.way, 1, role: "from"), Member(.way, 4, role: "from"), Member(.node, 2, role: "via"),
                Member(.way, 3, role: "to"),
            ])
        #expect((try? entry.get())?.from == [1, 4])
        let exit = parse(
            ["type": "restriction", "restriction": "no_exit"],
            [
                Member(.way, 1, role: "from"), Member(.node, 2, role: "via"), Member(.way, 3, role: "to"),
                Member(.way, 4, role: "to"),
            ])
        #expect((try? exit.get())?.to == [3, 4])
    }

    @Test(
        arguments: [
            (
                "not a restriction", ["type": "multipolygon", "restriction": "no_left_turn"], [],
                CarProfile.RestrictionRejection.notARestriction
            ),
            (
                "lorries only", ["type": "restriction", "restriction:hgv": "no_left_turn"], [],
                .notForCars("restriction:hgv")
            ),
            (
                "conditional only",
                ["type": "restriction", "restriction:conditional": "no_left_turn @ (Mo-Fr 07:00-09:00)"], [],
                .conditionalOnly
            ),
            ("no value", ["type": "restriction"], [], .unknownValue("")),
            ("unknown value", ["type": "restriction", "restriction": "no_parking"], [], .unknownValue("no_parking")),
            (
                "unknown prefix", ["type": "restriction", "restriction": "maybe_left_turn"], [],
                .unknownValue("maybe_left_turn")
            ),
        ] as [(String, [String: String], [Member], CarProfile.RestrictionRejection)])
    func refusesRelationsThatAreNotCarRestrictions(
        label: String, tags: [String: String], members: [Member],
        reason: CarProfile.RestrictionRejection
    ) {
        #expect(parse(tags, members.isEmpty ? plainMembers : members) == .failure(reason), "\(label)")
    }

    @Test(
        arguments: [
            (
                "no from", [Member(.node, 2, role: "via"), Member(.way, 3, role: "to")],
                CarProfile.RestrictionRejection.missingFrom
            ),
            ("no to", [Member(.way, 1, role: "from"), Member(.node, 2, role: "via")], .missingTo),
            ("no via", [Member(.way, 1, role: "from"), Member(.way, 3, role: "to")], .missingVia),
            (
                "from is a node",
                [Member(.node, 1, role: "from"), Member(.node, 2, role: "via"), Member(.way, 3, role: "to")],
                .wrongMemberKind(role: "from")
            ),
            (
                "to is a relation",
                [Member(.way, 1, role: "from"), Member(.node, 2, role: "via"), Member(.relation, 3, role: "to")],
                .wrongMemberKind(role: "to")
            ),
            (
                "two from ways on a left turn",
                [
                    Member(.way, 1, role: "from"), Member(.way, 4, role: "from"), Member(.node, 2, role: "via"),
                    Member(.way, 3, role: "to"),
                ], .ambiguous(role: "from", count: 2)
            ),
            (
                "two to ways",
                [
                    Member(.way, 1, role: "from"), Member(.node, 2, role: "via"), Member(.way, 3, role: "to"),
                    Member(.way, 4, role: "to"),
                ], .ambiguous(role: "to", count: 2)
            ),
            (
                "two via nodes",
                [
                    Member(.way, 1, role: "from"), Member(.node, 2, role: "via"), Member(.node, 5, role: "via"),
                    Member(.way, 3, role: "to"),
                ], .badVia
            ),
            (
                "node and way via",
                [
                    Member(.way, 1, role: "from"), Member(.node, 2, role: "via"), Member(.way, 5, role: "via"),
                    Member(.way, 3, role: "to"),
                ], .badVia
            ),
            (
                "relation via",
                [Member(.way, 1, role: "from"), Member(.relation, 2, role: "via"), Member(.way, 3, role: "to")], .badVia
            ),
        ] as [(String, [Member], CarProfile.RestrictionRejection)])
    func refusesMalformedRestrictionsWithTheReason(
        label: String, members: [Member], reason: CarProfile.RestrictionRejection
    ) {
        #expect(parse(["type": "restriction", "restriction": "no_left_turn"], members) == .failure(reason), "\(label)")
    }
}
