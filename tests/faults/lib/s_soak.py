"""Scenario `soak`: N minutes (--minutes, default 10) of mixed traffic on samples/Echo:
keep-alive, Connection: close, pipelined batches, Content-Length and chunked bodies,
Expect: 100-continue, and bad requests that must get their exact error status. Every answer
is checked; RSS must stay flat after the warm-up."""

import asyncio
import base64
import json
import random
import time

from common import Server, cpu_seconds, mib, open_conn, percentile, quiet_close, read_response, request, swoop_log_lines

TITLE = "Soak under mixed load"

# Bad requests and the status Swoop's README promises for each; the connection closes after.
# The HTTP/2 preface is not one: every endpoint speaks h2c by prior knowledge, so it is
# answered with the server's own preface, a SETTINGS frame ("h2").
BAD = [
    (b"GET / HTTP/1.1\r\n\r\n", 400),  # no Host
    (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),  # two Hosts
    (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", 400),
    (b"GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", 400),  # space in a field name
    (b"GET / HTTP/1.1\nHost: a\n\n", 400),  # bare LF
    (b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 400),  # bare CR
    (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),  # bad chunk size
    (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(101)) + b"\r\n", 431),
    (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "h2"),
]


class Tally:
    def __init__(self):
        self.ok = {}
        self.errors = []
        self.started = time.monotonic()

    def good(self, kind, n=1):
        self.ok[kind] = self.ok.get(kind, 0) + n

    def bad(self, kind, what):
        if len(self.errors) < 200:
            self.errors.append(f"{time.monotonic() - self.started:.1f}s {kind}: {what}")

    @property
    def total(self):
        return sum(self.ok.values())


def _echo_ok(r, target, body=b""):
    if r.status != 200:
        return f"status {r.status}"
    doc = json.loads(r.body)
    if doc["target"] != target:
        return f"target {doc['target']!r} for {target!r}"
    if base64.b64decode(doc["body"]) != body:
        return f"body of {len(body)} bytes came back different"
    return None


async def keep_alive(port, t, stop, w):
    rng = random.Random(w)
    reader, writer = await open_conn(port)
    n = 0
    while not stop.is_set():
        n += 1
        target = f"/soak/ka/{w}/{n}?x={rng.randint(0, 10**9)}"
        try:
            writer.write(request("GET", target, headers=[f"X-Soak: {'v' * rng.randint(0, 200)}"]))
            await writer.drain()
            problem = _echo_ok(await asyncio.wait_for(read_response(reader), 10), target)
        except Exception as e:
            problem = f"{type(e).__name__} {e}"
        if problem:
            t.bad("keep-alive", problem)
            quiet_close(writer)
            reader, writer = await open_conn(port)
        else:
            t.good("keep-alive")
    quiet_close(writer)


async def close_each(port, t, stop, w):
    n = 0
    while not stop.is_set():
        n += 1
        target = f"/soak/close/{w}/{n}"
        try:
            reader, writer = await open_conn(port)
            writer.write(request("GET", target, close=True))
            await writer.drain()
            r = await asyncio.wait_for(read_response(reader), 10)
            problem = _echo_ok(r, target) or (None if r.closes else "no Connection: close")
            if not problem and await asyncio.wait_for(reader.read(1), 10) != b"":
                problem = "bytes after the answer"
            quiet_close(writer)
        except Exception as e:
            problem = f"{type(e).__name__} {e}"
        if problem:
            t.bad("close", problem)
        else:
            t.good("close")


async def pipelined(port, t, stop, w):
    reader, writer = await open_conn(port)
    n = 0
    while not stop.is_set():
        n += 1
        targets = [f"/soak/pipe/{w}/{n}/{i}" for i in range(8)]
        try:
            writer.write(b"".join(request("GET", x) for x in targets))
            await writer.drain()
            problem = None
            for x in targets:
                problem = _echo_ok(await asyncio.wait_for(read_response(reader), 10), x)
                if problem:
                    break
        except Exception as e:
            problem = f"{type(e).__name__} {e}"
        if problem:
            t.bad("pipelined", problem)
            quiet_close(writer)
            reader, writer = await open_conn(port)
        else:
            t.good("pipelined", 8)
    quiet_close(writer)


def _chunked(body, rng, trailer):
    out, i = [], 0
    while i < len(body):
        k = rng.randint(1, 8192)
        part = body[i : i + k]
        out.append(b"%x\r\n%s\r\n" % (len(part), part))
        i += k
    out.append(b"0\r\n" + (b"X-Trailer: t\r\n" if trailer else b"") + b"\r\n")
    return b"".join(out)


async def bodies(port, t, stop, w):
    rng = random.Random(1000 + w)
    reader, writer = await open_conn(port)
    n = 0
    while not stop.is_set():
        n += 1
        target = f"/soak/body/{w}/{n}"
        body = rng.randbytes(rng.choice([0, 1, 100, 4096, rng.randint(0, 65536)]))
        kind = ("chunked" if n % 2 else "content-length") if w % 3 else "expect-100"
        try:
            if kind == "content-length":
                writer.write(request("POST", target, body=body))
            elif kind == "chunked":
                writer.write(request("POST", target, headers=["Transfer-Encoding: chunked"])
                             + _chunked(body, rng, n % 4 == 1))
            else:
                writer.write(request("POST", target, headers=[f"Content-Length: {len(body)}",
                                                              "Expect: 100-continue"]))
                await writer.drain()
                if body:
                    r = await asyncio.wait_for(read_response(reader), 10)
                    if r.status != 100:
                        raise RuntimeError(f"{r.status} instead of 100 Continue")
                writer.write(body)
            await writer.drain()
            problem = _echo_ok(await asyncio.wait_for(read_response(reader), 10), target, body)
        except Exception as e:
            problem = f"{type(e).__name__} {e}"
        if problem:
            t.bad(kind, problem)
            quiet_close(writer)
            reader, writer = await open_conn(port)
        else:
            t.good(kind)
    quiet_close(writer)


async def bad_requests(port, t, stop, w):
    n = w
    while not stop.is_set():
        raw, expected = BAD[n % len(BAD)]
        n += 1
        try:
            reader, writer = await open_conn(port)
            writer.write(raw)
            await writer.drain()
            if expected == "h2":
                # A frame header: 24-bit length, type (4: SETTINGS), flags, stream 0.
                head = await asyncio.wait_for(reader.readexactly(9), 10)
                stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                problem = None if head[3] == 4 and stream == 0 else f"not a SETTINGS frame on stream 0: {head!r}"
                quiet_close(writer)
                if problem:
                    t.bad("bad request", problem)
                else:
                    t.good("bad request")
                await asyncio.sleep(0.01)
                continue
            r = await asyncio.wait_for(read_response(reader), 10)
            if r.status != expected:
                problem = f"{r.status} instead of {expected} for {raw[:40]!r}"
            elif not r.closes:
                problem = f"{r.status} without Connection: close"
            else:
                problem = None
            quiet_close(writer)
        except Exception as e:
            problem = f"{type(e).__name__} {e} for {raw[:40]!r}"
        if problem:
            t.bad("bad request", problem)
        else:
            t.good("bad request")
        await asyncio.sleep(0.01)


WORKERS = [(keep_alive, 16), (close_each, 4), (pipelined, 4), (bodies, 6), (bad_requests, 2)]


def run(scn, args):
    seconds = args.minutes * 60
    warm = max(30.0, 0.2 * seconds)
    every = 5.0
    server = Server(scn, "echo", args.port).start()
    try:
        # After the start-up probe's connection is gone (its close may still be on its way).
        time.sleep(1.0)
        fd0, sockets0 = server.fds(), server.sockets()

        async def soak():
            t, stop = Tally(), asyncio.Event()
            tasks = [asyncio.create_task(f(args.port, t, stop, w)) for f, count in WORKERS for w in range(count)]
            samples = []
            t0 = time.monotonic()
            last_print = 0
            while time.monotonic() - t0 < seconds:
                await asyncio.sleep(every)
                el = time.monotonic() - t0
                fds = server.fds()
                samples.append((round(el, 1), server.rss(), fds, t.total, cpu_seconds(server.pid),
                                fds - (server.sockets() or 0)))
                if el - last_print >= (10 if scn.quick else 60) - 0.1:
                    last_print = el
                    scn.log(f"{el:5.0f} s: {t.total} answers checked, {len(t.errors)} errors, "
                            f"RSS {mib(samples[-1][1])} MiB, {samples[-1][2]} fds")
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
            return t, samples, time.monotonic() - t0

        t, samples, secs = asyncio.run(soak())
        rss_end, fd_end = server.settle(2)
        sockets_end = server.sockets()
        stderr = swoop_log_lines(server.stderr_text())

        after = [s for s in samples if s[0] > warm]
        rss_after = [s[1] for s in after]
        window = max(1, int(60 / every))  # one minute of samples
        first = percentile(rss_after[:window], 50)
        last = percentile(rss_after[-window:], 50)
        lo, hi = min(rss_after), max(rss_after)
        growth = (last - first) / first
        spread = (hi - first) / first
        cpu = (samples[-1][4] - samples[0][4]) if samples[0][4] is not None else None

        scn.number("minutes", args.minutes)
        scn.number("warm_up_s", warm)
        scn.number("answers_checked", t.total)
        scn.number("answers_by_kind", t.ok)
        scn.number("answers_per_s", round(t.total / secs))
        scn.number("unexpected_errors", len(t.errors))
        scn.number("rss_mib", {"at_warm_up_end": mib(first), "last_minute": mib(last), "min": mib(lo),
                               "max": mib(hi), "end": mib(rss_end)})
        scn.number("rss_samples", [(s[0], mib(s[1]), s[2]) for s in samples])
        scn.number("fds_end", fd_end)
        scn.number("server_cpu_s", round(cpu, 1) if cpu is not None else None)
        scn.check("zero unexpected errors", not t.errors and t.total > 0,
                  f"{t.total} answers checked ({t.ok}); errors: {t.errors[:3]}")
        scn.check("flat RSS after warm-up: last minute within 10% of the first", abs(growth) <= 0.10,
                  f"{mib(first)} -> {mib(last)} MiB ({growth * 100:+.1f}%)")
        scn.check("flat RSS after warm-up: no sample 10% above the first minute", spread <= 0.10,
                  f"min {mib(lo)}, max {mib(hi)} MiB ({spread * 100:+.1f}% over {mib(first)})")
        # Against the end of the warm-up: by then every code path has run once, and the runtime
        # has opened the assembly files it loads on first use (a JIT-run server keeps them open;
        # seen: +2 to +4 when a path first runs during the soak). Sockets against idle.
        files_warm = after[0][5] if after else fd0 - sockets0
        files_end = fd_end - sockets_end
        scn.number("fds", {"idle": fd0, "end": fd_end, "sockets_idle": sockets0, "sockets_end": sockets_end,
                           "other_at_warm_up_end": files_warm, "other_end": files_end})
        scn.check("other descriptors back to their count at the end of the warm-up (+-2)",
                  abs(files_end - files_warm) <= 2,
                  f"{fd0 - sockets0} idle, {files_warm} at the warm-up's end -> {files_end}; "
                  f"all: {fd0} idle -> {samples[-1][2]} under load -> {fd_end}")
        scn.check("sockets back to idle", sockets_end == sockets0, f"{sockets0} idle -> {sockets_end}")
        scn.check("nothing logged by the server", not stderr, f"{len(stderr)} lines {stderr[:2]}")
    finally:
        rc, _ = server.terminate()
        scn.number("exit_code", rc)
