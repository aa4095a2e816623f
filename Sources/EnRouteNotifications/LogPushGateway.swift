/// Without APNs credentials: writes each push to a log line and calls it delivered.
public import EnRouteLogging
public struct LogPushGateway: PushGateway {
    private let log: Logger

    /// A gateway that reports each push to `log`.
    public init(log: Logger) { self.log = log }

    public func send(_ push: APNsPush) async -> PushOutcome {
        log.info(
            Logger.Message(
                "push (not sent: APNs is not configured) \(push.pushType.rawValue) to \(push.token.prefix(8))… "
                    + "[\(push.environment.rawValue)] "
                    + "priority \(push.priority) collapse \(push.collapseID ?? "-") id \(push.apnsID): "
                    + "\(String(decoding: push.payload, as: UTF8.self))"
            ))
        return .delivered
    }
}
