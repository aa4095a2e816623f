/// A banner, unless the user is already looking at that order (the engine asks it in willPresent).
public struct ForegroundPresentationPolicy: Sendable {
    public init() {}

    /// The presentation for a push about `route` while `visible` is on screen.
    public func presentation(for route: Route?, visible: Route?) -> ForegroundPresentation {
        if case .order(let pushed) = route, case .order(let shown) = visible, pushed == shown { return .refreshOnly }
        return .banner
    }
}
