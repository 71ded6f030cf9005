"""The `live` group's two measurements, each a conversation with bench/tools/live.js (the
client, on the load core) while the runner reads the server's memory and CPU from /proc:

sse  N idle Server-Sent Event streams: the server's RSS before opening them, with all of them
     open (after a settle), and some seconds after the client closed them all; the server's
     CPU around each of a few broadcasts of one small event to every stream (after one
     discarded broadcast), and the client's time from its trigger to the last stream having
     the event. Memory per stream = (RSS open - RSS before) / N.
ws   C WebSocket connections echoing B-byte messages, closed loop per connection: after a
     warm-up, the echoes the client received in D seconds, and the server's CPU in that window.

Server CPU is the sum over its threads of /proc/<pid>/task/<tid>/schedstat (nanoseconds);
utime+stime from /proc/<pid>/stat (10 ms ticks) is recorded beside it.
"""
import json
import os
import queue
import statistics
import subprocess
import threading
import time

import measure
import procs

TOOLS = ("sse", "ws")
CLIENT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "live.js")

# Seconds after all streams opened before RSS is read (buffers settle), and between broadcasts.
OPEN_SETTLE = 2.0
BROADCAST_GAP = 0.5
# After the client has the event, the server may still be finishing (the pump's last
# continuation): its CPU is read this long after the client's report.
BROADCAST_TAIL = 0.2


def command(scenario, port, mode):
    base = ["node", CLIENT, scenario.tool, "--port", str(port)]
    if scenario.tool == "sse":
        return base + ["--streams", str(mode["sse_streams"])]
    return base + ["--connections", str(scenario.connections), "--size", str(mode["ws_size"]),
                   "--warmup", str(mode["ws_warmup"]), "--seconds", str(mode["ws_seconds"])]


def estimate_seconds(scenario, mode):
    if scenario.tool == "sse":
        return (mode["sse_streams"] / 2000 + OPEN_SETTLE + 2 + (mode["sse_broadcasts"] + 1) * (BROADCAST_GAP + 0.5)
                + mode["sse_settle"])
    return mode["ws_warmup"] + mode["ws_seconds"] + 1.5


class Client:
    """The client process: its JSON lines arrive on a queue; commands go to its stdin."""

    def __init__(self, argv, log):
        self.log = log
        self.proc = subprocess.Popen(["taskset", "-c", measure.LOADGEN_CORE, *argv], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.log.write(line)
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                pass  # a warning from node: logged only
        self.lines.put(None)

    def expect(self, event, timeout):
        """The next line of this event (lines of other events are skipped), or an error."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"the client did not report '{event}' within {timeout:.0f} s")
            if msg is None:
                raise RuntimeError(f"the client exited before reporting '{event}'")
            if msg.get("event") == event:
                return msg

    def send(self, line):
        self.log.write(f"> {line}\n")
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self, timeout=10.0):
        """Ends the client; its CPU seconds (rusage)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                return usage.ru_utime + usage.ru_stime
            time.sleep(0.05)
        self.proc.kill()
        _, _, usage = os.wait4(self.proc.pid, 0)
        return usage.ru_utime + usage.ru_stime


class Cpu:
    """The server's CPU at one moment: schedstat nanoseconds and stat ticks."""

    def __init__(self, sid):
        self.ns = procs.tree_runtime_ns(sid)
        self.ticks_s = procs.tree_cpu(sid)
        self.t = time.monotonic()

    def since(self, before):
        return {"cpu_ms": (self.ns - before.ns) / 1e6, "ticks_ms": (self.ticks_s - before.ticks_s) * 1000,
                "wall_ms": (self.t - before.t) * 1000}


def measure_live(scenario, port, mode, sid, log_path, timeout):
    """Runs one `live` measurement against the server session `sid`; a result record."""
    rec = {"scenario": scenario.name, "live": scenario.tool, "ok": False, "error": None, "rps": None,
           "requests": None, "flags": []}
    rec["command"] = command(scenario, port, mode)
    t0 = time.monotonic()
    snap0 = procs.cpu_snapshot_all()
    with open(log_path, "w") as log, procs.RssSampler(sid) as sampler:
        log.write(" ".join(rec["command"]) + "\n\n")
        client = None
        try:
            client = Client(rec["command"], log)
            (_sse if scenario.tool == "sse" else _ws)(client, rec, mode, sid, timeout)
            rec["ok"] = True
        except RuntimeError as e:
            rec["error"] = str(e)
        finally:
            if client is not None:
                rec["loadgen_cpu_s"] = client.finish()
    rec["peak_rss_kb"] = sampler.peak_kb
    rec["wall_s"] = time.monotonic() - t0
    snap1 = procs.cpu_snapshot_all()
    exclude = set(procs.session_pids(sid)) | {os.getpid(), client.proc.pid if client else -1}
    other, rec["other_top"] = procs.other_cpu(snap0, snap1, exclude)
    rec["other_busy"] = other / rec["wall_s"]
    if rec["other_busy"] >= measure.OTHER_LOAD:
        rec["flags"].append("other-load")
    return rec


def _sse(client, rec, mode, sid, timeout):
    n = mode["sse_streams"]
    rec["rss_before_kb"] = procs.tree_rss_kb(sid)
    opened = client.expect("open", timeout)
    rec["streams"], rec["failed"], rec["open_ms"] = opened["streams"], opened["failed"], opened["ms"]
    rec["errors_total"] = opened["failed"]
    if opened["streams"] == 0:
        raise RuntimeError(f"no stream opened ({opened['failed']} failed)")
    idle0 = Cpu(sid)
    time.sleep(OPEN_SETTLE)
    idle = Cpu(sid).since(idle0)
    rec["idle_cpu_ms_per_s"] = idle["cpu_ms"] / idle["wall_ms"] * 1000
    rec["rss_open_kb"] = procs.tree_rss_kb(sid)
    rec["kib_per_stream"] = (rec["rss_open_kb"] - rec["rss_before_kb"]) / opened["streams"]

    broadcasts = []
    for seq in range(0, mode["sse_broadcasts"] + 1):  # 0: discarded (first use of the path)
        before = Cpu(sid)
        client.send(f"broadcast {seq} {mode['sse_event_size']}")
        got = client.expect("broadcast", 60)
        time.sleep(BROADCAST_TAIL)
        b = Cpu(sid).since(before)
        b.update({"seq": seq, "received": got["received"], "of": got["of"], "last_ms": got["ms"],
                  "p50_ms": got["p50_ms"]})
        if seq:
            broadcasts.append(b)
            rec["errors_total"] += got["of"] - got["received"]
        time.sleep(BROADCAST_GAP)
    rec["broadcasts"] = broadcasts
    rec["broadcast_cpu_ms"] = statistics.median(b["cpu_ms"] for b in broadcasts)
    rec["broadcast_ticks_ms"] = statistics.median(b["ticks_ms"] for b in broadcasts)
    rec["broadcast_last_ms"] = statistics.median(b["last_ms"] for b in broadcasts if b["last_ms"] is not None)
    rec["broadcast_cpu_us_per_stream"] = rec["broadcast_cpu_ms"] * 1000 / opened["streams"]

    client.send("close")
    client.expect("closed", 30)
    time.sleep(mode["sse_settle"])
    rec["rss_closed_kb"] = procs.tree_rss_kb(sid)
    rec["settle_s"] = mode["sse_settle"]
    client.send("exit")
    if rec["streams"] < n:
        rec["flags"].append("streams-missing")


def _ws(client, rec, mode, sid, timeout):
    opened = client.expect("open", timeout)
    rec["connections"] = opened["connections"]
    client.expect("start", timeout)
    before = Cpu(sid)
    lg0 = procs.runtime_ns(client.proc.pid)
    end = client.expect("end", mode["ws_seconds"] + 30)
    after = Cpu(sid)
    lg1 = procs.runtime_ns(client.proc.pid)
    w = after.since(before)
    m = end["messages"]
    rec.update({"messages": m, "seconds": end["seconds"], "rps": m / end["seconds"], "requests": m,
                "errors_total": end["errors"], "server_cpu_s": w["cpu_ms"] / 1000,
                "server_ticks_s": w["ticks_ms"] / 1000,
                "server_busy": w["cpu_ms"] / w["wall_ms"],
                "server_cpu_us_per_msg": w["cpu_ms"] * 1000 / m if m else None,
                "loadgen_busy": (lg1 - lg0) / 1e6 / w["wall_ms"]})
    if rec["loadgen_busy"] >= measure.LOADGEN_BOUND:
        rec["flags"].append("load-generator-bound")


def summary(m):
    """The progress line's headline of a live measurement."""
    if not m.get("ok"):
        return f"ERROR: {m.get('error')}"
    if m["live"] == "sse":
        return (f"{m['streams']:,} streams ({m['failed']} failed) open in {m['open_ms'] / 1000:.1f} s; "
                f"{m['kib_per_stream']:.2f} KiB/stream (RSS {m['rss_before_kb'] / 1024:.1f} -> "
                f"{m['rss_open_kb'] / 1024:.1f} -> {m['rss_closed_kb'] / 1024:.1f} MiB after close); broadcast: "
                f"server CPU {m['broadcast_cpu_ms']:.1f} ms, last client {m['broadcast_last_ms']:.1f} ms; "
                f"idle CPU {m['idle_cpu_ms_per_s']:.1f} ms/s; errors {m['errors_total']}"
                + (" [" + ", ".join(m["flags"]) + "]" if m["flags"] else ""))
    return (f"{m['rps']:,.0f} msg/s, server {m['server_cpu_us_per_msg']:.2f} us/msg "
            f"({m['server_busy'] * 100:.0f}% cpu), client {m['loadgen_busy'] * 100:.0f}% cpu, errors {m['errors_total']}"
            + (" [" + ", ".join(m["flags"]) + "]" if m["flags"] else ""))
