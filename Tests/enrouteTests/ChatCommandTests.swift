import Testing
import EnRouteModels
import TestSupport
@testable import enroute

/// `enroute chat`'s own parts: whose side the token is on.
@Suite struct ChatCommandTests {
    @Test func theTokensRoleSaysWhichSideIsMine() {
        let backend = TestBackend()
        #expect(ChatCommand.role(inToken: backend.token("c1", .customer)) == .customer)
        #expect(ChatCommand.role(inToken: backend.token("p1", .provider)) == .provider)
        #expect(ChatCommand.role(inToken: backend.token("ops", .ops)) == nil)
        #expect(ChatCommand.role(inToken: "not-a-token") == nil)
    }
}
