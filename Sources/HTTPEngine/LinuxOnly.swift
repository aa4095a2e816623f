#if !os(Linux)
#error("HTTPEngine serves on Linux's epoll: the EnRoute server builds on Linux only, the client kit everywhere")
#endif
