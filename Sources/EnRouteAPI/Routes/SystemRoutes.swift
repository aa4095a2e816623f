import HTTPEngine

extension EnRouteAPI {
    /// `/healthz`, `/readyz`, `/metrics` and `/openapi.yaml`. The metrics are the operators' (an ops token): they
    /// describe the whole business (trips, searches, payments) to anyone who can reach the API otherwise.
    func addSystemRoutes(_ r: inout Router) {
        r.add("GET", "/healthz", .sync { _ in .jsonBytes(Array(#"{"status":"ok"}"#.utf8)) })
        r.add(
            "GET", "/readyz",
            .sync { [ready] _ in
                ready()
                    ? .jsonBytes(Array(#"{"status":"ready"}"#.utf8))
                    : HTTPError.unavailable(retryAfterSeconds: 1, detail: "The store is not reachable.").response
            })
        r.add(
            "GET", "/metrics",
            .sync { [metrics, auth] req in
                _ = try auth.account(for: req, roles: [.ops])
                return .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
            })
        r.add("GET", "/openapi.yaml", .sync { [openAPI] _ in .text(openAPI, contentType: "application/yaml") })
    }
}
