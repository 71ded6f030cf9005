#!/usr/bin/env python3
"""Clients that open streams and no window (SETTINGS_INITIAL_WINDOW_SIZE 0) and read nothing:
CONNECTIONS connections each open STREAMS requests for PATH at once; the server's RSS is read
before, 3 s after the requests (what the server holds for them), and 5 s after the
connections closed. Each connection's response heads are counted (one per handler run).

    bench/h2/no-window.py PORT PID [CONNECTIONS] [STREAMS] [PATH]
"""
import socket, struct, sys, time

port, pid = int(sys.argv[1]), int(sys.argv[2])
connections = int(sys.argv[3]) if len(sys.argv) > 3 else 4
streams = int(sys.argv[4]) if len(sys.argv) > 4 else 100
path = (sys.argv[5] if len(sys.argv) > 5 else "/big?kb=1024").encode()

def rss_mib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0

def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

# :method GET, :scheme http, :authority "a", :path literal (not indexed)
block = bytes([0x82, 0x86, 0x01, 0x01]) + b"a" + bytes([0x04, len(path)]) + path
zero_window = struct.pack(">HI", 4, 0)
before = rss_mib()
socks = []
for _ in range(connections):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, zero_window)
              + b"".join(frame(1, 5, 2 * i + 1, block) for i in range(streams)))
    socks.append(s)
time.sleep(3)
heads = []
for s in socks:
    s.settimeout(0.5)
    data = b""
    try:
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    n, p = 0, 0
    while p + 9 <= len(data):
        length = int.from_bytes(data[p:p + 3], "big")
        if data[p + 3] == 1:
            n += 1
        p += 9 + length
    heads.append(n)
held = rss_mib()
for s in socks:
    s.close()
time.sleep(5)
after = rss_mib()
print(f"{connections} connections x {streams} streams of {path.decode()}, no window: "
      f"handlers run per connection {heads}; RSS {before:.1f} -> {held:.1f} MiB held "
      f"(+{held - before:.1f}) -> {after:.1f} MiB 5 s after closing")
