"""Small raw-socket HTTP/1.1 client used between measurements: waiting for the
first response, reading one response exactly (to count its bytes and check it),
and reading the /debug/gc counters of .NET subjects."""
import gzip
import hashlib
import json
import os
import socket
import time
from datetime import datetime, timezone


class Response:
    def __init__(self, status, headers, body, raw_len, head):
        self.status = status
        self.headers = headers  # list of (name, value) in wire order
        self.body = body
        self.raw_len = raw_len  # status line + headers + body, as sent
        self.head = head

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


def _read_response(sock):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the headers ended")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = [tuple(s.strip() for s in l.split(":", 1)) for l in lines[1:] if ":" in l]
    resp = Response(status, headers, b"", 0, head.decode("latin-1"))
    length = resp.header("Content-Length")
    te = (resp.header("Transfer-Encoding") or "").lower()
    if length is not None:
        n = int(length)
        while len(rest) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed inside the body")
            rest += chunk
        body, consumed = rest[:n], n
    elif "chunked" in te:
        body, pos = b"", 0
        while True:
            while b"\r\n" not in rest[pos:]:
                rest += sock.recv(65536)
            line_end = rest.index(b"\r\n", pos)
            size = int(rest[pos:line_end].split(b";")[0], 16)
            need = line_end + 2 + size + 2
            while len(rest) < need:
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError("closed inside a chunk")
                rest += chunk
            body += rest[line_end + 2:line_end + 2 + size]
            pos = need
            if size == 0:
                break
        consumed = pos
    else:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        body, consumed = rest, len(rest)
    resp.body = body
    resp.raw_len = len(head) + 4 + consumed
    return resp


def get(port, path, host="127.0.0.1", timeout=5.0, headers=()):
    """One GET on a fresh keep-alive connection (closed by us afterwards); `headers`: extra
    request header lines."""
    extra = "".join(h + "\r\n" for h in headers)
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{extra}\r\n".encode())
        return _read_response(sock)


def wait_first_response(port, started, proc, limit=60.0, path="/plaintext"):
    """Polls until a 200 comes back. Returns seconds since `started` (a
    time.monotonic() taken just before the process was spawned), or raises."""
    deadline = started + limit
    last_error = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with code {proc.returncode} before answering")
        try:
            r = get(port, path, timeout=2.0)
            if r.status == 200:
                return time.monotonic() - started
            last_error = f"HTTP {r.status}"
        except OSError as e:
            last_error = str(e)
        time.sleep(0.005)
    raise RuntimeError(f"no 200 from {path} within {limit:.0f} s (last: {last_error})")


def debug_gc(port):
    """The allocation counters, or None when the subject has no /debug/gc."""
    try:
        r = get(port, "/debug/gc", timeout=2.0)
        if r.status != 200:
            return None
        d = json.loads(r.body)
        return {k: int(d[k]) for k in ("allocatedBytes", "gen0", "gen1", "gen2")}
    except (OSError, ValueError, KeyError):
        return None


# path: (status, content type, body check); a 404 is checked by its status only.
EXPECTED = {
    "/plaintext": (200, "text/plain", lambda b: b == b"Hello, World!"),
    "/json": (200, "application/json", lambda b: json.loads(b) == {"message": "Hello, World!"}),
    "/time": (200, "application/json", lambda b: _recent_time(json.loads(b)["time"])),
}

# The routing tier: samples/Api's answers, which its peers must give exactly
# (same paths, bodies, status codes and content types).
EXPECTED_ROUTING = {
    "/plaintext": EXPECTED["/plaintext"],
    "/json": EXPECTED["/json"],
    "/time": (200, "application/json", lambda b: _recent_time(json.loads(b)["now"])),
    "/r/57": (200, "text/plain", lambda b: b == b"r57"),
    "/r/0": (200, "text/plain", lambda b: b == b"r0"),
    "/r/99": (200, "text/plain", lambda b: b == b"r99"),
    "/r/42/items/abc": (200, "text/plain", lambda b: b == b"item 42 abc"),
    "/r/42/users/7": (200, "text/plain", lambda b: b == b"user 42 7"),
    "/hello/ada": (200, "text/plain", lambda b: b == b"Hello, ada!"),
    "/r/100": (404, None, None),
    "/r/x/items/abc": (404, None, None),
    "/r/42/users/x": (404, None, None),
}

# The app tier (bench/subjects/app): the same page, stylesheet and JSON from every subject.
# name: (path, request headers, status, content type, content encoding, body check); the
# body is checked after decoding, and its size and digest recorded so that the report can
# say whether every subject sent the same bytes.
APP_STYLESHEET = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "subjects", "app", "wwwroot", "site.css")
APP_PRODUCTS = 40


def _app_page(body):
    return body.startswith(b"<!DOCTYPE html>") and body.count(b"<tr>") == APP_PRODUCTS + 1


def _app_view(body):
    return body.startswith(b"<!DOCTYPE html>") and body.count(b"<tr>") == 100 + 1


def _app_products(body):
    items = json.loads(body)
    return len(items) == APP_PRODUCTS and set(items[0]) == {"id", "sku", "name", "category", "price", "stock"}


def _app_stylesheet(body):
    with open(APP_STYLESHEET, "rb") as f:
        return body == f.read()


EXPECTED_APP = {
    "page": ("/catalog", (), 200, "text/html", None, _app_page),
    "view": ("/catalog/view", (), 200, "text/html", None, _app_view),
    "asset": ("/static/site.css", (), 200, "text/css", None, _app_stylesheet),
    "json": ("/api/products", (), 200, "application/json", None, _app_products),
    "json-gzip": ("/api/products", ("Accept-Encoding: gzip",), 200, "application/json", "gzip", _app_products),
}

# The columns of the report's response-bytes tables.
BASIC_PATHS = ("/plaintext", "/json", "/time")
ROUTING_PATHS = ("/r/57", "/r/42/items/abc")


def _recent_time(text):
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return abs((datetime.now(timezone.utc) - t).total_seconds()) < 5


def check_app(port):
    """The app tier's answers: for each of EXPECTED_APP, status, response bytes, head, the
    body's size on the wire and decoded, its digest (decoded), and whether all is as expected."""
    out = {}
    for name, (path, headers, status, ctype, encoding, body_ok) in EXPECTED_APP.items():
        try:
            r = get(port, path, headers=headers)
            got_encoding = (r.header("Content-Encoding") or "").strip().lower() or None
            body = gzip.decompress(r.body) if got_encoding == "gzip" else r.body
            try:
                ok_body = bool(body_ok(body))
            except Exception:
                ok_body = False
            ok_type = (r.header("Content-Type") or "").split(";")[0].strip() == ctype
            ok = r.status == status and ok_body and ok_type and got_encoding == encoding
            out[name] = {
                "path": path, "request_headers": list(headers), "status": r.status, "bytes": r.raw_len,
                "head": r.head, "body_bytes": len(r.body), "decoded_bytes": len(body),
                "sha256": hashlib.sha256(body).hexdigest()[:16], "ok": ok,
                "problem": None if ok else
                f"status {r.status} (expected {status}), body ok {ok_body}, content-type "
                f"{r.header('Content-Type')!r}, content-encoding {got_encoding!r} (expected {encoding!r})",
            }
        except Exception as e:  # a broken endpoint is reported, not fatal
            out[name] = {"path": path, "status": None, "bytes": None, "head": None, "ok": False, "problem": str(e)}
    return out


def check_endpoints(port, routing=False):
    """For each endpoint: status, response bytes, headers, and whether the status,
    body and content type are what the scenarios expect."""
    out = {}
    for path, (status, ctype, body_ok) in (EXPECTED_ROUTING if routing else EXPECTED).items():
        try:
            r = get(port, path)
            try:
                ok_body = body_ok is None or bool(body_ok(r.body))
            except Exception:
                ok_body = False
            ok_type = ctype is None or (r.header("Content-Type") or "").split(";")[0].strip() == ctype
            ok = r.status == status and ok_body and ok_type
            out[path] = {
                "status": r.status,
                "bytes": r.raw_len,
                "head": r.head,
                "ok": ok,
                "problem": None if ok else
                f"status {r.status} (expected {status}), body ok {ok_body}, content-type {r.header('Content-Type')!r}",
            }
        except Exception as e:  # a broken endpoint is reported, not fatal
            out[path] = {"status": None, "bytes": None, "head": None, "ok": False, "problem": str(e)}
    return out
