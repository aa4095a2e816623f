import Dispatch
import Foundation
import Synchronization

/// One event for the live streams of a channel: SSE `event:`/`id:`/`data:`, or a WebSocket JSON frame.
public struct LiveEvent: Sendable, Equatable {
    public var name: String
    public var id: String
    /// The event's body, JSON on one line.
    public var data: [UInt8]

    public init(name: String, id: String, data: [UInt8]) { self.name = name; self.id = id; self.data = data }
}

/// What a channel's members get from one change: events in order, and whether their streams end after them.
public struct LiveUpdate: Sendable {
    public var events: [LiveEvent]
    /// True when the source is over (a finished trip): every member's stream ends after `events`.
    public var ends: Bool
    /// True when the change may change who may follow the group (a new version of a trip): each member's `admits` is
    /// asked again before `events` go out, and a member it turns away gets the revocation and ends instead.
    public var revalidates: Bool

    public init(events: [LiveEvent] = [], ends: Bool = false, revalidates: Bool = false) {
        self.events = events; self.ends = ends; self.revalidates = revalidates
    }
}

/// Live streams grouped by key (a trip id). Each group shares one state, and `publish` frames an
/// update's events once per transport and writes the bytes to every member on the caller's thread,
/// split over the cores for large groups: no task is woken and nothing is encoded per member.
///
/// A member joins with the events `opening` derives from the group's state, under the group's lock,
/// so it neither misses a publish nor sees one twice. A group exists while it has members: the first
/// joiner creates it from `initial`, the last one to leave (or an update that ends) removes it.
///
/// A member may follow only while the group's state `admits` it: asked as it joins and on every update that
/// `revalidates`, under the same lock and before that update's events go out, so a watcher who stops being a party
/// never sees what comes after. It is turned away with `revocation`'s events (SSE) or a 1008 close (WebSocket).
public final class LiveChannels<Key: Hashable & Sendable, State: Sendable>: Sendable {
    private let channels = Mutex<[Key: LiveChannel<State>]>([:])
    private let initial: @Sendable (Key) -> State?
    private let opening: @Sendable (State) -> LiveUpdate
    private let revocation: @Sendable (State) -> LiveUpdate

    /// `initial` reads the current state of a key when its group is created (nil: there is nothing to
    /// follow, and the stream ends at once); `opening` gives a joining member's first events, and `revocation` the last
    /// events of a member its `admits` turns away.
    public init(
        initial: @escaping @Sendable (Key) -> State?, opening: @escaping @Sendable (State) -> LiveUpdate,
        revocation: @escaping @Sendable (State) -> LiveUpdate = { _ in LiveUpdate() }
    ) {
        self.initial = initial
        self.opening = opening
        self.revocation = revocation
    }

    /// A live answer for `request` following `key`: SSE, or WebSocket text frames
    /// `{"type","id","data"}` when the request asks to upgrade. The member follows while `admits` holds for the
    /// group's state (always, when nil).
    public func stream(_ request: HTTPRequest, key: Key, admits: (@Sendable (State) -> Bool)? = nil) -> HTTPResponse {
        let join: @Sendable (any LiveMember) -> Void = { [self] member in self.join(key, member, admits: admits) }
        if request.isWebSocketUpgrade {
            return HTTPResponse(status: 101, body: .webSocket(WebSocketSession(join: join)))
        }
        return HTTPResponse(status: 200, headers: EventStream.headers, body: .eventStream(EventStream(join: join)))
    }

    /// Runs `update` on the group's state and sends what it returns to every member; nothing happens
    /// when nobody follows `key` (the next joiner starts from `initial`).
    public func publish(_ key: Key, _ update: (inout State) -> LiveUpdate) {
        guard let channel = channels.withLock({ $0[key] }) else { return }
        if channel.publish(update, revocation: revocation) { retire(key, channel) }
    }

    /// Members following `key` now.
    public func memberCount(_ key: Key) -> Int { channels.withLock { $0[key] }?.memberCount ?? 0 }

    /// Groups open now.
    public var channelCount: Int { channels.withLock { $0.count } }

    func join(_ key: Key, _ member: any LiveMember, admits: (@Sendable (State) -> Bool)? = nil) {
        let entry = LiveChannel<State>.Member(stream: member, admits: admits)
        let joined = channels.withLock { all -> LiveChannel<State>? in
            if let channel = all[key] {
                switch channel.add(entry, opening: opening, revocation: revocation) {
                case .member: return channel
                case .notMember: return nil
                case .channelEnded: break
                }
            }
            // No group yet (or one that has just ended): start one from the current state.
            guard let state = initial(key) else { member.end(); return nil }
            let channel = LiveChannel(state: state)
            guard channel.add(entry, opening: opening, revocation: revocation) == .member else { return nil }
            all[key] = channel
            return channel
        }
        guard let channel = joined else { return }
        member.onLeave { [weak self, weak channel] in
            guard let self, let channel, channel.remove(member) else { return }
            self.retire(key, channel)
        }
    }

    /// Drops `channel` from the registry if it is still the group of `key` and has no members.
    private func retire(_ key: Key, _ channel: LiveChannel<State>) {
        channels.withLock { all in
            if all[key] === channel, channel.retireIfEmpty() { all[key] = nil }
        }
    }
}

/// Threads a large group's writes are split over.
private let liveWriters = min(ProcessInfo.processInfo.activeProcessorCount, 8)

/// One group's state and members; every delivery happens under its lock, so members see updates in order.
final class LiveChannel<State: Sendable>: Sendable {
    /// How a join went: in the group, not in it (ended by its opening, or already gone), or the group had ended.
    enum Joining { case member, notMember, channelEnded }

    /// A member's stream and what it may follow (nil: anything the group has).
    struct Member: Sendable {
        let stream: any LiveMember
        let admits: (@Sendable (State) -> Bool)?

        func isAdmitted(by state: State) -> Bool { admits?(state) ?? true }
    }

    private struct Inner {
        var state: State
        var members: [ObjectIdentifier: Member] = [:]
        var ended = false
    }
    private let inner: Mutex<Inner>

    /// Below this many members a publish writes on the caller's thread alone.
    static var parallelThreshold: Int { 512 }

    init(state: State) { inner = Mutex(Inner(state: state)) }

    var memberCount: Int { inner.withLock { $0.members.count } }

    /// Sends the opening events and adds the member, unless the group or the opening says it ends, or the state does
    /// not admit it (then it gets the revocation).
    func add(_ entry: Member, opening: (State) -> LiveUpdate, revocation: (State) -> LiveUpdate) -> Joining {
        inner.withLock { s in
            guard !s.ended else { return .channelEnded }
            let member = entry.stream
            guard entry.isAdmitted(by: s.state) else {
                member.revoke(LiveFrames(revocation(s.state).events))
                return .notMember
            }
            let update = opening(s.state)
            if !update.events.isEmpty, !member.deliver(LiveFrames(update.events)) { return .notMember }
            if update.ends { member.end(); return .notMember }
            s.members[ObjectIdentifier(member)] = entry
            return .member
        }
    }

    /// True when the member was there and the group is now empty.
    func remove(_ member: any LiveMember) -> Bool {
        inner.withLock { s in s.members.removeValue(forKey: ObjectIdentifier(member)) != nil && s.members.isEmpty }
    }

    /// Marks an empty group ended so that no one joins it any more; false if it has members.
    func retireIfEmpty() -> Bool {
        inner.withLock { s in
            guard s.members.isEmpty else { return false }
            s.ended = true
            return true
        }
    }

    /// Applies `update`, turns away the members the new state no longer admits (when it `revalidates`) and delivers
    /// its events to the rest; true when the group is left empty or ended.
    ///
    /// The members turned away or ended are dropped under the lock and told after it: a stream whose leave notice was
    /// set while it was being turned away calls back into `remove`, which must find the lock free.
    func publish(_ update: (inout State) -> LiveUpdate, revocation: (State) -> LiveUpdate) -> Bool {
        var revoked: (streams: [any LiveMember], frames: LiveFrames)?
        var ending: [any LiveMember] = []
        let emptied = inner.withLock { s -> Bool in
            guard !s.ended else { return false }
            let result = update(&s.state)
            if result.revalidates {
                let state = s.state
                let turnedAway = s.members.filter { !$0.value.isAdmitted(by: state) }
                if !turnedAway.isEmpty {
                    for id in turnedAway.keys { s.members[id] = nil }
                    revoked = (turnedAway.values.map(\.stream), LiveFrames(revocation(state).events))
                }
            }
            if !result.events.isEmpty, !s.members.isEmpty {
                let frames = LiveFrames(result.events)
                for gone in Self.deliver(frames, to: s.members.values.map(\.stream)) { s.members[gone] = nil }
            }
            if result.ends {
                s.ended = true
                ending = s.members.values.map(\.stream)
                s.members.removeAll()
                return true
            }
            return s.members.isEmpty
        }
        if let revoked { for stream in revoked.streams { stream.revoke(revoked.frames) } }
        for stream in ending { stream.end() }
        return emptied
    }

    /// Writes `frames` to every member, on as many threads as there are cores when the group is large;
    /// returns the members that are gone.
    private static func deliver(_ frames: LiveFrames, to members: [any LiveMember]) -> [ObjectIdentifier] {
        let parts = members.count >= parallelThreshold ? liveWriters : 1
        let gone = Mutex<[ObjectIdentifier]>([])
        let write = { @Sendable (part: Int) in
            var failed: [ObjectIdentifier] = []
            var i = part
            while i < members.count {
                if !members[i].deliver(frames) { failed.append(ObjectIdentifier(members[i])) }
                i += parts
            }
            if !failed.isEmpty { gone.withLock { $0 += failed } }
        }
        if parts > 1 { DispatchQueue.concurrentPerform(iterations: parts, execute: write) } else { write(0) }
        return gone.withLock { $0 }
    }
}

/// A live stream a channel writes to: an SSE connection, an in-memory SSE stream or a WebSocket.
protocol LiveMember: AnyObject, Sendable {
    /// Writes the frames of one update; false when the member is gone or too far behind.
    func deliver(_ frames: LiveFrames) -> Bool
    /// Ends the stream after what was delivered.
    func end()
    /// Ends the stream because its watcher may no longer follow it: an SSE stream gets `frames` first, a WebSocket
    /// closes with 1008. Called once the channel has dropped it, like `end`.
    func revoke(_ frames: LiveFrames)
    /// `handler` runs once when the stream goes away by itself (the client left), at once if it already
    /// has; never from inside `deliver`, which runs under the channel's lock (the channel drops such a member
    /// itself). A handler set while the channel turns the member away may run from `revoke` or `end`: the channel
    /// calls those outside its lock.
    func onLeave(_ handler: @escaping @Sendable () -> Void)
}

/// A member's leave handler: set once by the channel, run once when the member goes away by itself
/// (at once if it already has), and dropped when the channel itself ends or drops the member.
final class LeaveNotice: Sendable {
    private let state = Mutex<(gone: Bool, handler: (@Sendable () -> Void)?)>((false, nil))

    func set(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.gone { return true }
            s.handler = handler
            return false
        }
        if now { handler() }
    }

    /// The member went away by itself: tell the channel (call outside the member's own lock).
    func fire() {
        let handler = state.withLock { s -> (@Sendable () -> Void)? in
            s.gone = true
            defer { s.handler = nil }
            return s.handler
        }
        handler?()
    }

    /// The channel ended or dropped the member itself, under its lock: no call back into it.
    func cancel() { state.withLock { $0.handler = nil } }
}

/// An update's events framed once for each transport a member may use.
struct LiveFrames: Sendable {
    /// `text/event-stream` bytes.
    let sse: [UInt8]
    /// The same bytes as one HTTP/1.1 chunk, for a connection written to directly.
    let sseChunk: [UInt8]
    /// One WebSocket text frame per event.
    let webSocket: [UInt8]

    init(_ events: [LiveEvent]) {
        sse = Self.sse(events)
        sseChunk = Self.chunk(sse)
        webSocket = Self.webSocket(events)
    }

    /// The events as `text/event-stream` bytes.
    static func sse(_ events: [LiveEvent]) -> [UInt8] {
        events.reduce(into: []) { $0 += EventStreamWriter.encode(event: $1.name, id: $1.id, data: $1.data) }
    }

    /// One WebSocket text frame per event, carrying `{"type","id","data"}`.
    static func webSocket(_ events: [LiveEvent]) -> [UInt8] {
        events.reduce(into: []) { frames, event in
            var json = Array(#"{"type":""#.utf8)
            json += Array(event.name.utf8)
            json += Array(#"","id":""#.utf8)
            json += Array(event.id.utf8)
            json += Array(#"","data":"#.utf8)
            json += event.data
            json.append(UInt8(ascii: "}"))
            frames += WebSocketCodec.frame(opcode: 0x1, payload: json)
        }
    }

    /// `bytes` as one chunk of a chunked HTTP/1.1 body.
    static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        var out = Array(String(bytes.count, radix: 16, uppercase: true).utf8)
        out.reserveCapacity(out.count + bytes.count + 4)
        out += [13, 10]
        out += bytes
        out += [13, 10]
        return out
    }
}
