/// An `AppLifecycle` the owner sets by hand: always foreground for a command-line tool, driven by tests.
@MainActor
public final class ManualAppLifecycle: AppLifecycle {
    /// The phase last set.
    public private(set) var phase: AppPhase
    private var handlers: [@MainActor (AppPhase) -> Void] = []

    /// Starts in `phase`.
    public init(phase: AppPhase = .foreground) { self.phase = phase }

    /// Adds an observer; it lives as long as this object.
    public func observe(_ handler: @escaping @MainActor (AppPhase) -> Void) { handlers.append(handler) }

    /// Moves to `phase` and tells every observer, if it changed.
    public func set(_ phase: AppPhase) {
        guard phase != self.phase else { return }
        self.phase = phase
        for handler in handlers { handler(phase) }
    }
}
