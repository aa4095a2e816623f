import Synchronization

/// Every open connection, for the deadline timer, the cap's eviction and the counts; changed on open and close only.
struct ConnectionRegistry {
    private(set) var connections: [Connection] = []
    /// Each connection's index in `connections`, so that one leaves without a search.
    private var indices: [ObjectIdentifier: Int] = [:]
    /// Connections evicted but not closed yet: no longer counted against the cap.
    private(set) var evicted = 0

    /// Open connections counted against the cap.
    var counted: Int { connections.count - evicted }

    mutating func add(_ connection: Connection) {
        indices[ObjectIdentifier(connection)] = connections.count
        connections.append(connection)
    }

    mutating func evict(_ connection: Connection) {
        connection.evict()
        evicted += 1
    }

    /// `connection` is closed; `wasEvicted` when it was counted out already.
    mutating func remove(_ connection: Connection, wasEvicted: Bool) {
        guard let index = indices.removeValue(forKey: ObjectIdentifier(connection)) else { return }
        let last = connections.removeLast()
        if index < connections.count {
            connections[index] = last
            indices[ObjectIdentifier(last)] = index
        }
        if wasEvicted { evicted -= 1 }
    }
}

extension ServerCore {
    var openConnectionCount: Int { registry.withLock { $0.counted } }

    func connectionCount(in phase: ConnectionDeadlines.Phase) -> Int {
        registry.withLock { $0.connections }.count { $0.phase == phase }
    }

    func backlogs() -> [(bytes: Int, waiting: Bool)] { registry.withLock { $0.connections }.map(\.backlog) }

    /// A socket accepted on `acceptor`: it joins the loops in turn, so connections spread evenly over them.
    func accepted(_ fd: Int32, on acceptor: EventLoop) {
        let loop = loops[
            Int(UInt(bitPattern: nextLoop.wrappingAdd(1, ordering: .relaxed).oldValue) % UInt(loops.count))]
        if loop === acceptor {
            adopt(fd, on: loop)
        } else {
            loop.post { [self] in adopt(fd, on: loop) }
        }
    }

    /// Makes the connection for `fd` on its loop and counts it against the cap.
    private func adopt(_ fd: Int32, on loop: EventLoop) {
        let limit = budget.connectionCap, headroom = budget.refusalHeadroom
        loop.adopt(fd) { token in
            let serial = serials.wrappingAdd(1, ordering: .relaxed).newValue
            let connection = Connection(fd: fd, token: token, loop: loop, server: self, serial: serial, now: elapsed())
            let (accepted, victim) = registry.withLock { r -> (Bool, Connection?) in
                // Headroom above the cap, so that excess clients can be told 503 rather than left hanging.
                guard r.connections.count < limit + headroom else { return (false, nil) }
                r.add(connection)
                guard r.counted > limit else { return (true, nil) }
                guard let victim = Self.givesWay(among: r.connections, to: connection) else {
                    connection.refuse()
                    return (true, nil)
                }
                r.evict(victim)
                return (true, victim)
            }
            guard accepted else { return nil }
            if let victim {
                countCut(reason: "evicted")  // before the cut, as for deadlines
                victim.cut()
            }
            return connection
        }
    }

    /// The connection that gives way to `newcomer` over the cap, if any may. Only connections still waiting for (or
    /// trickling) a request head give way: a handler at work or a stream is never cut for a newcomer. The oldest of
    /// them is the likeliest slow client.
    private static func givesWay(among connections: [Connection], to newcomer: Connection) -> Connection? {
        var victim: (connection: Connection, deadlines: ConnectionDeadlines)?
        for other in connections where other !== newcomer {
            guard let candidate = other.givingWay else { continue }
            if let best = victim, !ConnectionDeadlines.givesWayBefore(candidate, best.deadlines) { continue }
            victim = (other, candidate)
        }
        return victim?.connection
    }

    func connectionClosed(_ connection: Connection, wasEvicted: Bool) {
        registry.withLock { $0.remove(connection, wasEvicted: wasEvicted) }
    }
}
