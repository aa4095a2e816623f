/// An RFC 9457 problem details document (`application/problem+json`).
public struct Problem: Codable, Sendable, Equatable, Error {
    /// One invalid field, named by a JSON Pointer.
    public struct FieldError: Codable, Sendable, Equatable {
        public let pointer: String
        public let detail: String
        public init(pointer: String, detail: String) { self.pointer = pointer; self.detail = detail }
    }

    public var type: String
    public var title: String
    public var status: Int
    public var detail: String?
    public var instance: String?
    /// Field-level problems for 422 answers.
    public var errors: [FieldError]?

    public init(
        type: String = "about:blank", title: String, status: Int, detail: String? = nil,
        instance: String? = nil, errors: [FieldError]? = nil
    ) {
        self.type = type; self.title = title; self.status = status; self.detail = detail
        self.instance = instance; self.errors = errors
    }
}
