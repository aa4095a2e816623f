import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// CPU time (user + system) for the benches' cost per operation: this process's, from getrusage, and other
/// processes', from /proc.
enum ProcessCPU {
    /// This process's CPU seconds so far, every thread's (getrusage(RUSAGE_SELF)).
    static func selfSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU seconds of `pids` so far: every thread's time on a CPU in nanoseconds (/proc/PID/task/*/schedstat; a
    /// short phase is then not rounded to the clock tick), else utime + stime + cutime + cstime in ticks from
    /// /proc/PID/stat; a pid that is gone counts nothing.
    static func seconds(of pids: [Int32]) -> Double {
        pids.reduce(0) { total, pid in total + (scheduledSeconds(pid) ?? tickSeconds(pid)) }
    }

    /// The sum of the first field of each thread's schedstat, or nil where there is none.
    private static func scheduledSeconds(_ pid: Int32) -> Double? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var nanoseconds = 0.0
        for task in tasks {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                let first = text.split(separator: " ").first, let value = Double(first)
            else { continue }
            nanoseconds += value
        }
        return tasks.isEmpty ? nil : nanoseconds / 1e9
    }

    /// utime + stime + cutime + cstime of /proc/PID/stat, in seconds; 0 once the process is gone.
    private static func tickSeconds(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // The fields after the command's name, from state (the third field): utime is the 14th field.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14 else { return 0 }
        return fields[11...14].compactMap { Double($0) }.reduce(0, +) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A comma-separated pid list (`--cpu-pids 12,13`); nil for an empty one.
    static func pids(_ list: String) -> [Int32]? {
        let pids = list.split(separator: ",").compactMap { Int32($0) }
        return pids.isEmpty ? nil : pids
    }
}
