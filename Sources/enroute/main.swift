import Foundation
import HTTPEngine

var router = Router()
router.get("/json") { _ in .jsonBytes(Array(#"{"ok":true}"#.utf8)) }
router.post("/upload", bodyLimit: 1024) { req in .text("got \(req.body.count)") }
var config = HTTPServerConfiguration()
config.port = 18080
let server = HTTPServer(router: router, configuration: config)
try server.start()
print("listening on \(server.port)")
while true { sleep(100) }
