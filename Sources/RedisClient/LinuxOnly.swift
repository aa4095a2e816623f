#if !os(Linux)
#error("RedisClient sends with MSG_NOSIGNAL: the EnRoute server builds on Linux only, the client kit everywhere")
#endif
