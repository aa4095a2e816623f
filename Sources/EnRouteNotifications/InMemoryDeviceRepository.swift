public import Foundation
import Synchronization

/// Devices in memory, for tests and for running without a database.
public final class InMemoryDeviceRepository: DeviceRepository {
    private let records = Mutex<[String: DeviceRecord]>([:])

    public init() {}

    public func register(_ device: DeviceRecord) async throws { records.withLock { $0[device.token] = device } }

    public func remove(token: String, accountId: String) async throws -> Bool {
        records.withLock { r in
            guard r[token]?.accountId == accountId else { return false }
            r[token] = nil
            return true
        }
    }

    public func removeUnlessRegistered(after invalidSince: Date, token: String) async throws -> Bool {
        records.withLock { r in
            guard let record = r[token], record.registeredAt <= invalidSince else { return false }
            r[token] = nil
            return true
        }
    }

    public func devices(accountId: String) async throws -> [DeviceRecord] {
        records.withLock {
            $0.values.filter { $0.accountId == accountId }.sorted {
                ($0.registeredAt, $0.token) > ($1.registeredAt, $1.token)
            }
        }
    }

    public func device(token: String) async throws -> DeviceRecord? { records.withLock { $0[token] } }
}
