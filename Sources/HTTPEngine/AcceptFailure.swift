import Foundation

/// What the accept loop does after `accept4` fails, by its errno (accept(2)).
enum AcceptFailure: Equatable {
    /// Try again at once: a signal, or a connection the peer gave up (or the network refused) before it was taken.
    case retry
    /// Nothing left to take now.
    case drained
    /// The process or the system has no descriptor (or memory) for another socket: stop polling the listener until
    /// one is freed. The listener is level-triggered, so polling on would wake at once, for ever, while the newcomer
    /// waits in the backlog.
    case exhausted

    init(errno code: Int32) {
        switch code {
        case EINTR, ECONNABORTED, EPROTO, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP,
            ENETUNREACH:
            self = .retry
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            self = .exhausted
        default:
            self = .drained
        }
    }
}
