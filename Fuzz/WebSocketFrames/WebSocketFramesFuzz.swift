@testable import HTTPEngine

/// The largest message the codecs accept, small so that inputs reach the 1009 refusal.
private let maxMessage = 256
private let clientKey: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

/// WebSocketCodec, server side (masked frames in) and client side (plain frames in), on arbitrary bytes. Properties:
/// the bytes fed whole, split in two at any point, or a byte at a time give the same actions; no message is longer
/// than the limit and a text message is valid UTF-8 by construction; a ping is answered by a pong with its payload;
/// a first frame that is a whole data message, decoded then encoded again with its own mask, is the same bytes; every
/// delivered message, framed again, is delivered the same by a fresh codec.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    for side in [Side.server, .client] {
        let actions = receive(side, [input[...]])
        for k in splitPoints(size) {
            property(receive(side, [input[..<k], input[k...]]) == actions, "\(side): split at \(k) acts differently")
        }
        property(receive(side, input.indices.map { input[$0...$0] }) == actions, "\(side): a byte at a time differs")
        check(side, input, actions)
    }
    return 0
}

private enum Side { case server, client }

private func makeCodec(_ side: Side) -> WebSocketCodec {
    switch side {
    case .server: WebSocketCodec(maxMessageSize: maxMessage)
    case .client: WebSocketCodec(maxMessageSize: maxMessage, maskKey: { clientKey })
    }
}

private func receive(_ side: Side, _ pieces: [ArraySlice<UInt8>]) -> [WebSocketCodec.Action] {
    var codec = makeCodec(side)
    return pieces.flatMap { codec.receive($0) }
}

/// A frame as the peer of `side` writes it: masked with `key` towards a server, plain towards a client.
private func frame(_ side: Side, opcode: UInt8, _ payload: [UInt8], key: [UInt8] = clientKey) -> [UInt8] {
    side == .server
        ? WebSocketCodec.maskedFrame(opcode: opcode, payload: payload, key: key)
        : WebSocketCodec.frame(opcode: opcode, payload: payload)
}

private func check(_ side: Side, _ input: [UInt8], _ actions: [WebSocketCodec.Action]) {
    for (index, action) in actions.enumerated() {
        switch action {
        case .deliver(let message):
            let (opcode, payload): (UInt8, [UInt8])
            switch message {
            case .text(let text): (opcode, payload) = (0x1, Array(text.utf8))
            case .binary(let bytes): (opcode, payload) = (0x2, bytes)
            }
            property(payload.count <= maxMessage, "\(side): a message of \(payload.count) bytes")
            var fresh = makeCodec(side)
            property(fresh.receive(frame(side, opcode: opcode, payload)) == [action], "\(side): message framed again")
            if index == 0, input[0] & 0x8F == 0x80 | opcode {
                let key = side == .server ? maskKey(input) : clientKey
                let again = frame(side, opcode: opcode, payload, key: key)
                property(input.starts(with: again), "\(side): the first frame encodes again to other bytes")
            }
        case .write(let bytes):
            property(bytes.count >= 2 && bytes[0] == 0x8A, "\(side): a write that is not a pong")
        case .closeAfterWrite(let bytes, let code):
            property(index == actions.count - 1, "\(side): actions after a close")
            property(bytes.isEmpty || bytes[0] == 0x88, "\(side): a close that is not a close frame")
            property((1000...4999).contains(code), "\(side): close code \(code)")
        }
    }
}

/// The masking key of the frame at the start of `input` (after a 2-, 4- or 10-byte header).
private func maskKey(_ input: [UInt8]) -> [UInt8] {
    let start =
        switch input[1] & 0x7F {
        case 126: 4
        case 127: 10
        default: 2
        }
    return Array(input[start..<(start + 4)])
}
