"""The faults a cluster of `enroute serve` processes meets, on one PostgreSQL and one Redis.

Run by cluster-faults.sh, which starts the servers with the project's scripts. Each scenario checks its invariant on
what was recorded: the answers every client got, the trips read back afterwards, and the versions each watcher saw.
"""
import argparse
import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

ARGS = None
SECRET = "cluster-faults-" + uuid.uuid4().hex
TOKENS = {}
FAILURES = []
CENTRE = (60.1699, 24.9384)          # central Helsinki: where the scenarios' providers wait
FAR = (60.4700, 24.9400)             # 33 km north, beyond the 10 km search radius: the load's rides, found by nobody


def log(text):
    print(text, flush=True)


def check(condition, what):
    if condition:
        log(f"ok: {what}")
    else:
        log(f"FAIL: {what}")
        FAILURES.append(what)
    return condition


def deadline_loop(seconds, step=0.1):
    """Yields until `seconds` have passed; the caller breaks when its condition holds (polling a process from outside)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        yield
        time.sleep(step)


def token(account, role):
    key = (account, role)
    if key not in TOKENS:
        TOKENS[key] = subprocess.check_output([ARGS.bin, "token", "--secret", SECRET, "--account", account, "--role", role],
                                              text=True).strip()
    return TOKENS[key]


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body) if self.body else None

    def __repr__(self):
        return f"{self.status} {self.body[:300]!r}"


def call(port, method, path, account=None, role=None, body=None, headers=None, timeout=15):
    """One request; a refused or cut connection is status None (the client never got an answer)."""
    h = dict(headers or {})
    if account:
        h["Authorization"] = "Bearer " + token(account, role)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        answer = Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
        c.close()
        return answer
    except (OSError, http.client.HTTPException) as error:
        return Answer(None, {}, str(error).encode())


class Node:
    def __init__(self, index, redis_url=None):
        self.name = f"node{index}"
        self.port = ARGS.ports[index - 1]
        self.redis_url = redis_url or ARGS.redis_url
        self.process = None

    def start(self):
        out = open(os.path.join(ARGS.work, f"{self.name}.log"), "ab")
        self.process = subprocess.Popen(
            [ARGS.bin, "serve", "--store", ARGS.pg_url, "--redis", self.redis_url, "--node", self.name,
             "--port", str(self.port), "--secret", SECRET, "--proof-dir", os.path.join(ARGS.work, "blobs"),
             "--rate-limits", "off", "--offer-timeout", "30", "--dispatch-limit", "900", "--dispatch-candidates", "50",
             "--threads", "2"],
            stdout=out, stderr=out)
        for _ in deadline_loop(60):
            if self.process.poll() is not None:
                raise SystemExit(f"FAIL: {self.name} exited {self.process.returncode} at start; see {out.name}")
            if call(self.port, "GET", "/readyz", timeout=2).status == 200:
                return
        raise SystemExit(f"FAIL: {self.name} not ready within 60 s")

    def signal(self, sig):
        os.kill(self.process.pid, sig)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def request_ride(port, customer, at, key=None):
    """Card, quote, request: a ride for `customer` picked up at `at`; the trip's answer."""
    call(port, "POST", "/v1/payment-methods", customer, "customer", {"token": "pm_card_visa", "makeDefault": True})
    pickup = {"lat": at[0], "lng": at[1]}
    dropoff = {"lat": at[0] + 0.012, "lng": at[1] + 0.010}
    quotes = call(port, "POST", "/v1/estimates", customer, "customer", {"pickup": pickup, "dropoff": dropoff})
    if quotes.status != 200:
        return quotes
    quote = next(q["quoteId"] for q in quotes.json() if q["productID"] == "economy")
    return call(port, "POST", "/v1/trips", customer, "customer",
                {"pickup": pickup, "dropoff": dropoff, "productID": "economy", "quoteId": quote},
                {"Idempotency-Key": key or uuid.uuid4().hex})


class Stream:
    """An SSE stream read on a thread of its own: (event, id, data) tuples on a queue; ("end", None, None) at the end."""

    def __init__(self, port, path, account, role):
        self.events = queue.Queue()
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.connection.request("GET", path, headers={"Authorization": "Bearer " + token(account, role),
                                                       "Accept": "text/event-stream"})
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise SystemExit(f"FAIL: GET {path} answered {self.response.status}")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        event, ident, data = None, None, []
        try:
            while True:
                line = self.response.fp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line == "":
                    if data:
                        self.events.put((event or "message", ident, "\n".join(data)))
                    event, ident, data = None, None, []
                elif line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("id:"):
                    ident = line[3:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip())
        except (OSError, ValueError):
            pass
        self.events.put(("end", None, None))

    def next(self, names, seconds):
        """The next event named in `names` within `seconds`, or None."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                return None
            if event[0] in names or event[0] == "end":
                return event

    def close(self):
        try:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Proxy:
    """A TCP proxy to Redis for one node: `cut()` drops every connection and refuses new ones (a partition between
    that node and Redis), `restore()` lets them through again."""

    def __init__(self, target_port):
        self.target = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", ARGS.proxy_port))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pairs = []
        self.refusing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            with self.lock:
                refusing = self.refusing
            if refusing:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.pairs.append((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _shut(*sockets):
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        Proxy._shut(source, sink)

    def cut(self):
        with self.lock:
            self.refusing = True
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            Proxy._shut(*pair)

    def restore(self):
        with self.lock:
            self.refusing = False


def online(port, provider, at):
    answer = call(port, "POST", "/v1/provider/availability", provider, "provider",
                  {"online": True, "position": {"lat": at[0], "lng": at[1]}})
    check(answer.status == 200, f"{provider} goes online on port {port} ({answer.status})")


def offline(port, provider):
    call(port, "POST", "/v1/provider/availability", provider, "provider", {"online": False})


def take_offer_for(stream, port, provider, trip_id, seconds):
    """Declines offers of other trips and accepts the one for `trip_id`; the accept's answer, or None if none came."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        event = stream.next({"offer"}, end - time.monotonic())
        if event is None or event[0] == "end":
            return None
        offer = json.loads(event[2])
        if offer["tripId"] != trip_id:
            call(port, "POST", f"/v1/provider/offers/{offer['offerId']}/decline", provider, "provider")
            continue
        return call(port, "POST", f"/v1/provider/offers/{offer['offerId']}/accept", provider, "provider")
    return None


def trip(port, customer, trip_id):
    answer = call(port, "GET", f"/v1/trips/{trip_id}", customer, "customer")
    return answer.json() if answer.status == 200 else None


def trip_becomes(port, customer, trip_id, state, seconds=5):
    """The trip as read on `port` once it is in `state` (another node's change reaches this one through the bus
    within moments), or as last read."""
    t = None
    for _ in deadline_loop(seconds, 0.05):
        t = trip(port, customer, trip_id)
        if t is not None and t["state"] == state:
            break
    return t


def ride_held_by(node, customer):
    """A ride requested on `node` where nobody is near yet, so its search stays `node`'s; its id."""
    answer = request_ride(node.port, customer, CENTRE)
    check(answer.status == 201, f"a ride is requested on {node.name} ({answer.status})")
    return answer.json()["id"]


def one_key_on_three_nodes(nodes):
    log("== one Idempotency-Key sent to three nodes at once")
    key = "three-nodes-" + uuid.uuid4().hex
    for node in nodes:
        call(node.port, "POST", "/v1/payment-methods", "once", "customer", {"token": "pm_card_visa", "makeDefault": True})
    pickup, dropoff = {"lat": FAR[0], "lng": FAR[1]}, {"lat": FAR[0] + 0.01, "lng": FAR[1] + 0.01}
    quote = next(q["quoteId"] for q in call(nodes[0].port, "POST", "/v1/estimates", "once", "customer",
                                            {"pickup": pickup, "dropoff": dropoff}).json() if q["productID"] == "economy")
    body = {"pickup": pickup, "dropoff": dropoff, "productID": "economy", "quoteId": quote}
    answers = [None] * len(nodes)

    def send(i):
        answers[i] = call(nodes[i].port, "POST", "/v1/trips", "once", "customer", body, {"Idempotency-Key": key})
    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(nodes))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    # A node that finds the key's first request still running answers 409 (the Idempotency-Key draft); the client
    # then retries, and gets the one trip.
    statuses = [a.status for a in answers]
    # A request that arrives after the first has finished gets its answer again (201, Idempotent-Replayed): only one
    # answer may be the one that created the trip.
    created = [a for a in answers if a.status == 201 and a.headers.get("idempotent-replayed") != "true"]
    for i, a in enumerate(answers):
        if a.status == 409:
            check(a.headers.get("content-type") == "application/problem+json", f"a 409 for the key in flight is problem+json ({a})")
            send(i)
    ids = {a.json()["id"] for a in answers if a.status in (200, 201)}
    check(len(created) == 1 and all(s in (201, 409) for s in statuses),
          f"one node created the trip, the others answered it again or 409 in flight: {statuses}")
    check(all(a.status in (200, 201) for a in answers), f"after retrying every 409, every node answered the trip: {[a.status for a in answers]}")
    check(len(ids) == 1, f"one trip for the key, got {sorted(ids)}")
    listed = call(nodes[1].port, "GET", "/v1/trips?limit=50", "once", "customer").json()
    items = listed if isinstance(listed, list) else next(v for v in listed.values() if isinstance(v, list))
    check(len([t for t in items if t["id"] in ids]) == 1 and len(items) == 1, f"the customer has one trip ({len(items)})")
    call(nodes[0].port, "POST", f"/v1/trips/{ids.pop()}/cancel", "once", "customer", {})


def kill_nine_under_load(nodes):
    log("== kill -9 of a node under load")
    victim = nodes[2]
    held_id = ride_held_by(victim, "held-by-victim")   # the search the victim holds when it dies
    acknowledged, lock, stop = {}, threading.Lock(), threading.Event()
    counts = {"sent": 0, "unanswered": 0, "errors": 0}

    def load(worker):
        n = 0
        while not stop.is_set():
            node = nodes[(worker + n) % len(nodes)]
            customer = f"load-{worker}-{n}"
            n += 1
            answer = request_ride(node.port, customer, FAR)
            with lock:
                counts["sent"] += 1
                if answer.status == 201:
                    acknowledged[answer.json()["id"]] = (customer, answer.json()["version"])
                elif answer.status is None:
                    counts["unanswered"] += 1
                else:
                    counts["errors"] += 1
    workers = [threading.Thread(target=load, args=(w,)) for w in range(4)]
    [w.start() for w in workers]
    for _ in deadline_loop(30):
        with lock:
            if len(acknowledged) >= 20:
                break
    victim.signal(signal.SIGKILL)
    victim.process.wait()
    log(f"   {victim.name} killed with {len(acknowledged)} rides acknowledged")
    for _ in deadline_loop(30):
        with lock:
            if len(acknowledged) >= 40:
                break
    stop.set()
    [w.join() for w in workers]
    check(counts["errors"] == 0, f"no request answered with an error ({counts})")
    lost = [i for i, (customer, version) in acknowledged.items()
            if (t := trip(nodes[0].port, customer, i)) is None or t["version"] < version]
    check(not lost, f"all {len(acknowledged)} acknowledged rides read back from {nodes[0].name} ({len(lost)} lost)")
    # The dead node's search is taken over: a provider coming online near it on another node gets its offer.
    events = Stream(nodes[0].port, "/v1/provider/events", "p-takeover", "provider")
    online(nodes[0].port, "p-takeover", CENTRE)
    accepted = take_offer_for(events, nodes[0].port, "p-takeover", held_id, 40)
    check(accepted is not None and accepted.status == 200,
          f"the dead node's search was taken over and its offer accepted on {nodes[0].name} ({accepted})")
    t = trip_becomes(nodes[1].port, "held-by-victim", held_id, "driverAssigned")
    check(t is not None and t["state"] == "driverAssigned" and (t.get("driver") or {}).get("id") == "p-takeover",
          f"the ride is driverAssigned to p-takeover ({t and t['state']})")
    events.close()
    offline(nodes[0].port, "p-takeover")
    victim.start()
    log(f"   {victim.name} started again")


def stop_past_the_lease(nodes):
    log("== kill -STOP of a node past its lease, then -CONT")
    sleeper = nodes[1]
    ride_id = ride_held_by(sleeper, "held-by-sleeper")
    watcher = Stream(nodes[0].port, f"/v1/trips/{ride_id}/events", "held-by-sleeper", "customer")
    sleeper.signal(signal.SIGSTOP)
    try:
        events = Stream(nodes[0].port, "/v1/provider/events", "p-awake", "provider")
        online(nodes[0].port, "p-awake", CENTRE)
        accepted = take_offer_for(events, nodes[0].port, "p-awake", ride_id, 40)
        check(accepted is not None and accepted.status == 200,
              f"while {sleeper.name} is stopped, another node took its search over and p-awake accepted ({accepted})")
    finally:
        sleeper.signal(signal.SIGCONT)
    # Awake again, the sleeper finds its lease gone: it must not offer the ride again nor move it.
    online(sleeper.port, "p-late", CENTRE)
    late = Stream(sleeper.port, "/v1/provider/events", "p-late", "provider")
    offered = late.next({"offer"}, 6)
    check(offered is None or json.loads(offered[2])["tripId"] != ride_id,
          "the resumed node made no offer of the ride it lost")
    t = trip_becomes(sleeper.port, "held-by-sleeper", ride_id, "driverAssigned")
    check(t is not None and t["state"] == "driverAssigned" and (t.get("driver") or {}).get("id") == "p-awake",
          f"read on the resumed node, the ride is still p-awake's ({t and t['state']})")
    versions = []
    while (event := watcher.events.get_nowait() if not watcher.events.empty() else None) is not None:
        if event[0] == "tripUpdated":
            versions.append(json.loads(event[2])["version"])
    check(versions == sorted(set(versions)) and len(versions) >= 1, f"the watcher saw versions rising: {versions}")
    watcher.close(); events.close(); late.close()
    for p in ("p-awake", "p-late"):
        offline(nodes[0].port, p)


def step(port, provider, trip_id, name):
    body = {"changeId": uuid.uuid4().hex, "step": name,
            "deviceTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return call(port, "POST", f"/v1/provider/trips/{trip_id}/steps", provider, "provider", body)


def redis_partition(nodes, proxy):
    log("== a partition between node3 and Redis")
    cut_off = nodes[2]
    ride_id = ride_held_by(nodes[0], "watched-through-partition")
    events = Stream(nodes[0].port, "/v1/provider/events", "p-part", "provider")
    online(nodes[0].port, "p-part", CENTRE)
    accepted = take_offer_for(events, nodes[0].port, "p-part", ride_id, 30)
    check(accepted is not None and accepted.status == 200, f"p-part has the ride ({accepted and accepted.status})")
    watcher = Stream(cut_off.port, f"/v1/trips/{ride_id}/events", "watched-through-partition", "customer")
    first = watcher.next({"tripUpdated"}, 10)
    check(first is not None and first[0] != "end", f"the watcher on {cut_off.name} has the ride")
    seen = [json.loads(first[2])["version"]] if first and first[0] != "end" else []
    proxy.cut()
    try:
        arrived = step(nodes[0].port, "p-part", ride_id, "driverArrived")
        started = step(nodes[0].port, "p-part", ride_id, "onTrip")
        check(arrived.status == 200 and started.status == 200,
              f"two steps are taken on node1 while {cut_off.name} is cut off from Redis ({arrived.status}, {started.status})")
        final = started.json()["version"] if started.status == 200 else None
    finally:
        proxy.restore()
    while final is not None and (not seen or seen[-1] < final):
        event = watcher.next({"tripUpdated"}, 30)
        if event is None or event[0] == "end":
            break
        seen.append(json.loads(event[2])["version"])
    check(final is not None and seen and seen[-1] == final,
          f"once the link is back, {cut_off.name}'s watcher reaches the last version {final}: {seen}")
    check(all(a < b for a, b in zip(seen, seen[1:])), f"its versions rose strictly ({seen})")
    watcher.close(); events.close()
    call(nodes[0].port, "POST", f"/v1/trips/{ride_id}/cancel", "watched-through-partition", "customer", {})
    offline(nodes[0].port, "p-part")


def postgres_restart(nodes):
    log("== PostgreSQL restart")
    subprocess.check_call(["scripts/postgres.sh", "stop", ARGS.pg_dir], stdout=subprocess.DEVNULL)
    down = request_ride(nodes[0].port, "while-pg-down", FAR)
    check(down.status == 503 and down.headers.get("content-type") == "application/problem+json",
          f"a request while PostgreSQL is down answers 503 problem+json ({down.status}, {down.headers.get('content-type')})")
    ready = call(nodes[0].port, "GET", "/readyz")
    check(ready.status == 503, f"/readyz says 503 meanwhile ({ready.status})")
    subprocess.check_call(["scripts/postgres.sh", "start", ARGS.pg_dir, str(ARGS.pg_port)], stdout=subprocess.DEVNULL)
    recovered = {}
    for _ in deadline_loop(30, 0.25):
        for node in nodes:
            if node.name not in recovered:
                answer = request_ride(node.port, f"after-pg-{node.name}-{uuid.uuid4().hex[:6]}", FAR)
                if answer.status == 201:
                    recovered[node.name] = answer
        if len(recovered) == len(nodes):
            break
    check(len(recovered) == len(nodes), f"every node serves again without a restart ({sorted(recovered)})")
    for node in nodes:
        check(node.process.poll() is None, f"{node.name} is still running")


def redis_restart(nodes):
    log("== Redis restart")
    ride = request_ride(nodes[0].port, "watched-across-redis", CENTRE)
    ride_id = ride.json()["id"]
    watcher = Stream(nodes[0].port, f"/v1/trips/{ride_id}/events", "watched-across-redis", "customer")
    first = watcher.next({"tripUpdated", "snapshot"}, 10)
    check(first is not None and first[0] != "end", "the watcher on node1 has the ride")
    subprocess.check_call(["scripts/redis.sh", "stop", ARGS.redis_dir], stdout=subprocess.DEVNULL)
    subprocess.check_call(["scripts/redis.sh", "start", ARGS.redis_dir, str(ARGS.redis_port)], stdout=subprocess.DEVNULL)
    # The change is made on another node: it reaches node1's watcher only through Redis, or by resync.
    cancel = call(nodes[1].port, "POST", f"/v1/trips/{ride_id}/cancel", "watched-across-redis", "customer", {})
    check(cancel.status == 200, f"the ride is cancelled on {nodes[1].name} ({cancel.status})")
    seen = []
    for _ in range(20):
        event = watcher.next({"tripUpdated", "snapshot"}, 20)
        if event is None or event[0] == "end":
            break
        data = json.loads(event[2])
        seen.append(data.get("version"))
        if data.get("state") == "cancelled":
            break
    check(seen and seen[-1] == cancel.json()["version"], f"node1's watcher saw the cancel after Redis restarted: {seen}")
    check(seen == sorted(seen), f"its versions only rose ({seen})")
    watcher.close()


def relay_history():
    """The relay's own invariants on what reached Redis over the whole run (kills, stops, partitions and restarts
    included): the versions stream's ids are 1, 2, 3... with no gap or repeat, and each trip version is on it once."""
    log("== the relay's history on the versions stream")
    out = subprocess.check_output(["redis-cli", "-p", str(ARGS.redis_port), "--raw", "XRANGE", "enroute:versions:default", "-", "+"],
                                  text=True).splitlines()
    # --raw prints each entry as: id, field name, field value.
    ids, versions = [], []
    for i in range(0, len(out) - 2, 3):
        ids.append(out[i])
        envelope = json.loads(out[i + 2])
        record = envelope["message"]["trip"]["_0"]
        versions.append((record["id"], record["version"]))
    numbers = [int(entry.split("-")[0]) for entry in ids]
    check(len(numbers) > 20, f"the versions stream holds the run's versions ({len(numbers)})")
    check(all(entry.endswith("-0") for entry in ids), "every id is a relay number (<n>-0)")
    check(numbers == list(range(numbers[0], numbers[0] + len(numbers))) if numbers else False,
          f"the numbers run {numbers[:1]}…{numbers[-1:]} with no gap or repeat")
    repeated = len(versions) - len(set(versions))
    check(repeated == 0, f"each trip version is on the stream once ({repeated} repeated of {len(versions)})")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--pg-url", required=True)
    p.add_argument("--pg-dir", required=True)
    p.add_argument("--pg-port", type=int, required=True)
    p.add_argument("--redis-url", required=True)
    p.add_argument("--redis-dir", required=True)
    p.add_argument("--redis-port", type=int, required=True)
    p.add_argument("--ports", type=int, nargs=3, required=True)
    p.add_argument("--proxy-port", type=int, required=True)
    ARGS = p.parse_args()
    proxy = Proxy(ARGS.redis_port)   # node3 reaches Redis only through it
    nodes = [Node(1), Node(2), Node(3, redis_url=f"redis://127.0.0.1:{proxy.port}")]
    try:
        for node in nodes:
            node.start()
        one_key_on_three_nodes(nodes)
        kill_nine_under_load(nodes)
        stop_past_the_lease(nodes)
        redis_partition(nodes, proxy)
        redis_restart(nodes)
        postgres_restart(nodes)
        relay_history()
    finally:
        for node in nodes:
            node.stop()
    if FAILURES:
        log(f"{len(FAILURES)} failed; node logs in {ARGS.work}")
        sys.exit(1)
    log("ok: every cluster fault kept its invariant")


if __name__ == "__main__":
    main()
