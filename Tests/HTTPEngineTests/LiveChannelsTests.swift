import Foundation
import Synchronization
import Testing
import TestSupport
@testable import HTTPEngine

/// Live channels in memory: what a member sees, in what order, and when groups come and go.
@Suite struct LiveChannelsTests {
    /// The raw SSE text of a member joined in memory.
    static func member(_ channels: LiveChannels<String, Int>, _ key: String = "k") -> AsyncStream<[UInt8]> {
        guard case .eventStream(let stream) = channels.stream(HTTPRequest(method: "GET", path: "/live"), key: key).body
        else {
            Issue.record("not an event stream")
            return AsyncStream { $0.finish() }
        }
        return stream.bytes(retryMilliseconds: 1000)
    }

    @Test func aMemberGetsTheOpeningThenEveryPublishInOrderUntilTheEnd() async {
        let channels = LiveCounters.counters { _ in 41 }
        let stream = Self.member(channels)
        #expect(channels.memberCount("k") == 1)
        LiveCounters.bump(channels)
        LiveCounters.bump(channels)
        LiveCounters.bump(channels, ends: true)
        var text = ""
        for await chunk in stream { text += String(decoding: chunk, as: UTF8.self) }
        #expect(
            text == "retry: 1000\n\n"
                + "id: 41\nevent: snapshot\ndata: {\"n\":41}\n\n"
                + "id: 42\nevent: count\ndata: {\"n\":42}\n\n"
                + "id: 43\nevent: count\ndata: {\"n\":43}\n\n"
                + "id: 44\nevent: count\ndata: {\"n\":44}\n\n")
        #expect(channels.channelCount == 0)
    }

    @Test func publishingWithNobodyFollowingChangesNothingAndTheNextJoinerStartsFromInitial() async {
        let reads = Counter()
        let channels = LiveCounters.counters { _ in reads.next() * 10 }
        LiveCounters.bump(channels)
        #expect(channels.channelCount == 0)
        #expect(reads.value == 0)
        var iterator = Self.member(channels).makeAsyncIterator()
        _ = await iterator.next()  // retry
        let opening = await iterator.next().map { String(decoding: $0, as: UTF8.self) }
        #expect(opening == "id: 10\nevent: snapshot\ndata: {\"n\":10}\n\n")
    }

    @Test func theLastMemberLeavingForgetsTheGroup() async {
        let channels = LiveCounters.counters()
        var first: AsyncStream<[UInt8]>.AsyncIterator? = Self.member(channels).makeAsyncIterator()
        var second: AsyncStream<[UInt8]>.AsyncIterator? = Self.member(channels).makeAsyncIterator()
        _ = await first?.next()
        _ = await second?.next()
        #expect(channels.memberCount("k") == 2)
        first = nil
        #expect(channels.memberCount("k") == 1)
        #expect(channels.channelCount == 1)
        second = nil
        #expect(channels.channelCount == 0)
    }

    @Test func aKeyWithNothingToFollowEndsTheStreamAtOnce() async {
        let channels = LiveCounters.counters { _ in nil }
        var text = ""
        for await chunk in Self.member(channels) { text += String(decoding: chunk, as: UTF8.self) }
        #expect(text == "retry: 1000\n\n")
        #expect(channels.channelCount == 0)
    }

    @Test func anOpeningThatEndsSendsItsEventsAndLeavesNoGroup() async {
        let channels = LiveChannels<String, Int>(
            initial: { _ in 7 }, opening: { n in LiveUpdate(events: [LiveCounters.event("final", n)], ends: true) })
        var text = ""
        for await chunk in Self.member(channels) { text += String(decoding: chunk, as: UTF8.self) }
        #expect(LiveCounters.ids(text) == [7])
        #expect(channels.channelCount == 0)
    }

    @Test func membersJoiningWhilePublishesRunMissNothingAndSeeNothingTwice() async {
        // The source of truth (like a trip store) moves first; the group follows it, as the hub does.
        let source = Counter()
        let publishes = 300
        let channels = LiveChannels<String, Int>(
            initial: { _ in source.value },
            opening: { n in
                LiveUpdate(events: [LiveCounters.event("snapshot", n)], ends: n >= publishes)
            })
        let members = await withTaskGroup(of: [Int]?.self) { group -> [[Int]] in
            for _ in 0..<40 {
                group.addTask {
                    var text = ""
                    for await chunk in Self.member(channels) { text += String(decoding: chunk, as: UTF8.self) }
                    return LiveCounters.ids(text)
                }
            }
            group.addTask {
                for k in 1...publishes {
                    let n = source.next()
                    channels.publish("k") { state in
                        // A group made after the source moved already has this count in its opening.
                        guard n > state else { return LiveUpdate() }
                        state = n
                        return LiveUpdate(events: [LiveCounters.event("count", n)], ends: n >= publishes)
                    }
                    if k % 10 == 0 { await Task.yield() }
                }
                return nil
            }
            var all: [[Int]] = []
            for await ids in group { if let ids { all.append(ids) } }
            return all
        }
        #expect(members.count == 40)
        for ids in members {
            // From its opening snapshot on, each member sees every count exactly once, in order, to the end.
            #expect(!ids.isEmpty && ids == Array(ids[0]...publishes), "member starting at \(ids.first ?? -1)")
        }
    }

    /// Counters whose members may be turned away with a `revoked` event.
    static func revocable(initial: Int) -> LiveChannels<String, Int> {
        LiveChannels(
            initial: { _ in initial }, opening: { n in LiveUpdate(events: [LiveCounters.event("snapshot", n)]) },
            revocation: { n in LiveUpdate(events: [LiveCounters.event("revoked", n)]) })
    }

    /// A member follows while the state admits it: the update that turns it away reaches it as the revocation and its
    /// stream ends, before that update's events go out; a member still admitted goes on.
    @Test func aMemberTheStateNoLongerAdmitsGetsTheRevocationInsteadOfTheUpdate() async {
        let channels = Self.revocable(initial: 1)
        let request = HTTPRequest(method: "GET", path: "/live")
        guard case .eventStream(let below3) = channels.stream(request, key: "k", admits: { $0 < 3 }).body,
            case .eventStream(let anyone) = channels.stream(request, key: "k").body
        else {
            Issue.record("not event streams")
            return
        }
        let turnedAway = below3.bytes(retryMilliseconds: 1000), stays = anyone.bytes(retryMilliseconds: 1000)
        #expect(channels.memberCount("k") == 2)
        channels.publish("k") { n in
            n += 1; return LiveUpdate(events: [LiveCounters.event("count", n)], revalidates: true)
        }
        channels.publish("k") { n in
            n += 1; return LiveUpdate(events: [LiveCounters.event("count", n)], revalidates: true)
        }
        #expect(channels.memberCount("k") == 1)
        var text = ""
        for await chunk in turnedAway { text += String(decoding: chunk, as: UTF8.self) }
        #expect(
            text == "retry: 1000\n\n"
                + "id: 1\nevent: snapshot\ndata: {\"n\":1}\n\n"
                + "id: 2\nevent: count\ndata: {\"n\":2}\n\n"
                + "id: 3\nevent: revoked\ndata: {\"n\":3}\n\n")
        channels.publish("k") { n in
            n += 1; return LiveUpdate(events: [LiveCounters.event("count", n)], ends: true)
        }
        var other = ""
        for await chunk in stays { other += String(decoding: chunk, as: UTF8.self) }
        #expect(LiveCounters.ids(other) == [1, 2, 3, 4])
    }

    /// Admission is asked only on updates that say they may change it, and as a member joins: one the group's state
    /// does not admit gets the revocation at once and never becomes a member.
    @Test func admissionIsAskedOnJoiningAndOnUpdatesThatRevalidateOnly() async {
        let asked = Counter()
        let channels = Self.revocable(initial: 5)
        let request = HTTPRequest(method: "GET", path: "/live")
        let countingOdd: @Sendable (Int) -> Bool = {
            _ = asked.next(); return $0 % 2 == 1
        }
        guard case .eventStream(let odd) = channels.stream(request, key: "k", admits: countingOdd).body,
            case .eventStream(let late) = channels.stream(request, key: "k", admits: { $0 % 2 == 1 }).body
        else {
            Issue.record("not event streams")
            return
        }
        var member = odd.bytes(retryMilliseconds: 1000).makeAsyncIterator()
        _ = await member.next()
        #expect(asked.value == 1, "asked as it joined")
        channels.publish("k") { n in
            n += 1; return LiveUpdate(events: [LiveCounters.event("count", n)])
        }
        #expect(asked.value == 1, "an update that does not revalidate does not ask")
        #expect(channels.memberCount("k") == 1)
        var text = ""
        for await chunk in late.bytes(retryMilliseconds: 1000) { text += String(decoding: chunk, as: UTF8.self) }
        #expect(text == "retry: 1000\n\nid: 6\nevent: revoked\ndata: {\"n\":6}\n\n")
        #expect(channels.memberCount("k") == 1)
    }

    @Test func framesAreBuiltOncePerTransport() {
        let frames = LiveFrames([LiveEvent(name: "tick", id: "3", data: Array(#"{"a":1}"#.utf8))])
        let sse = "id: 3\nevent: tick\ndata: {\"a\":1}\n\n"
        #expect(String(decoding: frames.sse, as: UTF8.self) == sse)
        #expect(
            String(decoding: frames.sseChunk, as: UTF8.self) == String(sse.utf8.count, radix: 16, uppercase: true)
                + "\r\n" + sse + "\r\n")
        let json = #"{"type":"tick","id":"3","data":{"a":1}}"#
        #expect(frames.webSocket == [0x81, UInt8(json.utf8.count)] + Array(json.utf8))
    }

    @Test func multiLineDataBecomesOneDataLinePerLine() {
        let frames = LiveFrames([LiveEvent(name: "note", id: "1", data: Array("a\nb".utf8))])
        #expect(String(decoding: frames.sse, as: UTF8.self) == "id: 1\nevent: note\ndata: a\ndata: b\n\n")
    }
}

/// A member whose leave notice fires as it is turned away or ended: what a stream does when its notice was set while
/// another thread was turning it away.
final class LeavingMember: LiveMember, @unchecked Sendable {
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    let told = Mutex<[String]>([])
    func deliver(_ frames: LiveFrames) -> Bool {
        told.withLock { $0.append("deliver") }
        return true
    }
    func end() { leave("end") }
    func revoke(_ frames: LiveFrames) { leave("revoke") }
    func onLeave(_ handler: @escaping @Sendable () -> Void) { self.handler.withLock { $0 = handler } }
    private func leave(_ what: String) {
        told.withLock { $0.append(what) }
        handler.withLock { $0 }?()
    }
}

@Suite struct LiveChannelsLeavingTests {
    @Test func aMemberLeavingAsItIsTurnedAwayFindsTheChannelUnlocked() {
        let channels = LiveChannelsTests.revocable(initial: 1)
        let member = LeavingMember()
        channels.join("k", member, admits: { $0 < 2 })
        #expect(channels.memberCount("k") == 1)
        channels.publish("k") { n in
            n += 1; return LiveUpdate(events: [LiveCounters.event("count", n)], revalidates: true)
        }
        #expect(member.told.withLock { $0 } == ["deliver", "revoke"])
        #expect(channels.memberCount("k") == 0 && channels.channelCount == 0)
    }

    @Test func aMemberLeavingAsTheGroupEndsFindsTheChannelUnlocked() {
        let channels = LiveChannelsTests.revocable(initial: 1)
        let member = LeavingMember()
        channels.join("k", member)
        channels.publish("k") { n in
            n += 1; return LiveUpdate(events: [LiveCounters.event("count", n)], ends: true)
        }
        #expect(member.told.withLock { $0 } == ["deliver", "deliver", "end"])
        #expect(channels.channelCount == 0)
    }
}

/// A thread-safe counter for closures the channel calls.
final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func next() -> Int {
        count.withLock {
            $0 += 1; return $0
        }
    }
}
