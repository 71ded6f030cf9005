#!/usr/bin/env python3
"""Memory per idle gRPC streaming call: a server's resident set (RSS, /proc/<pid>/status)
before and after N open server-streaming calls (bench.Bench/Idle: the server sends one message,
then waits until the client cancels), 100 calls per HTTP/2 connection (Kestrel's and Swoop's
SETTINGS_MAX_CONCURRENT_STREAMS). RSS is read 2 s after the last call's first message arrived
and again after SETTLE seconds (default 10: time for the server's idle-time work). Prints one
tab-separated line: calls, connections, RSS before, at 2 s, settled (KiB), KiB per call at 2 s
and settled (the connections' share included: N/100 connections).

Usage: bench/grpc/memory.py PID PORT [CALLS]
Run it once per server process: a second run reuses memory the first one grew.
"""
import os, socket, struct, sys, time

pid, port = int(sys.argv[1]), int(sys.argv[2])
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
settle_s = float(os.environ.get("SETTLE", "10"))
per_connection = 100


def rss_kib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):  # literal header field without indexing, new name, no Huffman
    n, v = name.encode(), value.encode()
    assert len(n) < 127 and len(v) < 127
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


block = b"".join(literal(n, v) for n, v in [
    (":method", "POST"), (":scheme", "http"), (":path", "/bench.Bench/Idle"), (":authority", f"127.0.0.1:{port}"),
    ("content-type", "application/grpc"), ("te", "trailers")])
ping = b"\x0a\x05World"                           # Ping { name = "World" }
message = b"\x00" + struct.pack(">I", len(ping)) + ping


def read_until_messages(s, count):
    """Reads frames until `count` DATA frames with a payload arrived (each call's first message)."""
    buffer, seen = b"", 0
    s.settimeout(30)
    while seen < count:
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("the server closed a connection")
        buffer += chunk
        while len(buffer) >= 9:
            length = int.from_bytes(buffer[:3], "big")
            if len(buffer) < 9 + length:
                break
            kind, flags = buffer[3], buffer[4]
            if kind == 0 and length > 0:
                seen += 1
            elif kind == 3 or kind == 7:
                raise SystemExit(f"the server reset a stream or the connection (frame type {kind})")
            elif kind == 1 and flags & 1:
                raise SystemExit("a call ended early (trailers-only answer)")
            buffer = buffer[9 + length:]


time.sleep(2)
before = rss_kib()
held = []
opened = 0
while opened < calls:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0) + frame(4, 1, 0))
    n = min(per_connection, calls - opened)
    out = b"".join(frame(1, 4, 2 * i + 1, block) + frame(0, 1, 2 * i + 1, message) for i in range(n))
    s.sendall(out)
    read_until_messages(s, n)
    held.append(s)
    opened += n
time.sleep(2)
at_2s = rss_kib()
time.sleep(max(0.0, settle_s - 2))
settled = rss_kib()
print(f"{calls}\t{len(held)}\t{before}\t{at_2s}\t{settled}\t{(at_2s - before) / calls:.2f}\t{(settled - before) / calls:.2f}")
for s in held:
    s.close()
