"""One measurement: run a load tool against a running subject and record what
the tool saw plus what the server and the load generator cost.

Server and load generator are pinned to different cores by the caller; the
load tool's CPU time comes from wait4()'s rusage, the server's from /proc.
"""
import os
import signal
import subprocess
import tempfile
import threading
import time

import bodies
import procs
import probe

LOADGEN_CORE = "1"

# A run whose load tool kept its core this busy was capped by the tool, not the server.
LOADGEN_BOUND = 0.90
# Other processes (not the server, not the load tool) using this much of a core.
OTHER_LOAD = 0.15
# The hypervisor took this share of a core away (a noisy neighbour).
STEAL = 0.05


def run_tool(argv, timeout, env=None, cwd=None):
    """Runs a load tool on the load-generator core. Returns
    (output, cpu_seconds, wall_seconds, exit_code, timed_out)."""
    argv = ["taskset", "-c", LOADGEN_CORE, *argv]
    timed_out = threading.Event()
    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True)

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return text, usage.ru_utime + usage.ru_stime, wall, proc.returncode, timed_out.is_set()


class PollingIdle:
    """Holds /dev/cpu_dma_latency at 0 (the kernel's PM QoS: idle CPUs poll instead of halting)
    while a run lasts (the runner holds it). Wherever one request is in flight at a time (one
    connection, a new connection at a time, a paced load) the cores idle between requests; on a
    virtual machine a halted vCPU can take milliseconds to be woken by the host (measured here:
    p99 10.4 ms for a C server at 10,000 req/s paced, halting; 0.34 ms polling), which would be
    charged to the server. What latency-minded set-ups do (tuned's latency-performance profile).
    `held` says whether it took (it needs root)."""

    PATH = "/dev/cpu_dma_latency"

    def __init__(self):
        self.fd = None
        self.held = False

    def __enter__(self):
        try:
            self.fd = os.open(self.PATH, os.O_WRONLY)
            os.write(self.fd, (0).to_bytes(4, "little", signed=True))
            self.held = True
        except OSError:
            self.fd = None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # closing the file ends the request
        return False


def measure(scenario, port, mode, sid, dotnet, log_path, timeout):
    """Warm-up (discarded), then the measured run. Returns a dict of results."""
    rec = {"scenario": scenario.name, "ok": False, "error": None}
    cmd = scenario.command(port, mode)
    rec["command"] = cmd
    warm = scenario.warmup_command(port, mode)
    if warm:
        run_tool(warm, timeout)

    gc0 = probe.debug_gc(port) if dotnet else None
    srv0 = procs.tree_cpu(sid) if sid else 0.0
    sw0 = procs.thread_switches(sid) if sid else None
    snap0 = procs.cpu_snapshot_all()
    cores0 = procs.core_busy()

    sampler = procs.RssSampler(sid) if sid else None
    if sampler:
        sampler.__enter__()
    try:
        text, lg_cpu, wall, rc, timed_out = run_tool(cmd, timeout)
    finally:
        if sampler:
            sampler.__exit__(None, None, None)

    cores1 = procs.core_busy()
    snap1 = procs.cpu_snapshot_all()
    srv1 = procs.tree_cpu(sid) if sid else 0.0
    sw1 = procs.thread_switches(sid) if sid else None
    gc1 = probe.debug_gc(port) if dotnet else None

    with open(log_path, "w") as f:
        f.write(" ".join(cmd) + "\n\n" + text)

    exclude = set(procs.session_pids(sid)) if sid else set()
    exclude.add(os.getpid())
    other, other_top = procs.other_cpu(snap0, snap1, exclude)
    busy = procs.core_busy_fraction(cores0, cores1)

    rec.update({
        "wall_s": wall,
        "exit_code": rc,
        "loadgen_cpu_s": lg_cpu,
        "loadgen_busy": lg_cpu / wall if wall else None,
        "server_cpu_s": (srv1 - srv0) if sid else None,
        "server_busy": ((srv1 - srv0) / wall) if sid and wall else None,
        "other_cpu_s": other,
        "other_busy": other / wall if wall else None,
        "other_top": other_top,
        "core_busy": busy,
        "peak_rss_kb": sampler.peak_kb if sampler else None,
        "switches": procs.switches_between(sw0, sw1) if sid else None,
    })
    if timed_out:
        rec["error"] = f"timed out after {timeout:.0f} s"
    try:
        rec.update(scenario.parse(text))
        rec["ok"] = not timed_out
    except (ValueError, KeyError) as e:
        rec["error"] = rec["error"] or str(e)

    req = rec.get("requests") or 0
    if sid and req:
        # CPU milliseconds per 1000 requests = CPU seconds * 1e6 / requests.
        rec["server_cpu_ms_per_1k"] = rec["server_cpu_s"] * 1e6 / req
    if sid and req:
        rec["switches_per_request"] = {"voluntary": rec["switches"]["voluntary"] / req,
                                       "involuntary": rec["switches"]["involuntary"] / req}
    if req:
        rec["loadgen_cpu_ms_per_1k"] = lg_cpu * 1e6 / req
    if getattr(scenario, "body", None):
        # The body group: the payload of each request (before chunked framing), and the server's
        # CPU seconds per GiB of payload in the answered requests.
        rec["payload_bytes"] = bodies.payload_bytes(scenario.body)
        if sid and req:
            rec["server_cpu_s_per_gib"] = rec["server_cpu_s"] * bodies.GIB / (req * rec["payload_bytes"])
    if gc0 and gc1 and req:
        rec["gc"] = {
            "alloc_bytes_per_request": (gc1["allocatedBytes"] - gc0["allocatedBytes"]) / req,
            "gen0": gc1["gen0"] - gc0["gen0"],
            "gen1": gc1["gen1"] - gc0["gen1"],
            "gen2": gc1["gen2"] - gc0["gen2"],
        }
    flags = []
    if rec["loadgen_busy"] is not None and rec["loadgen_busy"] >= LOADGEN_BOUND:
        flags.append("load-generator-bound")
    if rec["other_busy"] is not None and rec["other_busy"] >= OTHER_LOAD:
        flags.append("other-load")
    if max((c["steal"] for c in busy.values()), default=0) >= STEAL:
        flags.append("steal")
    # Open loop: the server answered fewer than the rate asked for (it fell behind).
    if rec.get("target_rps") and rec.get("rps") is not None and rec["rps"] < 0.95 * rec["target_rps"]:
        flags.append("below-rate")
    rec["flags"] = flags
    return rec
