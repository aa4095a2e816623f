@testable import PostgresClient

/// PostgresRow's readings of text-format values, on arbitrary text. Properties: bytea's hex output of any bytes reads
/// back as those bytes, and a well-formed `\x` value reads as the bytes it spells; a double that reads back prints and
/// reads as itself (NaN as NaN); an integer reads only from its own decimal spelling, less a `+` or leading zeros;
/// a boolean is true for `t` alone; NULL reads as nil, 0, false and no bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPostgresValues(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: input, as: UTF8.self)
    let row = PostgresRow(values: [text, hex(input), nil])
    property(row.bytes(1) == input, "the hex of \(input) reads back as \(row.bytes(1))")
    if isHexOutput(text) {
        property(hex(row.bytes(0)) == text.lowercased(), "\(text) reads as \(row.bytes(0))")
    }
    if let value = PostgresRow.parseDouble(text) {
        property(row.double(0).bitPattern == value.bitPattern, "double(0) of \(text)")
        let again = PostgresRow.parseDouble(postgresSpelling(value))
        property(
            again.map { $0 == value || $0.isNaN && value.isNaN } == true,
            "\(text) as \(value) prints and reads back as \(String(describing: again))")
    }
    let integer = row.int(0)
    if integer != 0 || text.contains("0") {
        let digits = text.drop { $0 == "+" || $0 == "-" }.drop { $0 == "0" }
        property(
            integer == 0 || digits == "\(integer.magnitude)", "\(text.debugDescription) reads as the integer \(integer)"
        )
    }
    property(row.bool(0) == (text == "t"), "\(text.debugDescription) reads as a boolean \(row.bool(0))")
    property(
        row.isNull(2) && row.text(2) == nil && row.int(2) == 0 && row.double(2) == 0 && !row.bool(2)
            && row.bytes(2).isEmpty, "NULL reads as a value")
    return 0
}

/// bytea's hex output format: `\x` and two lowercase digits a byte.
private func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return "\\x" + String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
}

private func isHexOutput(_ text: String) -> Bool {
    text.hasPrefix("\\x") && text.utf8.count % 2 == 0 && text.dropFirst(2).allSatisfy(\.isHexDigit)
}

/// How PostgreSQL prints a float8 (shortest round-trip digits; Infinity, -Infinity and NaN spelled out).
private func postgresSpelling(_ value: Double) -> String {
    if value.isNaN { return "NaN" }
    if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
    return "\(value)"
}
