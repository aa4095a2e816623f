/// Decodes a chunked request body (RFC 9112 §7.1) as its bytes arrive; chunk extensions and trailers are read and
/// dropped.
struct ChunkedDecoder {
    private enum State: Equatable {
        case size(value: UInt64, digits: Int)
        case sizeExtension(value: UInt64)
        case sizeLF(value: UInt64)
        case data(remaining: UInt64)
        case dataCR
        case dataLF
        case trailerStart
        case trailer
        case trailerLF
        case finalLF
        case done
    }

    /// What one call made of its input.
    enum Outcome: Equatable {
        /// Everything given was read; more is needed.
        case needMore
        /// The body ended after `consumed` bytes of the input; what follows belongs to the next request.
        case done(consumed: Int)
        case malformed
    }

    private var state = State.size(value: 0, digits: 0)
    /// Bytes of trailer fields read, bounded like a head.
    private var trailerBytes = 0
    /// The largest trailer section read before the body is refused.
    static let maxTrailer = 8 * 1024

    /// Reads `input`, appending the body's bytes to `body` while `keep` holds (past a limit the rest is only counted).
    mutating func decode(
        _ input: UnsafeRawBufferPointer, into body: inout [UInt8], keep: Bool, decoded: inout Int
    ) -> Outcome {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .needMore }
        var i = 0
        let count = input.count
        while i < count {
            switch state {
            case .data(let remaining):
                let take = Int(min(remaining, UInt64(count - i)))
                if keep { body.append(contentsOf: UnsafeBufferPointer(start: base + i, count: take)) }
                decoded += take
                i += take
                state = remaining == UInt64(take) ? .dataCR : .data(remaining: remaining - UInt64(take))
            case .done:
                return .done(consumed: i)
            default:
                switch step(base[i]) {
                case .more: i += 1
                case .ended: return .done(consumed: i + 1)
                case .malformed: return .malformed
                }
            }
        }
        return state == .done ? .done(consumed: count) : .needMore
    }

    /// What one byte of the framing did.
    private enum Step {
        /// The body goes on.
        case more
        /// The body ended with it.
        case ended
        case malformed
    }

    /// Reads one byte of the framing: a chunk's size line, the line end after its data, or the trailer.
    private mutating func step(_ b: UInt8) -> Step {
        switch state {
        case .size(let value, let digits):
            if let d = HTTPParser.hexValue(b) {
                guard digits < 16 else { return .malformed }
                state = .size(value: value << 4 | UInt64(d), digits: digits + 1)
            } else {
                guard digits > 0 else { return .malformed }
                switch b {
                case UInt8(ascii: ";"), 32, 9: state = .sizeExtension(value: value)
                case 13: state = .sizeLF(value: value)
                case 10: state = value == 0 ? .trailerStart : .data(remaining: value)
                default: return .malformed
                }
            }
        case .sizeExtension(let value):
            switch b {
            case 13: state = .sizeLF(value: value)
            case 10: state = value == 0 ? .trailerStart : .data(remaining: value)
            default: guard b >= 32 || b == 9, b != 127 else { return .malformed }
            }
        case .sizeLF(let value):
            guard b == 10 else { return .malformed }
            state = value == 0 ? .trailerStart : .data(remaining: value)
        case .dataCR:
            switch b {
            case 13: state = .dataLF
            case 10: state = .size(value: 0, digits: 0)
            default: return .malformed
            }
        case .dataLF:
            guard b == 10 else { return .malformed }
            state = .size(value: 0, digits: 0)
        case .trailerStart:
            switch b {
            case 13: state = .finalLF
            case 10:
                state = .done
                return .ended
            default:
                guard HTTPParser.isTokenByte(b) else { return .malformed }
                state = .trailer
            }
        case .trailer:
            trailerBytes += 1
            guard trailerBytes <= Self.maxTrailer else { return .malformed }
            switch b {
            case 13: state = .trailerLF
            case 10: state = .trailerStart
            default: guard b >= 32 || b == 9, b != 127 else { return .malformed }
            }
        case .trailerLF:
            guard b == 10 else { return .malformed }
            state = .trailerStart
        case .finalLF:
            guard b == 10 else { return .malformed }
            state = .done
            return .ended
        case .data, .done:
            // Read by `decode` itself.
            break
        }
        return .more
    }
}
