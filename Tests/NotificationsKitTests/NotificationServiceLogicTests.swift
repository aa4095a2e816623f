import Foundation
import Testing
import NotificationsKit
import Synchronization
import TestSupport

@Suite struct NotificationServiceLogicTests {
    /// An image fetch that finishes when the test says so.
    final class GatedImages: ImageFetcher {
        private let gate = Mutex<CheckedContinuation<Data, any Error>?>(nil)
        private let started = Mutex<[CheckedContinuation<Void, Never>]>([])
        func fetch(_ url: URL) async throws -> Data {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { c in
                    gate.withLock { $0 = c }
                    for s in started.withLock({ w in
                        defer { w.removeAll() }; return w
                    }) { s.resume() }
                }
            } onCancel: {
                gate.withLock {
                    $0?.resume(throwing: CancellationError()); $0 = nil
                }
            }
        }
        func waitUntilStarted() async {
            await withCheckedContinuation { c in
                let now = gate.withLock { $0 != nil }
                if now { c.resume() } else { started.withLock { $0.append(c) } }
            }
        }
        func finish(_ data: Data) {
            gate.withLock {
                $0?.resume(returning: data); $0 = nil
            }
        }
    }

    /// A cipher that opens any secret to "Bo" and records the associated data it was given; nothing else is expected.
    final class NamingCipher: HPKECipher {
        let associatedData = Mutex<[[UInt8]]>([])
        func makePrivateKey() -> [UInt8] { Issue.record("unexpected makePrivateKey"); return [] }
        func publicKey(for privateKey: [UInt8]) throws -> [UInt8] { Issue.record("unexpected publicKey"); return [] }
        func seal(_ plaintext: [UInt8], to publicKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8] {
            Issue.record("unexpected seal"); return []
        }
        func open(_ sealed: [UInt8], privateKey: [UInt8], info: [UInt8], aad: [UInt8]) throws -> [UInt8] {
            associatedData.withLock { $0.append(aad) }
            return Array("Bo".utf8)
        }
    }

    struct FileAttachments: AttachmentWriter {
        func write(_ data: Data, suggestedName: String) throws -> URL {
            URL(fileURLWithPath: "/tmp/attachments/\(suggestedName)")
        }
    }

    static func payload(key: [UInt8]?, id: String = "O1.4", image: Bool = true) throws -> NotificationPayload {
        var userInfo: [AnyHashable: Any] = [
            "aps": ["alert": ["title": "Almost there", "body": "Your rider is almost there"]],
            "notificationId": id, "accountId": "a1", "route": "orders/O1",
        ]
        if let key {
            let sealed = try PlatformHPKECipher().seal(
                Array("Ana".utf8), to: key, info: NotificationSecret.info, aad: Array(id.utf8))
            userInfo["secret"] = Data(sealed).base64EncodedString()
        }
        if image { userInfo["imageUrl"] = "https://img.enroute.invalid/rider/12.jpg" }
        return NotificationPayload(userInfo: userInfo)
    }

    static func makeSUT() async throws -> (NotificationServiceLogic, InMemoryKeyStore, GatedImages, ManualClock) {
        let keys = InMemoryKeyStore()
        _ = try await keys.makeKeyPair()
        let images = GatedImages()
        let clock = ManualClock()
        return (
            NotificationServiceLogic(
                keys: keys, images: images, attachments: FileAttachments(), clock: clock, photoDeadline: .seconds(20)),
            keys, images, clock
        )
    }

    @Test func theNameIsDecryptedIntoTheBodyAndThePhotoAttached() async throws {
        let (logic, keys, images, _) = try await Self.makeSUT()
        let payload = try Self.payload(key: await keys.publicKey())
        async let shown = logic.didReceive(payload)
        await images.waitUntilStarted()
        images.finish(Data([0xFF, 0xD8, 0xFF, 0xE0]))
        #expect(
            await shown
                == EnrichedNotification(
                    title: "Almost there", body: "Ana is almost there",
                    attachment: URL(fileURLWithPath: "/tmp/attachments/12.jpg"),
                    attachmentTypeHint: "public.jpeg"))
    }

    /// A photo URL without an extension still attaches: the file is named by what its bytes are.
    @Test func aPhotoWithoutAnExtensionIsNamedAndHintedByItsBytes() async throws {
        let (logic, keys, images, _) = try await Self.makeSUT()
        var payload = try Self.payload(key: await keys.publicKey())
        payload.imageURL = URL(string: "https://img.enroute.invalid/rider/12")
        async let shown = logic.didReceive(payload)
        await images.waitUntilStarted()
        images.finish(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00]))
        let result = await shown
        #expect(result?.attachment == URL(fileURLWithPath: "/tmp/attachments/12.png"))
        #expect(result?.attachmentTypeHint == "public.png")
    }

    /// A page of HTML (a login wall, an error) is not attached; the text still goes.
    @Test func somethingThatIsNotAnImageIsNotAttached() async throws {
        let (logic, keys, images, _) = try await Self.makeSUT()
        let payload = try Self.payload(key: await keys.publicKey())
        async let shown = logic.didReceive(payload)
        await images.waitUntilStarted()
        images.finish(Data("<html>sign in</html>".utf8))
        #expect(await shown == EnrichedNotification(title: "Almost there", body: "Ana is almost there"))
    }

    @Test func aSlowPhotoMissesTheDeadlineAndTheTextStillGoes() async throws {
        let (logic, keys, images, clock) = try await Self.makeSUT()
        let payload = try Self.payload(key: await keys.publicKey())
        async let shown = logic.didReceive(payload)
        await images.waitUntilStarted()
        await clock.sleepers(atLeast: 1)
        await clock.advance(by: .seconds(20))
        #expect(await shown == EnrichedNotification(title: "Almost there", body: "Ana is almost there"))
    }

    @Test func whenTimeRunsOutItDeliversWhatItHasOnce() async throws {
        let (logic, keys, images, _) = try await Self.makeSUT()
        let payload = try Self.payload(key: await keys.publicKey())
        async let shown = logic.didReceive(payload)
        await images.waitUntilStarted()
        #expect(
            await logic.timeWillExpire() == EnrichedNotification(title: "Almost there", body: "Ana is almost there"))
        images.finish(Data([1]))
        #expect(await shown == nil, "already handed over")
    }

    @Test func aSecretThatDoesNotOpenLeavesTheGenericText() async throws {
        let (logic, _, _, _) = try await Self.makeSUT()
        let cipher = PlatformHPKECipher()
        let otherKey = try cipher.publicKey(for: cipher.makePrivateKey())
        let shown = await logic.didReceive(try Self.payload(key: otherKey, image: false))
        #expect(shown == EnrichedNotification(title: "Almost there", body: "Your rider is almost there"))
        #expect(await logic.fellBack)
    }

    @Test func withoutADeviceKeyTheGenericTextShows() async throws {
        let (logic, keys, _, _) = try await Self.makeSUT()
        let payload = try Self.payload(key: await keys.publicKey(), image: false)
        await keys.deleteKeyPair()
        #expect(await logic.didReceive(payload)?.body == "Your rider is almost there")
    }

    @Test func theSecretIsOpenedWithTheCipherItIsGivenBoundToTheNotification() async throws {
        let keys = InMemoryKeyStore()
        _ = try await keys.makeKeyPair()
        let cipher = NamingCipher()
        let logic = NotificationServiceLogic(
            keys: keys, images: GatedImages(), attachments: FileAttachments(), clock: ManualClock(), cipher: cipher)
        var payload = try Self.payload(key: nil, id: "O1.5", image: false)
        payload.secret = Data(repeating: 7, count: 48).base64EncodedString()
        #expect(await logic.didReceive(payload)?.body == "Bo is almost there")
        #expect(cipher.associatedData.withLock { $0 } == [Array("O1.5".utf8)])
    }
}
