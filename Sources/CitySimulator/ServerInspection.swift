/// What only the server can say about a run, asked once at its end: the steps in each trip's change log, whether
/// the ledger balances, which trips were paid, what each quote was priced under. An embedded server reads its store; a
/// remote one may know less (nil).
public protocol ServerInspection: Sendable {
    /// The findings for `trips` and the ride quotes `quotes` the riders were shown.
    func findings(trips: [String], quotes: [String]) async throws -> ServerFindings
}

/// The server's side of the report.
public struct ServerFindings: Sendable, Equatable {
    /// One provider step in a trip's change log.
    public struct Step: Sendable, Equatable {
        public var changeId: String?
        public var status: String
        public init(changeId: String?, status: String) { self.changeId = changeId; self.status = status }
    }
    /// Provider steps in each trip's change log, in order; nil when the server does not expose its logs.
    public var providerSteps: [String: [Step]]?
    /// Whether every trip's ledger postings sum to zero; nil when unknown.
    public var ledgerBalanced: Bool?
    /// The trips whose payment was captured (whole or part); nil when unknown.
    public var captured: Set<String>?
    /// The server's dispatch policy (`greedy` or `batched`) and its batching window in seconds; nil when unknown.
    public var dispatchPolicy: String?
    public var dispatchWindowSeconds: Double?
    /// The busy-time multiplier each quote was priced under, by quote id (the estimate on the wire carries only its
    /// fare); nil when unknown.
    public var quoteDemand: [String: Double]?

    /// Findings with every field given.
    public init(
        providerSteps: [String: [Step]]?, ledgerBalanced: Bool?, captured: Set<String>?, dispatchPolicy: String? = nil,
        dispatchWindowSeconds: Double? = nil, quoteDemand: [String: Double]? = nil
    ) {
        self.providerSteps = providerSteps; self.ledgerBalanced = ledgerBalanced; self.captured = captured
        self.dispatchPolicy = dispatchPolicy; self.dispatchWindowSeconds = dispatchWindowSeconds
        self.quoteDemand = quoteDemand
    }

    /// A server that said nothing.
    public static let unknown = ServerFindings(providerSteps: nil, ledgerBalanced: nil, captured: nil)
}
