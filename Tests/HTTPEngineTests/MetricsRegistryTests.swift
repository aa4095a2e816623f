import Testing
@testable import HTTPEngine

@Suite struct MetricsRegistryTests {
    @Test func requestsRenderAsPrometheusCountersAndCumulativeHistograms() {
        let metrics = MetricsRegistry()
        metrics.recordRequest(route: "/v1/trips/{id}", method: "GET", status: 200, seconds: 0.0004)
        metrics.recordRequest(route: "/v1/trips/{id}", method: "GET", status: 200, seconds: 0.003)
        metrics.recordRequest(route: "/v1/trips/{id}", method: "GET", status: 404, seconds: 0.02)
        metrics.increment("enroute_fixes_dropped_total", labels: ["reason": "accuracy \"bad\""], help: "Dropped fixes.")
        metrics.gauge("enroute_open_sse_streams", help: "Open streams.") { 3 }
        let text = metrics.render()
        #expect(text.contains(#"enroute_http_requests_total{method="GET",route="/v1/trips/{id}",status="200"} 2"#))
        #expect(text.contains(#"enroute_http_requests_total{method="GET",route="/v1/trips/{id}",status="404"} 1"#))
        #expect(
            text.contains(
                #"enroute_http_request_duration_seconds_bucket{method="GET",route="/v1/trips/{id}",le="0.0005"} 1"#))
        #expect(
            text.contains(
                #"enroute_http_request_duration_seconds_bucket{method="GET",route="/v1/trips/{id}",le="0.005"} 2"#))
        #expect(
            text.contains(
                #"enroute_http_request_duration_seconds_bucket{method="GET",route="/v1/trips/{id}",le="+Inf"} 3"#))
        #expect(text.contains(#"enroute_http_request_duration_seconds_count{method="GET",route="/v1/trips/{id}"} 3"#))
        #expect(text.contains(#"enroute_fixes_dropped_total{reason="accuracy \"bad\""} 1"#))
        #expect(text.contains("# TYPE enroute_open_sse_streams gauge\nenroute_open_sse_streams 3"))
        #expect(metrics.counter("enroute_fixes_dropped_total", labels: ["reason": "accuracy \"bad\""]) == 1)
    }
}
