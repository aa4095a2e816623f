// The HTTP engine's benchmark harness (bench/http-engine.sh): the same bytes nginx serves, through
// an async handler (the normal path) and a synchronous one, plus idle SSE streams of both kinds: members of a
// live channel (`/live/{key}`, how every trip and order watcher is served) and a task producing events (`/events`).
import Foundation
import HTTPEngine

var port: UInt16 = 18091
var bodyPath = ""
var threads: Int?
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("engine-bench: \(message)\n".utf8))
    exit(64)
}
var args = CommandLine.arguments.dropFirst().makeIterator()
while let arg = args.next() {
    switch arg {
    case "--port":
        guard let value = args.next().flatMap(UInt16.init) else { fail("--port needs a port number") }
        port = value
    case "--body": bodyPath = args.next() ?? ""
    case "--threads":
        guard let value = args.next().flatMap(Int.init), (1...1024).contains(value) else {
            fail("--threads needs a count from 1 to 1024")
        }
        threads = value
    default:
        fail("unknown option \(arg) (usage: engine-bench --port N --body FILE [--threads N])")
    }
}
guard let body = FileManager.default.contents(atPath: bodyPath).map(Array.init) else {
    FileHandle.standardError.write(Data("engine-bench: cannot read \(bodyPath)\n".utf8))
    exit(66)
}

var router = Router()
router.get("/bench.json") { _ in .jsonBytes(body) }
router.add("GET", "/bench-sync.json", .sync { _ in .jsonBytes(body) })
// A handler that waits once before answering (as one that awaits storage does): it pays the hop to Swift's executor
// and back, where `/bench.json` answers in its first run on the engine's thread.
router.get("/bench-wait.json") { _ in
    await Task.yield()
    return .jsonBytes(body)
}
router.get("/events") { _ in
    .eventStream { writer in
        try writer.send(event: "hello", id: "1", data: "{}")
        let (never, _) = AsyncStream<Void>.makeStream()
        for await _ in never {}
    }
}
// One group per key, as one trip is followed by its own watchers; a joiner's first event is the group's state.
let live = LiveChannels<String, Int>(
    initial: { _ in 1 },
    opening: { version in
        LiveUpdate(events: [LiveEvent(name: "hello", id: String(version), data: Array("{}".utf8))])
    })
router.get("/live/{key}") { request in live.stream(request, key: try request.parameter("key")) }
var config = HTTPServerConfiguration()
config.port = port
config.connectionLimit = 60_000
if let threads { config.threads = threads }
let server = HTTPServer(router: router, configuration: config)
try server.start()
print("engine-bench listening on \(server.port)")
while true { sleep(3600) }
