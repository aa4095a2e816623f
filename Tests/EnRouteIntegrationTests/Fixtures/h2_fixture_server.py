"""An HTTP/2-only fixture server for HTTP2Session's tests: TLS with ALPN h2 and a self-signed certificate made
at start, on an ephemeral port of 127.0.0.1.

Usage: h2_fixture_server.py --dir DIR. Prints "PORT <n> CERT <path>" and exits when stdin closes.
Every answer carries x-connection (the connection's number, counted from 1) and x-stream. Paths:
  /echo               200 application/json {"connection", "method", "path", "headers", "body"}
  /status/<code>      <code> application/problem+json {"title": "status <code>"} with x-reason: fixture
  /together/<n>       answers 200 once <n> streams for this path are open at once on the connection
                      (only a multiplexed client gets an answer)
  /hold               never answers
  /held               200 text/plain: how many /hold streams are open on this connection (reset ones are not)
"""
import argparse
import json
import os
import socket
import ssl
import subprocess
import sys
import threading

import h2.config
import h2.connection
import h2.events

lock = threading.Lock()
connection_count = [0]


def respond(conn, stream_id, number, status, body, content_type, extra=()):
    headers = [(":status", str(status)), ("x-connection", str(number)), ("x-stream", str(stream_id)),
               ("content-type", content_type), ("content-length", str(len(body)))] + list(extra)
    conn.send_headers(stream_id, headers)
    conn.send_data(stream_id, body, end_stream=True)


def serve_connection(sock, number):
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    streams, waiting, held = {}, {}, set()
    try:
        while True:
            data = sock.recv(65535)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = {"headers": event.headers, "body": b""}
                elif isinstance(event, h2.events.DataReceived):
                    streams[event.stream_id]["body"] += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamReset):
                    streams.pop(event.stream_id, None)
                    held.discard(event.stream_id)
                    for ids in waiting.values():
                        if event.stream_id in ids:
                            ids.remove(event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    request = streams.pop(event.stream_id, None)
                    if request is not None:
                        answer(conn, event.stream_id, request, number, waiting, held)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        sock.close()


def answer(conn, stream_id, request, number, waiting, held):
    headers = dict(request["headers"])
    path = headers.get(":path", "")
    if path == "/echo":
        body = json.dumps({"connection": number, "method": headers.get(":method"), "path": path,
                           "headers": [[k, v] for k, v in request["headers"] if not k.startswith(":")],
                           "body": request["body"].decode("utf-8", "replace")}).encode()
        respond(conn, stream_id, number, 200, body, "application/json")
    elif path.startswith("/status/"):
        code = int(path[len("/status/"):])
        body = json.dumps({"title": f"status {code}"}).encode()
        respond(conn, stream_id, number, code, body, "application/problem+json", [("x-reason", "fixture")])
    elif path.startswith("/together/"):
        ids = waiting.setdefault(path, [])
        ids.append(stream_id)
        if len(ids) >= int(path[len("/together/"):]):
            for waiting_id in ids:
                respond(conn, waiting_id, number, 200, b"together", "text/plain")
            ids.clear()
    elif path == "/hold":
        held.add(stream_id)
    elif path == "/held":
        respond(conn, stream_id, number, 200, str(len(held)).encode(), "text/plain")
    else:
        respond(conn, stream_id, number, 404, b"{}", "application/problem+json")


def accept_loop(listener, wrap):
    while True:
        try:
            raw, _ = listener.accept()
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock = wrap(raw)
        except (ssl.SSLError, OSError):
            continue
        with lock:
            connection_count[0] += 1
            number = connection_count[0]
        threading.Thread(target=serve_connection, args=(sock, number), daemon=True).start()


def listen():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    return listener


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    cert, key = os.path.join(args.dir, "h2-cert.pem"), os.path.join(args.dir, "h2-key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-days", "2",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    listener = listen()
    threading.Thread(target=accept_loop, args=(listener, lambda raw: context.wrap_socket(raw, server_side=True)), daemon=True).start()
    print(f"PORT {listener.getsockname()[1]} CERT {cert}", flush=True)
    for _ in sys.stdin:
        pass


if __name__ == "__main__":
    main()
