public import Foundation
public import HTTPTransport
public import EnRouteDomain
public import EnRouteModels

/// Where and as whom Twilio Proxy is reached.
public struct TwilioProxyConfiguration: Sendable, Equatable {
    /// The account (`AC…`) or API key (`SK…`) sid that signs requests, the basic-auth user.
    public let username: String
    /// The account's auth token or the API key's secret, the basic-auth password.
    public let password: String
    /// The Proxy Service (`KS…`) whose number pool sessions use.
    public let serviceSid: String
    /// `https://proxy.twilio.com` unless a stand-in is given.
    public let baseURL: URL

    public init(
        username: String, password: String, serviceSid: String, baseURL: URL = URL(string: "https://proxy.twilio.com")!
    ) {
        self.username = username; self.password = password; self.serviceSid = serviceSid; self.baseURL = baseURL
    }
}

/// Twilio Proxy behind the domain's `TelephonyRelay`: `POST /v1/Services/{KS}/Sessions` (`Ttl`, `Mode`), then
/// `…/Sessions/{KC}/Participants` (`Identifier`, `FriendlyName`) whose answer's `proxy_identifier` is the number that
/// participant dials, and closing with `POST …/Sessions/{KC}` `Status=closed`. Form-encoded bodies, basic auth,
/// through an injected `HTTPClient`. Participants' real numbers go only in request bodies, never in an error text.
public struct TwilioProxyRelay: TelephonyRelay {
    public let name = "twilio-proxy"
    public let configuration: TwilioProxyConfiguration
    let client: any HTTPClient

    public init(configuration: TwilioProxyConfiguration, client: any HTTPClient) {
        self.configuration = configuration; self.client = client
    }

    public func openSession(tripId: String, ttlSeconds: Int) async throws -> String {
        // No UniqueName: a trip may need a second session (a new provider), and UniqueName must never repeat.
        let body = try await post(sessionsPath, [("Ttl", String(ttlSeconds)), ("Mode", "voice-only")])
        guard let session = try? JSONDecoder().decode(Session.self, from: body) else {
            throw TelephonyRelayError.relay(status: 201, detail: "not a Session")
        }
        return session.sid
    }

    public func addParticipant(session: String, number: E164PhoneNumber, label: String) async throws -> E164PhoneNumber
    {
        let body = try await post(
            sessionsPath + "/\(Self.segment(session))/Participants",
            [("Identifier", number.e164), ("FriendlyName", label)])
        guard let participant = try? JSONDecoder().decode(Participant.self, from: body),
            let proxy = participant.proxy_identifier.flatMap(E164PhoneNumber.init)
        else {
            throw TelephonyRelayError.relay(status: 201, detail: "not a Participant with a proxy_identifier")
        }
        return proxy
    }

    public func closeSession(_ session: String) async throws {
        _ = try await post(sessionsPath + "/\(Self.segment(session))", [("Status", "closed")])
    }

    // MARK: - Wire

    struct Session: Decodable { let sid: String }
    struct Participant: Decodable { let sid: String; let proxy_identifier: String? }
    struct Failure: Decodable { let code: Int?; let message: String? }

    private var sessionsPath: String { "/v1/Services/\(Self.segment(configuration.serviceSid))/Sessions" }

    private func post(_ path: String, _ form: [(String, String)]) async throws -> Data {
        let credentials = Data("\(configuration.username):\(configuration.password)".utf8).base64EncodedString()
        let request = HTTPClientRequest(
            method: "POST", url: URL(string: configuration.baseURL.absoluteString.trimmingSuffix("/") + path)!,
            headers: [
                "Authorization": "Basic \(credentials)",
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            ],
            body: Data(Self.form(form).utf8), timeout: .seconds(10))
        let response: HTTPClientResponse
        do { response = try await client.send(request) } catch { throw TelephonyRelayError.unreachable("\(error)") }
        switch response.status {
        case 200...299:
            return response.body
        case 404:
            throw TelephonyRelayError.unknownSession(path.split(separator: "/").last.map(String.init) ?? path)
        default:
            // Twilio's message may quote a parameter back; only its code is kept, so no number reaches a log.
            let code =
                (try? JSONDecoder().decode(Failure.self, from: response.body))?.code.map { "Twilio error \($0)" }
                ?? "no error code"
            throw TelephonyRelayError.relay(status: response.status, detail: code)
        }
    }

    /// `application/x-www-form-urlencoded`: unreserved characters stay, everything else is `%XX` of UTF-8 (`+` too).
    static func form(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(
                charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
    }

    static func segment(_ text: String) -> String { escape(text) }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
