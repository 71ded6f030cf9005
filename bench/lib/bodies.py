"""The body group: requests that carry a body (JSON bound and validated, a form, uploads of
10 and 100 MiB, a multipart file saved to disk, chunked variants), the exact bytes sent and
what every subject must answer.

Each request is written once, whole (head and body, with `Host: 127.0.0.1:<port>`), to a file
under bench/.work/bodies; wrk sends that file's bytes as they are (wrk/raw.lua), and the
pre-flight check (`check`) sends the same bytes from a raw socket and compares the answer with
what is expected here, the same for every subject. A subject that answers a request otherwise is
not timed on it (session.py).
"""
import hashlib
import json
import os
import socket
import time
import urllib.parse

import probe

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(BENCH, ".work")
REQUESTS_DIR = os.path.join(WORK, "bodies")
# Where the subjects save the multipart files: a folder per subject (BENCH_UPLOAD_DIR), emptied
# before each session; the subjects write at most 256 files there (their own counter, modulo 256).
UPLOADS_DIR = os.path.join(WORK, "uploads")

MIB = 1024 * 1024
GIB = 1024 * MIB

# json-write: a product of about 1 KiB, bound to a record, checked (name not empty, price not
# negative) and answered 201 with the record as JSON and `Location: /products/<sku>`.
PRODUCT = {
    "sku": "BK-1042-BLU",
    "name": "Trail running backpack, 18 litres",
    "description": ("A light pack for long runs on rough ground: an 18-litre main compartment with a "
                    "roll-top closure, two stretch pockets on the shoulder straps for soft flasks, a "
                    "hydration sleeve for a 2-litre bladder, a zipped hip-belt pocket large enough for "
                    "a phone, and reflective trims front and back. The back panel is a ventilated mesh "
                    "over a removable foam sheet that doubles as a sit pad. Sternum straps slide on "
                    "rails and the side compression cords take poles or a jacket. Made of recycled "
                    "ripstop nylon with a fluorocarbon-free water-repellent finish. The harness fits torsos from 40 "
                    "to 52 cm and adjusts on the move with one hand; a whistle is built into the sternum buckle "
                    "and the pack weighs 640 g empty."),
    "price": 89.95,
    "currency": "EUR",
    "stock": 120,
    "weightGrams": 640,
    "tags": ["outdoor", "running", "hydration", "lightweight", "recycled"],
    "dimensions": {"heightMm": 480, "widthMm": 260, "depthMm": 140},
    "active": True,
}
# The refused variant (pre-flight only): empty name, negative price; any 4xx is accepted
# (Swoop's `validate` answers 422, the peers as written in their subjects).
PRODUCT_INVALID = dict(PRODUCT, name="", price=-1.5)

# form-post: ten fields, urlencoded, bound to a record; answered 200 with one line of text.
FORM = [("name", "Ada Lovelace"), ("email", "ada@example.com"), ("phone", "+44 20 7946 0958"),
        ("street", "12 St James's Square"), ("city", "London"), ("postcode", "SW1Y 4JH"),
        ("country", "GB"), ("quantity", "3"), ("size", "M"), ("newsletter", "true")]
FORM_ANSWER = b"Thank you, Ada Lovelace: 3 x M to London"

UPLOAD_SIZE = 10 * MIB
BIG_UPLOAD_SIZE = 100 * MIB
MULTIPART_FILE_SIZE = 1 * MIB
MULTIPART_FILE_NAME = "photo.bin"
BOUNDARY = "----bench-boundary-7MA4YWxkTrZu0gW"
# Chunk sizes of the chunked variants: the JSON in pieces of 256 bytes (a client that streams
# its serialiser's output), the upload in 64 KiB chunks.
JSON_CHUNK = 256
UPLOAD_CHUNK = 64 * 1024


def _pattern(size, seed=0):
    """`size` bytes of a repeating, non-text pattern (no CRLF-boundary look-alikes)."""
    block = bytes((i * 31 + seed) % 256 for i in range(4096))
    return (block * (size // len(block) + 1))[:size]


def product_json(product=PRODUCT):
    return json.dumps(product, separators=(",", ":")).encode()


def form_body():
    return urllib.parse.urlencode(FORM).encode()


def multipart_body():
    data = _pattern(MULTIPART_FILE_SIZE, seed=7)
    parts = [
        f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday photo\r\n".encode(),
        (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{MULTIPART_FILE_NAME}\"\r\n"
         "Content-Type: application/octet-stream\r\n\r\n").encode(),
        data,
        f"\r\n--{BOUNDARY}--\r\n".encode(),
    ]
    return b"".join(parts), data


def chunked(body, size):
    out = []
    for i in range(0, len(body), size):
        piece = body[i:i + size]
        out.append(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    out.append(b"0\r\n\r\n")
    return b"".join(out)


class BodyRequest:
    """One request of the group: how it is built and what the answer must be."""

    def __init__(self, name, method, path, content_type, make_body, status, answer, chunk=None, saves_file=False):
        self.name = name
        self.method = method
        self.path = path
        self.content_type = content_type
        self.make_body = make_body   # () -> bytes (the payload, before any chunked framing)
        self.status = status
        self.answer = answer         # (body bytes, response) -> problem text or None
        self.chunk = chunk           # chunk size when sent Transfer-Encoding: chunked
        self.saves_file = saves_file

    def raw(self, port):
        body = self.make_body()
        framing = (f"Transfer-Encoding: chunked\r\n" if self.chunk else f"Content-Length: {len(body)}\r\n")
        head = (f"{self.method} {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Content-Type: {self.content_type}\r\n{framing}\r\n").encode()
        return head + (chunked(body, self.chunk) if self.chunk else body), len(body)


def _json_answer(body, resp):
    try:
        got = json.loads(body)
    except ValueError as e:
        return f"the body is not JSON ({e})"
    if got != PRODUCT:
        return "the JSON differs from the product sent: " + body[:200].decode("utf-8", "replace")
    if (resp.header("Location") or "") != "/products/" + PRODUCT["sku"]:
        return f"Location is {resp.header('Location')!r}, not '/products/{PRODUCT['sku']}'"
    if not (resp.header("Content-Type") or "").startswith("application/json"):
        return f"Content-Type is {resp.header('Content-Type')!r}"
    return None


def _exact(expected):
    def check(body, resp):
        return None if body == expected else f"body {body[:120]!r}, expected {expected[:120]!r}"
    return check


def _length_of(size):
    return _exact(str(size).encode())


SAVED_ANSWER = f"saved {MULTIPART_FILE_NAME} {MULTIPART_FILE_SIZE}".encode()

REQUESTS = {r.name: r for r in [
    BodyRequest("json-write", "POST", "/products", "application/json", product_json, 201, _json_answer),
    BodyRequest("json-write-chunked", "POST", "/products", "application/json", product_json, 201, _json_answer,
                chunk=JSON_CHUNK),
    BodyRequest("form-post", "POST", "/orders", "application/x-www-form-urlencoded", form_body, 200,
                _exact(FORM_ANSWER)),
    BodyRequest("upload-10m", "POST", "/upload", "application/octet-stream", lambda: _pattern(UPLOAD_SIZE), 200,
                _length_of(UPLOAD_SIZE)),
    BodyRequest("upload-10m-chunked", "POST", "/upload", "application/octet-stream", lambda: _pattern(UPLOAD_SIZE),
                200, _length_of(UPLOAD_SIZE), chunk=UPLOAD_CHUNK),
    BodyRequest("upload-100m", "POST", "/upload", "application/octet-stream", lambda: _pattern(BIG_UPLOAD_SIZE), 200,
                _length_of(BIG_UPLOAD_SIZE)),
    BodyRequest("upload-multipart", "POST", "/files", f"multipart/form-data; boundary={BOUNDARY}",
                lambda: multipart_body()[0], 201, _exact(SAVED_ANSWER), saves_file=True),
]}

# Refused requests, checked before timing and reported (not timed): any 4xx is accepted.
INVALID = {"json-invalid": BodyRequest("json-invalid", "POST", "/products", "application/json",
                                       lambda: product_json(PRODUCT_INVALID), 422, None)}


def payload_bytes(name):
    """The request's payload size (before chunked framing): what CPU per GiB is counted on."""
    return {"json-write": len(product_json()), "json-write-chunked": len(product_json()),
            "form-post": len(form_body()), "upload-10m": UPLOAD_SIZE, "upload-10m-chunked": UPLOAD_SIZE,
            "upload-100m": BIG_UPLOAD_SIZE, "upload-multipart": len(multipart_body()[0])}[name]


_written = set()


def request_file(name, port):
    """The file holding request `name` for `port`, written afresh once per run (so that an
    edit here never meets a stale file)."""
    os.makedirs(REQUESTS_DIR, exist_ok=True)
    path = os.path.join(REQUESTS_DIR, f"{name}-{port}.http")
    if path not in _written:
        _written.add(path)
        raw, _ = REQUESTS[name].raw(port)
        with open(path + ".tmp", "wb") as f:
            f.write(raw)
        os.replace(path + ".tmp", path)
    return path


def upload_dir(subject):
    return os.path.join(UPLOADS_DIR, subject)


def clear_upload_dir(subject):
    d = upload_dir(subject)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    return d


def _send(port, raw, timeout=30.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        return probe._read_response(sock)


def _check_one(req, port, subject):
    raw = open(request_file(req.name, port), "rb").read()
    t0 = time.monotonic()
    try:
        resp = _send(port, raw)
    except OSError as e:
        return {"ok": False, "status": None, "problem": f"no answer: {e}"}
    out = {"status": resp.status, "body_bytes": len(resp.body), "sha256": hashlib.sha256(resp.body).hexdigest()[:16],
           "head": resp.head, "seconds": round(time.monotonic() - t0, 3), "problem": None}
    if resp.status != req.status:
        out["problem"] = f"status {resp.status}, expected {req.status}: {resp.body[:200]!r}"
    else:
        out["problem"] = req.answer(resp.body, resp)
    if out["problem"] is None and req.saves_file:
        out["problem"] = _check_saved(subject)
    out["ok"] = out["problem"] is None
    return out


def _check_saved(subject):
    """The newest file the subject saved must hold the multipart file's bytes."""
    d = upload_dir(subject)
    files = [os.path.join(d, f) for f in os.listdir(d)] if os.path.isdir(d) else []
    if not files:
        return f"no file saved in {os.path.relpath(d, BENCH)}"
    newest = max(files, key=os.path.getmtime)
    with open(newest, "rb") as f:
        saved = f.read()
    return None if saved == multipart_body()[1] else f"the saved file {os.path.basename(newest)} differs ({len(saved)} bytes)"


def check(port, subject, names):
    """Sends each request of `names` once (and the refused JSON) and compares the answers with
    the expected ones: {name: {ok, status, body_bytes, sha256, head, problem}}."""
    out = {}
    for name in names:
        out[name] = _check_one(REQUESTS[name], port, subject)
    for name, req in INVALID.items():
        raw, _ = req.raw(port)
        try:
            resp = _send(port, raw)
            ok = 400 <= resp.status < 500
            out[name] = {"ok": ok, "status": resp.status, "body_bytes": len(resp.body),
                         "body": resp.body[:300].decode("utf-8", "replace"), "head": resp.head,
                         "problem": None if ok else f"status {resp.status}, expected a 4xx"}
        except OSError as e:
            out[name] = {"ok": False, "status": None, "problem": f"no answer: {e}"}
    return out
