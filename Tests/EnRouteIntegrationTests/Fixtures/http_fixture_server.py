"""A loopback HTTP/1.1 server for the client kit's transport tests.

Binds 127.0.0.1 on an ephemeral port, prints "PORT <n>" and exits when stdin closes.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

events = {}
events_lock = threading.Lock()


def event(name):
    with events_lock:
        return events.setdefault(name, threading.Event())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Client-Port", str(self.client_address[1]))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        try:
            self.route(parts)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def route(self, parts):
        head = parts[0]
        if head == "json":
            self.reply(200, b'{"hello":"world"}', headers=[("X-Fixture", "yes")])
        elif head == "status":
            code = int(parts[1])
            headers = [("Retry-After", "7")] if code in (429, 503) else []
            self.reply(code, ("status %d" % code).encode(), content_type="text/plain", headers=headers)
        elif head == "slow":
            # /slow/<ms>/<id>: marks <id> started, then answers after <ms>.
            event("started-" + parts[2]).set()
            time.sleep(int(parts[1]) / 1000)
            self.reply(200, b"slow", content_type="text/plain")
        elif head == "wait":
            # /wait/<name>: blocks until the named event happens (or 10 s pass).
            happened = event(parts[1]).wait(10)
            self.reply(200, b"true" if happened else b"false", content_type="text/plain")
        elif head == "events":
            count = int(parts[1])
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.wfile.write(b": hello\n\n")
            for i in range(count):
                self.wfile.write(("id: %d\nevent: tick\ndata: {\"n\": %d}\n\n" % (i + 1, i + 1)).encode())
                self.wfile.flush()
        elif head == "hold":
            # /hold/<id>: one event, then keep-alive comments until the client goes away.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(b"data: first\n\n")
                self.wfile.flush()
                for _ in range(400):
                    time.sleep(0.025)
                    self.wfile.write(b":\n\n")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                event("gone-" + parts[1]).set()
        else:
            self.reply(404, b"nope", content_type="text/plain")

    def echo(self):
        payload = {
            "method": self.command,
            "path": self.path,
            "body": self.body().decode(),
            "contentType": self.headers.get("Content-Type"),
            "authorization": self.headers.get("Authorization"),
        }
        self.reply(201, json.dumps(payload, sort_keys=True).encode())

    do_POST = echo
    do_PUT = echo
    do_DELETE = echo


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main():
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
