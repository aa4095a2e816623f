public import EnRouteDomain
public import EnRouteModels
import SQLiteClient

/// The parties' phone numbers in the directory's `phone_numbers` table (directory migration 2).
extension SQLiteDirectory: PhoneBook {
    public func phoneNumber(of account: Account) -> E164PhoneNumber? { phones.withLock { $0[account] } }

    public func setPhoneNumber(_ number: E164PhoneNumber, for account: Account) async throws {
        try db.withLock { db in
            try db.run(
                """
                INSERT INTO phone_numbers (role, account_id, e164) VALUES (?1, ?2, ?3)
                ON CONFLICT(role, account_id) DO UPDATE SET e164 = ?3
                """, [.text(account.role.rawValue), .text(account.id), .text(number.e164)])
            phones.withLock { $0[account] = number }
        }
    }

    /// Every stored number; a row that no longer parses (never written by this code) is skipped.
    static func phoneNumbers(_ db: SQLiteDatabase) throws -> [Account: E164PhoneNumber] {
        let rows = try db.query("SELECT role, account_id, e164 FROM phone_numbers", []) {
            row -> (Account, E164PhoneNumber)? in
            guard let role = Party(rawValue: row.text(0) ?? ""), let number = E164PhoneNumber(row.text(2) ?? "") else {
                return nil
            }
            return (Account(id: row.text(1) ?? "", role: role), number)
        }
        return Dictionary(rows.compactMap { $0 }, uniquingKeysWith: { _, last in last })
    }
}
