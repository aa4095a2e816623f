import RedisClient

/// RESPParser on arbitrary bytes. Properties: the bytes appended whole, in two pieces split at any point, or a byte
/// at a time give the same replies and the same error; what is left buffered is what the replies did not consume;
/// every reply written back out as RESP2 is read as the same reply, consuming exactly what was written.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = read([input[...]])
    for k in splitPoints(size) {
        property(read([input[..<k], input[k...]]) == whole, "split at \(k) reads differently")
    }
    property(read(input.indices.map { input[$0...$0] }) == whole, "a byte at a time reads differently")
    var written: [UInt8] = []
    for reply in whole.replies {
        let bytes = write(reply)
        written += bytes
        var fresh = RESPParser()
        fresh.append(bytes)
        let again = try? fresh.next()
        property(
            again == reply && fresh.bufferedCount == 0, "\(reply) written out reads as \(String(describing: again))")
    }
    if whole.failed == nil {
        property(whole.buffered == size - consumed(input, whole.replies.count), "\(whole.buffered) bytes left buffered")
    }
    return 0
}

private struct Reading: Equatable {
    var replies: [RESPValue] = []
    var failed: String?
    var buffered = 0
}

private func read(_ pieces: [ArraySlice<UInt8>]) -> Reading {
    var parser = RESPParser()
    var reading = Reading()
    for piece in pieces {
        parser.append(piece)
        do {
            while let reply = try parser.next() { reading.replies.append(reply) }
        } catch {
            reading.failed = "\(error)"
            return reading
        }
    }
    reading.buffered = parser.bufferedCount
    return reading
}

/// How many bytes the first `count` replies of `input` take, read one at a time by a fresh parser.
private func consumed(_ input: [UInt8], _ count: Int) -> Int {
    var parser = RESPParser()
    parser.append(input)
    for _ in 0..<count { _ = try? parser.next() }
    return input.count - parser.bufferedCount
}

private func write(_ reply: RESPValue) -> [UInt8] {
    switch reply {
    case .simple(let text): Array("+\(text)\r\n".utf8)
    case .error(let text): Array("-\(text)\r\n".utf8)
    case .integer(let n): Array(":\(n)\r\n".utf8)
    case .bulk(let bytes): Array("$\(bytes.count)\r\n".utf8) + bytes + [13, 10]
    case .null: Array("$-1\r\n".utf8)
    case .array(let elements): Array("*\(elements.count)\r\n".utf8) + elements.flatMap(write)
    }
}
