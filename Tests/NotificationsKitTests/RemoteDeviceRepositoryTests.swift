import Foundation
import Testing
import HTTPTransport
import EnRouteNotifications
import EnRouteAPI
import HTTPEngine
import NotificationsKit
import Synchronization
import TestSupport

/// The client kit's device repository against the real notification routes, in process.
@Suite struct RemoteDeviceRepositoryTests {
    final class CountingClient: HTTPClient {
        let inner: InProcessHTTPClient
        private let log = Mutex<[String]>([])
        init(_ inner: InProcessHTTPClient) { self.inner = inner }
        var sent: [String] { log.withLock { $0 } }
        func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
            log.withLock { $0.append("\(request.method) \(request.url.path)") }
            return try await inner.send(request)
        }
        func events(_ request: HTTPClientRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
            inner.events(request)
        }
    }

    struct SUT {
        let backend: TestBackend
        let devices: any DeviceRepository
        let http: CountingClient
        let keys: InMemoryKeyStore
        let repository: RemoteDeviceRepository
    }

    static func makeSUT(account: String = "a1") -> SUT {
        let backend = TestBackend()
        let devices = backend.backend.devices
        let http = CountingClient(InProcessHTTPClient(router: backend.router))
        let keys = InMemoryKeyStore()
        let server = APIServer(
            baseURL: URL(string: "http://enroute.test")!,
            credentials: StaticAccessToken(backend.token(account, .customer)))
        return SUT(
            backend: backend, devices: devices, http: http, keys: keys,
            repository: RemoteDeviceRepository(
                http: http, server: server, device: DeviceInfo(environment: "production", appVersion: "4.2.0"),
                keys: keys))
    }

    static let token = DeviceToken(Array(repeating: 0xAB, count: 32))

    @Test func registrationSendsTheTokenAndPublicKeyOnlyWhenSomethingChanged() async throws {
        let sut = Self.makeSUT()
        let publicKey = try await sut.keys.makeKeyPair()
        try await sut.repository.register(token: Self.token, for: "a1")
        try await sut.repository.register(token: Self.token, for: "a1")
        #expect(sut.http.sent == ["PUT /v1/devices/\(Self.token.hex)"])
        let record = try #require(try await sut.devices.device(token: Self.token.hex))
        #expect(record.accountId == "a1" && record.publicKey == publicKey && record.environment == .production)
        let rotated = DeviceToken(Array(repeating: 0xCD, count: 32))
        try await sut.repository.register(token: rotated, for: "a1")
        #expect(sut.http.sent.count == 2)
    }

    @Test func signedOutNothingIsSent() async throws {
        let sut = Self.makeSUT()
        try await sut.repository.register(token: Self.token, for: nil)
        #expect(sut.http.sent.isEmpty)
    }

    @Test func unregisterDeletesTheTokenWhileCredentialsLast() async throws {
        let sut = Self.makeSUT()
        _ = try await sut.keys.makeKeyPair()
        try await sut.repository.register(token: Self.token, for: "a1")
        try await sut.repository.unregister()
        #expect(sut.http.sent.last == "DELETE /v1/devices/\(Self.token.hex)")
        #expect(try await sut.devices.device(token: Self.token.hex) == nil)
        try await sut.repository.register(token: Self.token, for: "a1")
        #expect(sut.http.sent.count == 3, "after unregistering, the same token and account register again")
    }

    @Test func aFailedRegistrationThrowsAndIsSentAgainNextTime() async throws {
        let http = ScriptedHTTPClient([.success(503), .success(204)])
        let repository = RemoteDeviceRepository(
            http: http, server: testServer, device: DeviceInfo(environment: "sandbox", appVersion: "1"),
            keys: InMemoryKeyStore())
        await #expect(throws: APIError.self) { try await repository.register(token: Self.token, for: "a1") }
        try await repository.register(token: Self.token, for: "a1")
        #expect(http.requests.count == 2)
    }
}
