public import EnRouteDomain
public import HTTPEngine

/// The server's Prometheus registry counts what the domain reports.
extension MetricsRegistry: MetricsSink {}
