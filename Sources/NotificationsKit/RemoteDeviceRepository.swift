import Foundation
public import HTTPTransport
import EnRouteModels

/// Keeps the server's record of this phone's token right: `PUT /v1/devices/{token}` on change, `DELETE
/// /v1/devices/{token}` at sign-out. The account comes from the auth header.
public actor RemoteDeviceRepository: DeviceRegistration {
    private struct Registration: Equatable { let token: DeviceToken; let account: AccountID; let publicKey: [UInt8]? }

    private let http: any HTTPClient
    private let server: APIServer
    private let device: DeviceInfo
    private let keys: any KeyStore
    private var token: DeviceToken?
    private var lastSuccess: Registration?

    public init(http: any HTTPClient, server: APIServer, device: DeviceInfo, keys: any KeyStore) {
        self.http = http
        self.server = server
        self.device = device
        self.keys = keys
    }

    public func register(token: DeviceToken, for account: AccountID?) async throws {
        self.token = token
        // Signed out: nothing to send; the token is kept for the next sign-in.
        guard let account else { return }
        let wanted = Registration(token: token, account: account, publicKey: await keys.publicKey())
        guard wanted != lastSuccess else { return }
        let body = DeviceRegistrationBody(
            platform: "ios", environment: device.environment, appVersion: device.appVersion,
            publicKey: wanted.publicKey.map { Data($0).base64EncodedString() })
        let request = try await server.request("PUT", APIPath.device(token.hex), json: body, timeout: .seconds(15))
        try await http.send(request).requireSuccess()
        lastSuccess = wanted
    }

    public func unregister() async throws {
        guard let token else { return }
        let request = await server.request("DELETE", APIPath.device(token.hex), timeout: .seconds(15))
        try await http.send(request).requireSuccess()
        lastSuccess = nil
    }
}
