#!/usr/bin/env python3
"""Handshakes for bench/tls/resume: for SECONDS, connect, handshake (resuming the last session
when MODE is `resumed`), send one GET, read the answer, close. Prints the handshakes made and
how many were resumptions. Usage: handshakes.py PORT MODE(full|resumed) SECONDS PROTOCOL(1.3|1.2)"""
import socket, ssl, sys, time

port, mode, seconds, protocol = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
version = ssl.TLSVersion.TLSv1_3 if protocol == "1.3" else ssl.TLSVersion.TLSv1_2
context.minimum_version = context.maximum_version = version
request = b"GET /plaintext HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
session = None
made = reused = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    raw = socket.create_connection(("127.0.0.1", port))
    # Else TLS 1.2's abbreviated handshake waits on Nagle and a delayed ACK (40 ms) here.
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s = context.wrap_socket(raw, session=session if mode == "resumed" else None)
    s.sendall(request)
    while s.recv(65536):  # to the server's close: a TLS 1.3 ticket comes after the handshake
        pass
    made += 1
    reused += 1 if s.session_reused else 0
    if mode == "resumed" and s.session is not None:
        session = s.session
    s.close()
print(made, reused)
