#!/usr/bin/env python3
"""Memory of idle keep-alive connections: a server's resident set (VmRSS of every process given,
summed) before and with N connections that each sent one request, read its answer and stayed
open (2 s after the last opened, and again once settled: SETTLE s after, 20 by default, time
for a server's own idle-time work such as Swoop's parking and trimming), and after they closed.
Prints one line of JSON; kib_per_connection is the settled figure.

Usage: bench/idle/memory.py PORT N PID [PID...]   (from another core than the server's)
HOLD=S in the environment keeps the connections open S seconds more before closing them (time
to take a heap dump of the server, e.g. with dotnet-gcdump).
"""
import json, os, resource, selectors, socket, sys, time

port, n, pids = int(sys.argv[1]), int(sys.argv[2]), [int(p) for p in sys.argv[3:]]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
request = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n"


def rss_kib():
    total = 0
    for pid in pids:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def open_idle(count, batch=200):
    """Opens `count` connections, `batch` at a time: each sends one request and reads its whole
    answer (the head says Content-Length) before the next batch starts."""
    held = []
    while len(held) < count:
        group = []
        for _ in range(min(batch, count - len(held))):
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(request)
            group.append(s)
        sel = selectors.DefaultSelector()
        got = {}
        for s in group:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            got[s] = b""
        waiting = set(group)
        deadline = time.time() + 30
        while waiting and time.time() < deadline:
            for key, _ in sel.select(timeout=1):
                s = key.fileobj
                data = s.recv(65536)
                if not data:
                    raise SystemExit(f"a connection closed before its answer (after {len(held)} held)")
                got[s] += data
                head, sep, body = got[s].partition(b"\r\n\r\n")
                if sep:
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    if len(body) >= length:
                        sel.unregister(s)
                        waiting.discard(s)
        sel.close()
        if waiting:
            raise SystemExit(f"{len(waiting)} answers did not come within 30 s")
        held.extend(group)
    return held


time.sleep(2)
before = rss_kib()
held = open_idle(n)
time.sleep(2)
with_open = rss_kib()
time.sleep(max(0.0, float(os.environ.get("SETTLE", "20")) - 2))
settled = rss_kib()
if os.environ.get("HOLD"):
    print(f"{n} connections open, RSS {with_open} KiB; holding them {os.environ['HOLD']} s", file=sys.stderr, flush=True)
    time.sleep(float(os.environ["HOLD"]))
for s in held:
    s.close()
time.sleep(5)
after = rss_kib()
print(json.dumps({"connections": n, "rss_before_kib": before, "rss_open_kib": with_open,
                  "rss_settled_kib": settled, "rss_closed_kib": after,
                  "kib_per_connection_at_2s": (with_open - before) / n,
                  "kib_per_connection": (settled - before) / n}))
