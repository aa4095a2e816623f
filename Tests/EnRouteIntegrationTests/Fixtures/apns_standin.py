"""A local APNs stand-in for tests: HTTP/2 over TLS with a self-signed certificate made at start.

Usage: apns_standin.py --dir DIR --p8 KEY.p8 --key-id KID --team TEAM --topic BUNDLE

Binds 127.0.0.1 on an ephemeral port and prints "PORT <n> CERT <path>". It verifies each request as
APNs would (ES256 provider JWT, headers, payload) and answers 200, a validation error, or the next
scripted answer for the device token. Commands arrive as JSON lines on stdin, one JSON line answers each:
  {"cmd": "script", "token": "<hex>|*", "responses": [{"status": 410, "reason": "Unregistered", "timestamp": 1}]}
  {"cmd": "received"}   -> {"received": [ {connection, path, token, headers, payload, jwt, answer}, ... ]}
  {"cmd": "reset"}
  {"cmd": "down", "mode": "refuse"|"503"}  -> an outage: drop every connection and refuse new ones, or answer
                                              every request 503 ServiceUnavailable (logged with "down": true)
  {"cmd": "up"}                            -> the outage ends
It exits when stdin closes.
"""
import argparse
import base64
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading

import h2.config
import h2.connection
import h2.events
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

lock = threading.Lock()
received = []
scripts = {}
connection_count = [0]
outage = [None]        # None, "refuse" or "503"
live = set()           # open TLS sockets, closed when an outage starts
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_jwt(header_value, public_key, key_id, team):
    if not header_value or not header_value.lower().startswith("bearer "):
        return None, "MissingProviderToken"
    token = header_value[7:].strip()
    try:
        h, c, s = token.split(".")
        header, claims, sig = json.loads(b64url(h)), json.loads(b64url(c)), b64url(s)
    except Exception:
        return None, "InvalidProviderToken"
    info = {"token": token, "header": header, "claims": claims}
    if header.get("alg") != "ES256" or header.get("kid") != key_id or claims.get("iss") != team or not isinstance(claims.get("iat"), int):
        return info, "InvalidProviderToken"
    if len(sig) != 64:
        return info, "InvalidProviderToken"
    der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
    try:
        public_key.verify(der, (h + "." + c).encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return info, "InvalidProviderToken"
    return info, None


def judge(args, public_key, headers, path, body):
    """The (status, reason, extra) APNs would answer before any script applies."""
    token = path[len("/3/device/"):] if path.startswith("/3/device/") else ""
    if headers.get(":method") != "POST":
        return 405, "MethodNotAllowed", None
    if not token:
        return 400, "MissingDeviceToken", None
    jwt, error = check_jwt(headers.get("authorization"), public_key, args.key_id, args.team)
    if error:
        return 403, error, jwt
    push_type = headers.get("apns-push-type")
    if push_type not in ("alert", "liveactivity"):
        return 400, "InvalidPushType", jwt
    topic = headers.get("apns-topic")
    if not topic:
        return 400, "MissingTopic", jwt
    wanted = args.topic + (".push-type.liveactivity" if push_type == "liveactivity" else "")
    if topic != wanted:
        return 400, "DeviceTokenNotForTopic" if topic.startswith(args.topic) else "BadTopic", jwt
    if headers.get("apns-priority") not in ("5", "10"):
        return 400, "BadPriority", jwt
    if "apns-id" in headers and not UUID.match(headers["apns-id"]):
        return 400, "BadMessageId", jwt
    if "apns-expiration" in headers and not headers["apns-expiration"].isdigit():
        return 400, "BadExpirationDate", jwt
    if len(headers.get("apns-collapse-id", "").encode()) > 64:
        return 400, "BadCollapseId", jwt
    if not body:
        return 400, "PayloadEmpty", jwt
    if len(body) > 4096:
        return 413, "PayloadTooLarge", jwt
    try:
        payload = json.loads(body)
        assert isinstance(payload.get("aps"), dict)
    except Exception:
        return 400, "PayloadEmpty", jwt
    return 200, None, jwt


def serve_connection(args, public_key, sock, number):
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    streams = {}
    try:
        while True:
            data = sock.recv(65535)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = {"headers": dict(event.headers), "body": b""}
                elif isinstance(event, h2.events.DataReceived):
                    streams[event.stream_id]["body"] += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    answer(args, public_key, conn, event.stream_id, streams.pop(event.stream_id), number)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        with lock:
            live.discard(sock)
        sock.close()


def answer(args, public_key, conn, stream_id, request, number):
    headers, body = request["headers"], request["body"]
    path = headers.get(":path", "")
    token = path[len("/3/device/"):]
    status, reason, jwt = judge(args, public_key, headers, path, body)
    extra = {}
    with lock:
        down = outage[0] is not None
        if down:
            status, reason = 503, "ServiceUnavailable"
        elif status == 200:
            queue = scripts.get(token) or scripts.get("*")
            if queue:
                scripted = queue.pop(0)
                status, reason = scripted["status"], scripted.get("reason")
                if "timestamp" in scripted:
                    extra["timestamp"] = scripted["timestamp"]
        try:
            payload = json.loads(body)
        except Exception:
            payload = None
        received.append({
            "connection": number, "path": path, "token": token,
            "headers": {k: v for k, v in headers.items() if not k.startswith(":")},
            "payload": payload, "jwt": jwt, "answer": {"status": status, "reason": reason}, "down": down,
        })
    response_headers = [(":status", str(status)), ("apns-id", headers.get("apns-id", "00000000-0000-4000-a000-000000000000"))]
    if status == 200:
        conn.send_headers(stream_id, response_headers, end_stream=True)
    else:
        data = json.dumps(dict({"reason": reason}, **extra)).encode()
        conn.send_headers(stream_id, response_headers + [("content-type", "application/json"), ("content-length", str(len(data)))])
        conn.send_data(stream_id, data, end_stream=True)


def make_certificate(directory):
    cert, key = os.path.join(directory, "standin-cert.pem"), os.path.join(directory, "standin-key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-days", "2",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def main():
    parser = argparse.ArgumentParser()
    for name in ("--dir", "--p8", "--key-id", "--team", "--topic"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    with open(args.p8, "rb") as f:
        public_key = serialization.load_pem_private_key(f.read(), password=None).public_key()
    cert, key = make_certificate(args.dir)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def accept_loop():
        while True:
            try:
                raw, _ = listener.accept()
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with lock:
                    refused = outage[0] == "refuse"
                if refused:
                    raw.close()
                    continue
                tls = context.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                continue
            with lock:
                live.add(tls)
                connection_count[0] += 1
                number = connection_count[0]
            threading.Thread(target=serve_connection, args=(args, public_key, tls, number), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    print(f"PORT {listener.getsockname()[1]} CERT {cert}", flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        command = json.loads(line)
        with lock:
            if command["cmd"] == "script":
                scripts.setdefault(command["token"], []).extend(command["responses"])
                reply = {"ok": True}
            elif command["cmd"] == "received":
                reply = {"received": list(received)}
            elif command["cmd"] == "down":
                outage[0] = command.get("mode", "refuse")
                if outage[0] == "refuse":
                    for sock in list(live):
                        try:
                            sock.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                reply = {"ok": True}
            elif command["cmd"] == "up":
                outage[0] = None
                reply = {"ok": True}
            elif command["cmd"] == "reset":
                received.clear()
                scripts.clear()
                reply = {"ok": True}
            else:
                reply = {"error": "unknown command"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
