/// Who may cause a move, plus ops staff.
public enum Party: String, Codable, Sendable, CaseIterable {
    case customer, provider, merchant, backend, ops
}

/// An authenticated caller: the account id and the role its token grants.
public struct Account: Sendable, Equatable, Hashable {
    public let id: String
    public let role: Party
    public init(id: String, role: Party) { self.id = id; self.role = role }
}
