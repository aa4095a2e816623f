// The HTTP engine's benchmark harness (bench/http-engine.sh): the same bytes nginx serves, through
// an async handler (the normal path) and a synchronous one, plus idle SSE streams.
import Foundation
import HTTPEngine

var port: UInt16 = 18091
var bodyPath = ""
var args = CommandLine.arguments.dropFirst().makeIterator()
while let arg = args.next() {
    switch arg {
    case "--port": port = UInt16(args.next() ?? "") ?? port
    case "--body": bodyPath = args.next() ?? ""
    default:
        FileHandle.standardError.write(Data("usage: engine-bench --port N --body FILE\n".utf8))
        exit(64)
    }
}
guard let body = FileManager.default.contents(atPath: bodyPath).map(Array.init) else {
    FileHandle.standardError.write(Data("engine-bench: cannot read \(bodyPath)\n".utf8))
    exit(66)
}

var router = Router()
router.get("/bench.json") { _ in .jsonBytes(body) }
router.add("GET", "/bench-sync.json", .sync { _ in .jsonBytes(body) })
router.get("/events") { _ in
    .eventStream { writer in
        try writer.send(event: "hello", id: "1", data: "{}")
        let (never, _) = AsyncStream<Void>.makeStream()
        for await _ in never {}
    }
}
var config = HTTPServerConfiguration()
config.port = port
config.connectionLimit = 60_000
let server = HTTPServer(router: router, configuration: config)
try server.start()
print("engine-bench listening on \(server.port)")
while true { sleep(3600) }
