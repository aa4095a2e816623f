import Foundation
public import EnRouteModels
import HTTPEngine

/// The tracking JSON written by hand for the hot path; decodes to exactly what `WireCoding` would produce.
public enum TrackingJSON {
    /// `dto` as compact JSON bytes with the seed's keys and explicit nulls.
    public static func encode(_ dto: TrackingDTO) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(480)
        raw(#"{"orderId":"#, &out)
        string(dto.orderId, &out)
        raw(#","version":"#, &out)
        raw(String(dto.version), &out)
        raw(#","status":""#, &out)
        raw(dto.status.rawValue, &out)
        raw(#"","problem":"#, &out)
        if let problem = dto.problem { string(problem, &out) } else { raw("null", &out) }
        raw(#","eta":"#, &out)
        if let eta = dto.eta {
            raw(#"{"earliest":""#, &out)
            ISO8601.append(eta.earliest, to: &out)
            raw(#"","latest":""#, &out)
            ISO8601.append(eta.latest, to: &out)
            raw(#""}"#, &out)
        } else {
            raw("null", &out)
        }
        raw(#","rider":"#, &out)
        if let rider = dto.rider {
            raw(#"{"firstName":"#, &out)
            string(rider.firstName, &out)
            raw(#","lat":"#, &out)
            number(rider.lat, &out)
            raw(#","lng":"#, &out)
            number(rider.lng, &out)
            raw(#","recordedAt":""#, &out)
            ISO8601.append(rider.recordedAt, to: &out)
            raw(#""}"#, &out)
        } else {
            raw("null", &out)
        }
        raw(#","destination":{"lat":"#, &out)
        number(dto.destination.lat, &out)
        raw(#","lng":"#, &out)
        number(dto.destination.lng, &out)
        raw(#"},"generatedAt":""#, &out)
        ISO8601.append(dto.generatedAt, to: &out)
        if let stops = dto.stopsBefore {
            raw(#"","stopsBefore":"#, &out)
            raw(String(stops), &out)
            raw("}", &out)
        } else {
            raw(#""}"#, &out)
        }
        return out
    }

    private static func raw(_ s: String, _ out: inout [UInt8]) { out.append(contentsOf: s.utf8) }

    private static func number(_ v: Double, _ out: inout [UInt8]) {
        raw(v.isFinite ? v.description : "null", &out)
    }

    private static func string(_ s: String, _ out: inout [UInt8]) {
        out.append(0x22)
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }
}
