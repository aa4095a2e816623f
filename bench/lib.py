"""Helpers shared by the bench scripts: wrk output parsing, medians, idle SSE clients, RSS."""
import asyncio, re, statistics, sys

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}

def parse_wrk(text):
    """requests/s, p50 ms, p99 ms and the requests made from `wrk --latency` output."""
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    def pct(p):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % p, text, re.M)
        return float(m.group(1)) * UNITS[m.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    socket_errors = re.search(r"Socket errors: (.*)", text)
    return {"rps": rps, "requests": requests, "p50": pct(50), "p99": pct(99), "non2xx": int(errors.group(1)) if errors else 0,
            "socket_errors": socket_errors.group(1) if socket_errors else ""}

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")

async def hold_sse(port, path, count, headers=""):
    """Opens `count` SSE streams (`{i}` in `path` becomes each one's number) and returns once each has received
    its first event."""
    streams, ready = [], 0
    async def one(i):
        nonlocal ready
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(f"GET {path.replace('{i}', str(i))} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{headers}\r\n".encode())
        await w.drain()
        buf = b""
        while b"data:" not in buf:
            chunk = await r.read(4096)
            if not chunk:
                raise RuntimeError("stream closed early")
            buf += chunk
        ready += 1
        streams.append((r, w))
    for start in range(0, count, 500):
        await asyncio.gather(*(one(i) for i in range(start, min(count, start + 500))))
    return streams

def summarize(name, rounds):
    return {"name": name, "rps": statistics.median(r["rps"] for r in rounds),
            "p50": statistics.median(r["p50"] for r in rounds), "p99": statistics.median(r["p99"] for r in rounds),
            "rounds": [round(r["rps"]) for r in rounds]}
