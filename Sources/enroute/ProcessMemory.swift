import Foundation

/// How `enroute serve` asks glibc's allocator to keep its resident memory near its heap.
///
/// glibc gives each allocating thread its own arena, up to 8 per core, and keeps what is freed for
/// reuse: a long-running server's resident memory then creeps although its heap stays flat, and a burst
/// (50,000 searching rides) holds its peak after it is over. bench/soak.sh measures both.
/// mallopt(3) and malloc_trim(3) live in <malloc.h>, which Glibc's Swift module does not export, so
/// they are looked up by name; elsewhere these do nothing.
enum ProcessMemory {
    /// One arena per core (at least two) unless MALLOC_ARENA_MAX says otherwise.
    static func limitArenas() {
        #if canImport(Glibc)
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil, let symbol = lookup("mallopt") else {
            return
        }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let arenaMax: Int32 = -8  // M_ARENA_MAX in <malloc.h>
        _ = unsafeBitCast(symbol, to: Mallopt.self)(
            arenaMax, Int32(max(2, ProcessInfo.processInfo.activeProcessorCount)))
        #endif
    }

    /// Returns whole free pages of every arena to the system.
    static func trim() {
        #if canImport(Glibc)
        guard let symbol = lookup("malloc_trim") else { return }
        typealias MallocTrim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    #if canImport(Glibc)
    private static func lookup(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)  // RTLD_DEFAULT
    }
    #endif
}
