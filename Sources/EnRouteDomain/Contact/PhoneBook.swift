public import EnRouteModels

/// Where the parties' own phone numbers are kept (the directory): read only to open a relay session, never shown
/// to another party.
public protocol PhoneBook: Sendable {
    /// The number `account` gave, nil when none.
    func phoneNumber(of account: Account) -> E164PhoneNumber?
    /// Keeps `number` as `account`'s own, replacing any before.
    func setPhoneNumber(_ number: E164PhoneNumber, for account: Account) async throws
}
