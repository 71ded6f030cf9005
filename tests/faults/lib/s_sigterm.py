"""Scenario `sigterm`: SIGTERM while clients keep sending (keep-alive, bodies, a new connection
per request and, on FaultServer, requests whose handler takes 1.5 s). Every request the server
took must be answered completely, new connections must be refused once the listener is
closed, and the process must exit 0 within its shutdown deadline (30 s)."""

import asyncio
import errno
import signal
import socket
import time

from common import HOST, NoResponse, PartialResponse, Server, open_conn, quiet_close, read_response, request, swoop_log_lines

TITLE = "SIGTERM under load"
SHUTDOWN_DEADLINE = 30.0  # ServerOptions.defaults.ShutdownTimeout
SLOW_MS = 1500


class Log:
    def __init__(self):
        self.records = []  # (kind, sent at, outcome, detail)
        self.t_term = None

    def add(self, kind, sent, outcome, detail=""):
        self.records.append((kind, sent, outcome, detail))


def _expected(phase, target, body):
    if phase == "echo":
        return target.encode() in body
    if target.startswith("/delay"):
        return body == f"done after {SLOW_MS} ms".encode()
    return body.startswith(b"ok ")


async def _exchange(phase, log, kind, reader, writer, target, body=None, close=False):
    """One request; logs its outcome; returns False when the connection is over."""
    sent = time.monotonic()
    try:
        writer.write(request("POST" if body is not None else "GET", target, body=body, close=close))
        await writer.drain()
        r = await asyncio.wait_for(read_response(reader), 10)
    except NoResponse as e:
        log.add(kind, sent, "no answer", str(e))
        return False
    except PartialResponse as e:
        log.add(kind, sent, "partial", str(e))
        return False
    except (ConnectionResetError, BrokenPipeError) as e:
        log.add(kind, sent, "no answer", type(e).__name__)
        return False
    except Exception as e:
        log.add(kind, sent, "error", f"{type(e).__name__} {e}")
        return False
    ok = r.status == 200 and _expected(phase, target, r.body)
    log.add(kind, sent, "complete" if ok else "wrong", f"{r.status} close={r.closes}")
    return ok and not r.closes


async def _connect(log, kind):
    t = time.monotonic()
    try:
        return await asyncio.wait_for(open_conn(_connect.port), 5)
    except ConnectionRefusedError:
        log.add(kind, t, "refused")
    except ConnectionResetError:
        # Connected in the kernel's backlog, then reset when the listener closed: never accepted.
        log.add(kind, t, "reset in backlog")
    except Exception as e:
        log.add(kind, t, "connect error", f"{type(e).__name__} {e}")
    return None


async def _worker(phase, log, kind, w, stop):
    n = 0
    conn = None
    if kind == "slow":
        await asyncio.sleep(w / 50 * SLOW_MS / 1000)  # so that the signal finds them at every stage
    while not stop.is_set():
        if conn is None:
            conn = await _connect(log, kind)
            if conn is None:
                return  # refused or reset: the listener is closed
        reader, writer = conn
        n += 1
        if kind == "keep-alive":
            go = await _exchange(phase, log, kind, reader, writer, f"/sigterm/ka/{w}/{n}")
        elif kind == "body":
            go = await _exchange(phase, log, kind, reader, writer, f"/sigterm/body/{w}/{n}", body=b"b" * 16384)
        elif kind == "close":
            await _exchange(phase, log, kind, reader, writer, f"/sigterm/close/{w}/{n}", close=True)
            go = False
        else:  # slow
            go = await _exchange(phase, log, kind, reader, writer, f"/delay?ms={SLOW_MS}")
        if not go:
            quiet_close(writer)
            conn = None
            if log.t_term is not None and kind != "close":
                return


async def _probe(log, server, stop):
    """From the signal on, tries a new connection every 20 ms while the server is alive."""
    await asyncio.sleep(0.005)
    while not stop.is_set() and server.proc.poll() is None:
        s = socket.socket()
        s.setblocking(False)
        t = time.monotonic()
        try:
            await asyncio.wait_for(asyncio.get_running_loop().sock_connect(s, (HOST, _connect.port)), 1.0)
            try:
                await asyncio.get_running_loop().sock_sendall(s, b"GET /probe HTTP/1.1\r\nHost: faults\r\n\r\n")
                data = await asyncio.wait_for(asyncio.get_running_loop().sock_recv(s, 4096), 5.0)
                log.add("probe", t, "answered" if data.startswith(b"HTTP/1.1 200") else "closed unanswered",
                        f"{len(data)} bytes")
            except (ConnectionResetError, BrokenPipeError):
                log.add("probe", t, "closed unanswered", "reset")
        except ConnectionRefusedError:
            log.add("probe", t, "refused")
        except ConnectionResetError:
            log.add("probe", t, "reset in backlog")
        except asyncio.TimeoutError:
            log.add("probe", t, "timed out")
        except OSError as e:
            log.add("probe", t, "refused" if e.errno == errno.ECONNREFUSED else "connect error", str(e))
        finally:
            s.close()
        await asyncio.sleep(0.02)


def _phase(scn, args, phase):
    if phase == "echo":
        server = Server(scn, "echo", args.port)
        mix = [("keep-alive", 50), ("body", 10), ("close", 10)]
    else:
        server = Server(scn, "fault", args.port)
        mix = [("keep-alive", 40), ("body", 10), ("close", 10), ("slow", 50)]
    server.start()
    scn.command(f"kill -TERM <server pid>  # after {3.2 if scn.quick else 6.2} s of load", f"signal ({phase})")
    _connect.port = args.port
    log = Log()
    load_seconds = 3.2 if scn.quick else 6.2

    async def go():
        stop = asyncio.Event()
        tasks = [asyncio.create_task(_worker(phase, log, kind, w, stop)) for kind, n in mix for w in range(n)]
        await asyncio.sleep(load_seconds)
        log.t_term = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        prober = asyncio.create_task(_probe(log, server, stop))
        while server.proc.poll() is None and time.monotonic() - log.t_term < SHUTDOWN_DEADLINE + 10:
            await asyncio.sleep(0.01)
        t_exit = time.monotonic()
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks, prober), 20)
        return t_exit

    try:
        t_exit = asyncio.run(go())
    finally:
        if server.proc.poll() is None:
            server.kill()
    rc = server.proc.returncode
    secs = t_exit - log.t_term
    t_term = log.t_term
    recs = [r for r in log.records if r[0] != "probe"]
    before = [r for r in recs if r[1] <= t_term - 0.2]
    near = [r for r in recs if t_term - 0.2 < r[1] <= t_term]
    after = [r for r in recs if r[1] > t_term]
    probes = [r for r in log.records if r[0] == "probe"]

    def count(rs):
        out = {}
        for r in rs:
            out[r[2]] = out.get(r[2], 0) + 1
        return out

    slow_in_flight = [r for r in recs if r[0] == "slow" and t_term - SLOW_MS / 1000 < r[1] <= t_term]
    scn.number(f"{phase}_requests_before_signal", count(before))
    scn.number(f"{phase}_requests_last_200ms_before_signal", count(near))
    scn.number(f"{phase}_requests_after_signal", count(after))
    scn.number(f"{phase}_probes_after_signal", count(probes))
    scn.number(f"{phase}_exit_code", rc)
    scn.number(f"{phase}_seconds_to_exit", round(secs, 2))
    if phase == "fault":
        scn.number("fault_slow_in_flight_at_signal", count(slow_in_flight))

    label = "samples/Echo" if phase == "echo" else "FaultServer"
    bad_before = [r for r in before if r[2] != "complete"]
    scn.check(f"{label}: every request sent before the signal answered completely", not bad_before and before,
              f"{len(before) - len(bad_before)}/{len(before)} ({bad_before[:3]})")
    partial = [r for r in recs if r[2] in ("partial", "wrong", "error", "connect error")]
    scn.check(f"{label}: no partial or wrong answer, before or after", not partial,
              f"after the signal: {count(after)}; last 200 ms before: {count(near)}; bad: {partial[:3]}")
    if phase == "fault":
        done = [r for r in slow_in_flight if r[2] == "complete"]
        scn.check(f"{label}: handlers in flight at the signal ({SLOW_MS} ms each) all finished",
                  slow_in_flight and len(done) == len(slow_in_flight), f"{len(done)}/{len(slow_in_flight)}")
    # In the first milliseconds a probe may still be accepted (then answered, or closed unread
    # because the server is stopping: its request never taken), or reset if it sat in the
    # kernel's backlog when the listener closed. After the first refusal every probe must be
    # refused, and none may hang.
    first_refusal = min((r[1] for r in probes if r[2] == "refused"), default=None)
    unclean = [r for r in probes if r[2] in ("timed out", "connect error")
               or (first_refusal is not None and r[1] > first_refusal and r[2] != "refused")]
    refused = [r for r in probes if r[2] == "refused"]
    early = [f"{r[2]} at +{(r[1] - t_term) * 1000:.0f} ms" for r in probes if r[2] != "refused"]
    scn.number(f"{phase}_probes_not_refused", early)
    scn.check(f"{label}: new connections refused cleanly once the listener is closed",
              not unclean and (refused or secs < 0.1),
              f"probes while the process lived: {count(probes) or 'none (it exited at once)'}"
              + (f"; before the listener closed: {early[:5]}" if early else ""))
    scn.check(f"{label}: exit code 0 within the {SHUTDOWN_DEADLINE:.0f} s deadline",
              rc == 0 and secs < SHUTDOWN_DEADLINE, f"exit {rc} after {secs:.2f} s")
    scn.check(f"{label}: says it shuts down, logs no error", "shutting down" in server.stdout_text()
              and not swoop_log_lines(server.stderr_text(), ("fail", "crit")),
              f"stdout {server.stdout_text().strip().splitlines()[-1:]}")


def run(scn, args):
    _phase(scn, args, "echo")
    _phase(scn, args, "fault")
