"""Process-tree bookkeeping from /proc: which processes belong to a subject,
their resident memory and CPU time, whether the port is free, and stopping them.

A subject is started as the leader of a new session (setsid), so every process
it forks (nginx's worker, for instance) carries its session id, even when
re-parented. "The process tree" below means "all processes of that session".
"""
import os
import signal
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("ascii", "replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def _stat_fields(pid):
    """Fields of /proc/<pid>/stat after the command name (field 3 onwards)."""
    text = _read(f"/proc/{pid}/stat")
    if text is None:
        return None
    return text[text.rindex(")") + 2:].split()


def all_pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def session_pids(sid):
    pids = []
    for pid in all_pids():
        f = _stat_fields(pid)
        # f[0] is field 3 (state), so the session id (field 6) is f[3].
        if f is not None and int(f[3]) == sid:
            pids.append(pid)
    return pids


def cpu_seconds(pid):
    """utime + stime + cutime + cstime of one process, in seconds (0 if gone)."""
    f = _stat_fields(pid)
    if f is None:
        return 0.0
    # Fields 14..17 are f[11..14].
    return sum(int(x) for x in f[11:15]) / CLK_TCK


def rss_kb(pid):
    f = _stat_fields(pid)
    if f is None:
        return 0
    return int(f[21]) * PAGE_KB  # field 24: rss in pages


def tree_cpu(sid):
    return sum(cpu_seconds(p) for p in session_pids(sid))


def tree_rss_kb(sid):
    return sum(rss_kb(p) for p in session_pids(sid))


def runtime_ns(pid):
    """CPU time of every thread of one process in nanoseconds: the sum of the first field of
    /proc/<pid>/task/<tid>/schedstat (the scheduler's sum_exec_runtime, user and system time
    together). Finer than /proc/<pid>/stat's clock ticks (10 ms), for short windows; a thread
    that exits takes its time with it."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return 0
    for tid in tids:
        text = _read(f"/proc/{pid}/task/{tid}/schedstat")
        if text:
            total += int(text.split()[0])
    return total


def tree_runtime_ns(sid):
    return sum(runtime_ns(p) for p in session_pids(sid))


def thread_switches(sid):
    """{(pid, tid): (voluntary, involuntary)} context switches of every thread of every
    process of the session, from /proc/<pid>/task/<tid>/status. A thread's counters
    start at zero when it is created and are lost from /proc when it exits."""
    out = {}
    for pid in session_pids(sid):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except (FileNotFoundError, ProcessLookupError):
            continue
        for tid in tids:
            text = _read(f"/proc/{pid}/task/{tid}/status")
            if text is None:
                continue
            vol = invol = 0
            for line in text.splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    vol = int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    invol = int(line.split()[1])
            out[(pid, int(tid))] = (vol, invol)
    return out


def switches_between(before, after):
    """Context switches between two thread_switches() readings: voluntary and involuntary
    summed over the threads alive at the end (those born in between count from zero),
    how many threads that was, and how many threads of the first reading had exited
    (their switches since the first reading are not counted)."""
    vol = invol = 0
    for key, (v, n) in after.items():
        v0, n0 = before.get(key, (0, 0))
        vol += v - v0
        invol += n - n0
    return {"voluntary": vol, "involuntary": invol, "threads": len(after),
            "threads_exited": sum(1 for key in before if key not in after)}


def cpu_snapshot_all():
    """pid -> cpu seconds for every process on the machine."""
    snap = {}
    for pid in all_pids():
        f = _stat_fields(pid)
        if f is not None:
            snap[pid] = sum(int(x) for x in f[11:15]) / CLK_TCK
    return snap


def other_cpu(before, after, exclude):
    """CPU seconds spent between two snapshots by processes not in `exclude`,
    and the biggest of them as (pid, seconds, name). Processes that appeared in
    between count from zero. An indicator of other work on the machine (another
    engineer's build, for instance)."""
    total = 0.0
    top = []
    for pid, cpu in after.items():
        if pid in exclude:
            continue
        d = max(0.0, cpu - before.get(pid, 0.0))
        total += d
        if d > 0.05:
            top.append((round(d, 2), pid, (_read(f"/proc/{pid}/comm") or "?").strip()))
    return total, sorted(top, reverse=True)[:3]


def core_busy():
    """Per-core (busy, total, steal) jiffies from /proc/stat, keyed by core number.
    Steal is time the hypervisor gave this virtual core to someone else."""
    cores = {}
    for line in _read("/proc/stat").splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            name, *vals = line.split()
            vals = [int(v) for v in vals]
            idle = vals[3] + vals[4]
            total = sum(vals[:8])
            cores[int(name[3:])] = (total - idle, total, vals[7])
    return cores


def core_busy_fraction(before, after):
    """{core: {"busy": fraction, "steal": fraction}} between two core_busy() readings."""
    out = {}
    for core, (busy, total, steal) in after.items():
        b0, t0, s0 = before.get(core, (0, 0, 0))
        span = total - t0
        out[core] = {"busy": (busy - b0) / span if span > 0 else 0.0,
                     "steal": (steal - s0) / span if span > 0 else 0.0}
    return out


def listening_on(port):
    """True if some socket listens on the TCP port (IPv4 or IPv6)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        text = _read(table)
        if not text:
            continue
        for line in text.splitlines()[1:]:
            parts = line.split()
            local, state = parts[1], parts[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                return True
    return False


def stop_session(sid, grace=5.0):
    """SIGTERM the whole session, then SIGKILL what is left. Returns True when
    no process of the session remains."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 3.0)):
        pids = session_pids(sid)
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            _reap(sid)
            if not session_pids(sid):
                return True
            time.sleep(0.05)
    return not session_pids(sid)


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


class RssSampler:
    """Samples the tree's RSS in a background thread; .peak_kb is the maximum seen."""

    def __init__(self, sid, interval=0.1):
        self.sid = sid
        self.interval = interval
        self.peak_kb = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        pids = session_pids(self.sid)
        refresh = 0
        while not self._stop.is_set():
            refresh += 1
            if refresh % 10 == 0:  # the tree rarely changes; rescan once a second
                pids = session_pids(self.sid)
            rss = sum(rss_kb(p) for p in pids)
            self.peak_kb = max(self.peak_kb, rss)
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak_kb = max(self.peak_kb, tree_rss_kb(self.sid))
