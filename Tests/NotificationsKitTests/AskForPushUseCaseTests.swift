import Testing
import NotificationsKit

@MainActor @Suite struct AskForPushUseCaseTests {
    @Test func firstLaunchAsksProvisionallyWithoutAPrompt() async {
        let permission = FakePermission(.notAsked, results: [.quiet])
        await DefaultAskForPushUseCase(permission: permission).askQuietly()
        #expect(permission.requests == [true])
    }

    @Test(arguments: [PushPermission.quiet, .allowed, .denied])
    func laterLaunchesDoNotAskAgain(status: PushPermission) async {
        let permission = FakePermission(status)
        await DefaultAskForPushUseCase(permission: permission).askQuietly()
        #expect(permission.requests.isEmpty)
    }

    @Test func afterTheFirstOrderTheRealPromptAppearsOnce() async {
        let permission = FakePermission(.quiet, results: [.denied])
        let useCase = DefaultAskForPushUseCase(permission: permission)
        #expect(await useCase.askAfterFirstOrder() == .denied)
        #expect(await useCase.askAfterFirstOrder() == .denied)
        #expect(permission.requests == [false])
    }

    @Test func afterADenialItIsSettingsNeverThePrompt() async {
        let permission = FakePermission(.denied)
        #expect(await DefaultAskForPushUseCase(permission: permission).askAfterFirstOrder() == .denied)
        #expect(permission.requests.isEmpty)
    }

    @Test func alreadyAllowedNeedsNoPrompt() async {
        let permission = FakePermission(.allowed)
        #expect(await DefaultAskForPushUseCase(permission: permission).askAfterFirstOrder() == .allowed)
        #expect(permission.requests.isEmpty)
    }
}
