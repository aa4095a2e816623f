import Foundation
import HTTPEngine
import Synchronization

/// A stateful stand-in for the part of Twilio Proxy's REST API EnRoute uses, served in-process through a `Router`:
/// `POST /v1/Services/{KS}/Sessions` (`Ttl`, `Mode`), `POST …/Sessions/{KC}/Participants` (`Identifier`,
/// `FriendlyName`)
/// answering a `proxy_identifier` from the service's pool (one per identifier across open sessions, two participants
/// a session), and `POST …/Sessions/{KC}` with `Status=closed`. Form-encoded bodies, basic auth; errors in Twilio's
/// `{code, message, status}` shape.
final class TwilioProxyStandIn: Sendable {
    struct Session: Sendable, Equatable {
        var sid: String, ttl: Int?, mode: String?, status: String
        var participants: [(identifier: String, proxy: String)] = []
        static func == (a: Session, b: Session) -> Bool {
            a.sid == b.sid && a.status == b.status && a.participants.map(\.proxy) == b.participants.map(\.proxy)
        }
    }
    struct Request: Sendable {
        let method: String; let path: String; let contentType: String?; let authorization: String?;
        let form: [String: String]
    }
    private struct State {
        var sessions: [String: Session] = [:]; var order: [String] = []; var requests: [Request] = []; var next = 1
    }

    let accountSid = "AC" + String(repeating: "a", count: 32)
    let authToken = "stand-in-auth-token"
    let serviceSid = "KS" + String(repeating: "b", count: 32)
    let pool = ["+15005550001", "+15005550002"]
    private let state = Mutex(State())

    var sessions: [Session] { state.withLock { s in s.order.compactMap { s.sessions[$0] } } }
    var requests: [Request] { state.withLock { $0.requests } }

    func router() -> Router {
        var r = Router()
        let base = "/v1/Services/{service}/Sessions"
        r.post(base) { [self] req in
            try handle(req) { form, _ in
                let sid = state.withLock { s -> String in
                    let sid = String(format: "KC%032d", s.next); s.next += 1
                    s.sessions[sid] = Session(
                        sid: sid, ttl: form["Ttl"].flatMap(Int.init), mode: form["Mode"], status: "open")
                    s.order.append(sid)
                    return sid
                }
                return (
                    201,
                    #"{"sid":"\#(sid)","service_sid":"\#(serviceSid)","status":"open","ttl":\#(form["Ttl"] ?? "0")}"#
                )
            }
        }
        r.post(base + "/{session}") { [self] req in
            try handle(req) { form, params in
                let sid = params["session"] ?? ""
                return state.withLock { s in
                    guard var session = s.sessions[sid] else {
                        return (404, Self.error(20404, "The requested resource was not found", 404))
                    }
                    if form["Status"] == "closed" { session.status = "closed" }
                    s.sessions[sid] = session
                    return (200, #"{"sid":"\#(sid)","status":"\#(session.status)"}"#)
                }
            }
        }
        r.post(base + "/{session}/Participants") { [self] req in
            try handle(req) { form, params in
                let sid = params["session"] ?? ""
                guard let identifier = form["Identifier"] else {
                    return (400, Self.error(21604, "Identifier is required", 400))
                }
                return state.withLock { s in
                    guard var session = s.sessions[sid], session.status != "closed" else {
                        return (404, Self.error(20404, "The requested resource was not found", 404))
                    }
                    guard session.participants.count < 2 else {
                        return (400, Self.error(80604, "Session already has two participants", 400))
                    }
                    let taken = Set(
                        s.sessions.values.filter { $0.status != "closed" }.flatMap {
                            $0.participants.filter { $0.identifier == identifier }.map(\.proxy)
                        })
                    guard let proxy = pool.first(where: { !taken.contains($0) }) else {
                        // Twilio's message repeats the number it could not place: the relay must not pass it on.
                        return (400, Self.error(80207, "No proxy number available for \(identifier)", 400))
                    }
                    session.participants.append((identifier, proxy))
                    s.sessions[sid] = session
                    return (
                        201,
                        #"{"sid":"KP\#(String(format: "%032d", session.participants.count))","session_sid":"\#(sid)","#
                            + #""identifier":"\#(identifier)","proxy_identifier":"\#(proxy)","#
                            + #""friendly_name":"\#(form["FriendlyName"] ?? "")"}"#
                    )
                }
            }
        }
        return r
    }

    private func handle(
        _ req: HTTPRequest, _ body: ([String: String], [String: String]) -> (Int, String)
    ) throws -> HTTPResponse {
        let form = Self.decodeForm(String(decoding: req.body, as: UTF8.self))
        state.withLock {
            $0.requests.append(
                Request(
                    method: req.method, path: req.path, contentType: req.headers["Content-Type"],
                    authorization: req.headers["Authorization"], form: form))
        }
        let expected = "Basic " + Data("\(accountSid):\(authToken)".utf8).base64EncodedString()
        guard req.headers["Authorization"] == expected else {
            return Self.json(401, Self.error(20003, "Authenticate", 401))
        }
        guard req.pathParameters["service"] == serviceSid else {
            return Self.json(404, Self.error(20404, "The requested resource was not found", 404))
        }
        let (status, text) = body(form, req.pathParameters)
        return Self.json(status, text)
    }

    static func error(_ code: Int, _ message: String, _ status: Int) -> String {
        #"{"code":\#(code),"message":"\#(message)","more_info":"https://www.twilio.com/docs/errors/\#(code)","#
            + #""status":\#(status)}"#
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        var headers = HTTPHeaders(); headers.add("Content-Type", "application/json")
        return HTTPResponse(status: status, headers: headers, body: .bytes(Array(text.utf8)))
    }

    static func decodeForm(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            out[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return out
    }
}
