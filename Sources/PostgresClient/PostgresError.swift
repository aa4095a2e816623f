/// An error from PostgreSQL or libpq: the server's SQLSTATE, message and detail.
public struct PostgresError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The five-character SQLSTATE (`23505` unique violation, `40001` serialization failure, `08006` connection
    /// failure…).
    public let sqlState: String
    /// The primary message.
    public let message: String
    /// The server's detail line, if any.
    public let detail: String?

    /// An error with these fields.
    public init(sqlState: String, message: String, detail: String? = nil) {
        self.sqlState = sqlState; self.message = message; self.detail = detail
    }

    /// "PostgreSQL error SQLSTATE: MESSAGE (DETAIL)".
    public var description: String {
        "PostgreSQL error \(sqlState): \(message)" + (detail.map { " (\($0))" } ?? "")
    }

    /// True for errors that mean the connection or the server went away (class 08, or an administrator's shutdown
    /// or termination, 57P01–57P03): the connection is dropped and the next use opens a new one.
    public var isConnectionLoss: Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// True for SQLSTATEs that mean "a concurrent transaction won": serialization failure, deadlock, unique violation.
    public var isConcurrencyConflict: Bool { ["40001", "40P01", "23505"].contains(sqlState) }

    static func connectionFailure(_ message: String) -> PostgresError {
        PostgresError(sqlState: "08006", message: message)
    }
}
