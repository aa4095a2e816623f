import Foundation
import Testing
import EnRouteDomain
import TestSupport

/// The system routes: health and the document are anyone's; the metrics are the operators'.
@Suite struct SystemRoutesTests {
    @Test(arguments: [(nil, 401), ("c1", 403), ("p1", 403), ("m1", 403)] as [(String?, Int)])
    func theMetricsNeedAnOpsToken(account: String?, status: Int) async {
        let backend = TestBackend()
        let role: Party =
            switch account {
            case "p1": .provider;
            case "m1": .merchant;
            default: .customer
            }
        let answer = await backend.call("GET", "/metrics", token: account.map { backend.token($0, role) })
        #expect(answer.status == status)
        #expect(answer.headers["Content-Type"] == "application/problem+json")
        #expect(!String(decoding: answer.body, as: UTF8.self).contains("enroute_"))
    }

    @Test func opsReadTheMetricsAndAnyoneTheHealthAndTheDocument() async {
        let backend = TestBackend(openAPI: "openapi: 3.1.0")
        let metrics = await backend.call("GET", "/metrics", token: backend.token("ops", .ops))
        #expect(metrics.status == 200)
        #expect(metrics.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        for path in ["/healthz", "/readyz", "/openapi.yaml"] {
            #expect(await backend.call("GET", path, token: nil).status == 200, "\(path)")
        }
    }
}
