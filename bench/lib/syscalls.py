"""System calls per request: a short extra run of a scenario's load while `perf stat`
counts the system calls of the server's processes (all their threads, and threads they
start meanwhile) on the kernel's syscall tracepoints.

perf counts in the kernel (a counter per tracepoint and thread; nothing is copied out
per call), so the server slows down only a little. strace is not used: it stops the
traced thread twice per system call, and in a trial here Swoop on plaintext-c32 fell
from about 70,000 to 750 req/s under `strace -c -f`, with a different mix of calls
(its thread pool reacting to the slowdown). Still, the probe is a separate run from
the measured one, and its req/s is not comparable.

`raw_syscalls:sys_enter` gives the total; one `syscalls:sys_enter_<name>` tracepoint per
name in NAMES gives the breakdown; whatever the rest adds up to is "other". Not all 360
names: perf takes about 25 ms per tracepoint to detach (a grace period per tracepoint),
so all of them would add about 9 s to every probe.

Counting is switched on and off through perf's control FIFO around the load tool's
run, so perf's own start and stop are not in the window.
"""
import os
import select
import signal
import subprocess
import tempfile

import measure
import procs

TOTAL = "raw_syscalls:sys_enter"

# What an HTTP server on epoll (or io_uring) calls, plus the usual runtime noise
# (locks, memory, time, signals); anything else is counted as "other".
NAMES = (
    "accept", "accept4", "recvfrom", "recvmsg", "recvmmsg", "read", "readv", "pread64",
    "sendto", "sendmsg", "sendmmsg", "write", "writev", "sendfile64", "splice",
    "shutdown", "close", "socket", "setsockopt", "getsockopt", "getsockname", "getpeername",
    "ioctl", "fcntl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl", "poll", "ppoll",
    "io_uring_enter", "futex", "sched_yield", "nanosleep", "clock_nanosleep", "clock_gettime",
    "gettid", "getpid", "tgkill", "rt_sigprocmask", "mmap", "munmap", "madvise", "mprotect",
    "membarrier", "openat", "newfstatat", "statx", "getrandom",
)

# How long before perf must have answered a control command (it attaches to every
# thread first: a fraction of a second for a .NET server's 20-odd threads).
ACK_TIMEOUT = 30.0


def check():
    """Whether perf can count syscall tracepoints here. Returns (names, None) with the
    names of NAMES that have a tracepoint on this kernel, or ([], reason)."""
    try:
        listed = subprocess.run(["perf", "list", "--raw-dump", "tracepoint"], capture_output=True,
                                text=True, timeout=120)
    except FileNotFoundError:
        return [], "perf is not installed"
    except subprocess.TimeoutExpired:
        return [], "`perf list` did not answer within 120 s"
    have = set(listed.stdout.split())
    if TOTAL not in have:
        return [], "perf lists no syscall tracepoints (tracefs not mounted, or not allowed)"
    trial = subprocess.run(["perf", "stat", "-x,", "-e", TOTAL, "--", "true"], capture_output=True, text=True)
    counts, problems = _parse(trial.stderr)
    if trial.returncode != 0 or TOTAL not in counts:
        return [], f"perf cannot count {TOTAL}: " + (problems.get(TOTAL) or trial.stderr.strip()[-300:])
    return [n for n in NAMES if f"syscalls:sys_enter_{n}" in have], None


def version():
    try:
        out = subprocess.run(["perf", "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or None
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None


def probe_mode(mode):
    """The scenario settings of a probe: the same load, shorter (time-seq: one run)."""
    m = dict(mode)
    secs = mode["syscall_seconds"]
    m.update(wrk_seconds=secs, wrk_warmup=0, autocannon_seconds=secs, hammer_seconds=secs,
             ab_requests=mode["syscall_ab_requests"], time_runs=1)
    return m


def probe(scenario, port, mode, sid, names, log_path, timeout):
    """Runs the scenario's load once, shortened, with the session's processes counted.
    Returns a record: requests, rps, total and per-request calls, calls by name."""
    pm = probe_mode(mode)
    cmd = scenario.command(port, pm)
    rec = {"scenario": scenario.name, "ok": False, "error": None, "command": cmd}
    pids = procs.session_pids(sid)
    if not pids:
        rec["error"] = "no process of the server was left to count"
        return rec
    rec["processes"] = len(pids)
    rec["threads"] = sum(len(os.listdir(f"/proc/{p}/task")) for p in pids if os.path.isdir(f"/proc/{p}/task"))
    with tempfile.TemporaryDirectory(prefix="bench-perf-") as tmp:
        ctl, ack, out = (os.path.join(tmp, n) for n in ("ctl", "ack", "out"))
        os.mkfifo(ctl)
        os.mkfifo(ack)
        events = [TOTAL] + [f"syscalls:sys_enter_{n}" for n in names]
        argv = ["taskset", "-c", measure.LOADGEN_CORE, "perf", "stat", "-x,", "-o", out,
                *(a for e in events for a in ("-e", e)), "-p", ",".join(map(str, pids)),
                "-D", "-1", "--control", f"fifo:{ctl},{ack}"]
        log = open(log_path, "w")
        log.write(" ".join(argv) + "\n\n")
        log.flush()
        # O_RDWR so that opening a FIFO does not wait for perf to open the other end.
        ctl_fd, ack_fd = os.open(ctl, os.O_RDWR), os.open(ack, os.O_RDWR)
        perf = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        text = None
        try:
            _control(perf, ctl_fd, ack_fd, "enable")
            snap0 = procs.cpu_snapshot_all()
            text, lg_cpu, wall, rc, timed_out = measure.run_tool(cmd, timeout)
            snap1 = procs.cpu_snapshot_all()
            _control(perf, ctl_fd, ack_fd, "disable")
        except RuntimeError as e:
            rec["error"] = str(e)
        finally:
            _stop(perf)
            os.close(ctl_fd)
            os.close(ack_fd)
            log.write(f"\nperf exited with {perf.returncode}\n\n")
            if text is not None:
                log.write(" ".join(cmd) + "\n\n" + text)
            log.close()
        if rec["error"]:
            return rec
        with open(out) as f:
            counts, problems = _parse(f.read())
    if timed_out:
        rec["error"] = f"load tool timed out after {timeout:.0f} s"
        return rec
    if TOTAL not in counts:
        rec["error"] = f"perf gave no total ({problems.get(TOTAL, 'no line')})"
        return rec
    try:
        result = scenario.parse(text)
    except (ValueError, KeyError) as e:
        rec["error"] = str(e)
        return rec
    req = result.get("requests") or 0
    total = counts.pop(TOTAL)
    exclude = set(procs.session_pids(sid)) | {os.getpid(), perf.pid}
    other, _ = procs.other_cpu(snap0, snap1, exclude)
    calls = {k.removeprefix("syscalls:sys_enter_"): v for k, v in counts.items() if v}
    rec.update({
        "ok": bool(req),
        "error": None if req else "no request completed",
        "requests": req,
        "rps": result.get("rps"),
        "errors_total": result.get("errors_total"),
        "wall_s": wall,
        "loadgen_busy": lg_cpu / wall if wall else None,
        "other_busy": other / wall if wall else None,
        "exit_code": rc,
        "total": total,
        "calls": dict(sorted(calls.items(), key=lambda kv: -kv[1])),
        "other": max(0, total - sum(calls.values())),
        "per_request": total / req if req else None,
        "not_counted": sorted(problems),
    })
    return rec


def _control(perf, ctl_fd, ack_fd, command):
    """Sends enable/disable on perf's control FIFO and waits for its "ack"."""
    os.write(ctl_fd, (command + "\n").encode())
    waited = 0.0
    while waited < ACK_TIMEOUT:
        ready, _, _ = select.select([ack_fd], [], [], 0.2)
        if ready:
            if b"ack" in os.read(ack_fd, 64):
                return
        elif perf.poll() is not None:
            raise RuntimeError(f"perf exited with {perf.returncode} before it answered {command!r} (see its log)")
        waited += 0.2
    raise RuntimeError(f"perf did not answer {command!r} within {ACK_TIMEOUT:.0f} s")


def _stop(perf):
    """SIGINT makes perf stat print its counts and exit (detaching takes about 25 ms per
    tracepoint); SIGKILL if it hangs."""
    if perf.poll() is None:
        perf.send_signal(signal.SIGINT)
    try:
        perf.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(perf.pid, signal.SIGKILL)
        perf.wait()


def _parse(text):
    """perf stat -x, output: {event: count}, and {event: "<not counted>" or the like}."""
    counts = {}
    problems = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        value, event = fields[0], fields[2]
        if value.isdigit():
            counts[event] = int(value)
        elif value.startswith("<"):
            problems[event] = value
    return counts, problems
