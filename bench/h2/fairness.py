#!/usr/bin/env python3
"""A small answer among large downloads on one HTTP/2 connection (h2c): twelve GETs of BIG_PATH,
with windows large enough for everything, then, once 256 KiB of them arrived, one GET of
SMALL_PATH; prints how many octets of the downloads arrived after the small request was sent
and before its answer's first DATA, and the time it took. FIFO output sends the rest of the
downloads first; fair output answers within a batch (plus what the socket buffers held).

    bench/h2/fairness.py PORT [BIG_PATH] [SMALL_PATH] [DOWNLOADS]
"""
import socket, struct, sys, time

port = int(sys.argv[1])
big = sys.argv[2] if len(sys.argv) > 2 else "/static/f1m.bin"
small = sys.argv[3] if len(sys.argv) > 3 else "/plaintext"
downloads = int(sys.argv[4]) if len(sys.argv) > 4 else 12

def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

def literal(name_index, value):  # literal without indexing, indexed name (4-bit prefix < 15)
    v = value.encode()
    return bytes([name_index]) + bytes([len(v)]) + v

def request(path):  # :method GET, :scheme http, :path (literal), :authority (literal)
    return bytes([0x82, 0x86]) + literal(4, path) + literal(1, "localhost")

settings = frame(4, 0, 0, struct.pack(">HI", 4, 16 * 1024 * 1024))
window = frame(8, 0, 0, struct.pack(">I", 1 << 30))
streams = [frame(1, 5, 2 * i + 1, request(big)) for i in range(downloads)]
last = 2 * downloads + 1
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + settings + window + b"".join(streams))
buf = b""
before = 0
received = 0
start = None
while True:
    while len(buf) < 9:
        data = s.recv(1 << 20)
        if not data:
            sys.exit("connection closed before the small answer")
        buf += data
    length = int.from_bytes(buf[:3], "big")
    kind, flags, stream = buf[3], buf[4], struct.unpack(">I", buf[5:9])[0] & 0x7fffffff
    while len(buf) < 9 + length:
        data = s.recv(1 << 20)
        if not data:
            sys.exit("connection closed mid-frame")
        buf += data
    buf = buf[9 + length:]
    if kind == 4 and not flags & 1:
        s.sendall(frame(4, 1, 0))
    if kind == 0 and stream == last:
        break
    if kind == 0:
        received += length
        if start is not None:
            before += length
        elif received >= 262144:
            start = time.time()
            s.sendall(frame(1, 5, last, request(small)))
print(f"small answer after {before} octets of {downloads} downloads ({before / 1048576:.2f} MiB), {1000 * (time.time() - start):.1f} ms")
