"""The report's section on system calls and context switches per request.

Context switches come from the measured runs themselves (read from /proc, no tracing):
medians over repetitions. System calls come from the probes (syscalls.py): one short
separate run per subject and scenario, in the first repetition, with perf counting the
server's system calls; their req/s is shown only to say how much the counting slowed
the server down.
"""
import aggregate
import measure
from fmt import n0, per_req, ratio, table

TOP = 5  # system calls shown by name per subject and scenario


def section(res, subjects, scenarios):
    info = res.get("syscalls")
    servers = [s for s in subjects if res["subjects"][s]["kind"] != "none"]
    if info is None or not servers:
        return ""  # results.json of a run from before these counts existed
    lines = ["## System calls and context switches per request", ""]
    lines += _switches(res, servers, scenarios)
    if not info.get("enabled"):
        lines += ["", f"System calls were not counted in this run: {info.get('error')}."]
        return "\n".join(lines)
    lines += [""] + _explain(info)
    matrix = _syscall_matrix(res, servers, scenarios)
    if matrix:
        lines += ["", matrix]
    for sc in scenarios:
        detail = _scenario(res, sc, servers)
        if detail:
            lines += ["", detail]
    return "\n".join(lines)


def _switches(res, servers, scenarios):
    rows = []
    for s in servers:
        cells = [res["subjects"][s]["title"]]
        for sc in scenarios:
            r = aggregate.row(res, s, sc)
            if not r or r["switches_vol"] is None:
                cells.append("–")
            else:
                cells.append(f"{per_req(r['switches_vol'])} + {per_req(r['switches_invol'])}")
        rows.append(cells)
    exited = sum((aggregate.row(res, s, sc) or {}).get("threads_exited") or 0 for s in servers for sc in scenarios)
    return [
        "### Context switches per request (measured runs)",
        "",
        "Voluntary + involuntary context switches per response, summed over every thread of every process of the "
        "server (`/proc/<pid>/task/<tid>/status` before and after each measured run; nginx: master and worker "
        "processes; .NET and Node.js: every thread of the process), median over repetitions. Voluntary: a thread "
        "gave up the core to wait (for a socket, a lock, a timer); involuntary: a thread left the core while still "
        "runnable: preempted (time slice up, another thread woke up, other processes on the core), or it called "
        "`sched_yield` and another thread was ready (Linux counts such a yield as involuntary). These come from the measured runs, untraced; the same figures are in the "
        "scenario tables." + (f" {exited} thread(s) exited during measured runs; their switches since the start "
                              "of the run are missing from these sums." if exited else ""),
        "",
        table(["Subject"] + list(scenarios), rows),
    ]


def _explain(info):
    names = ", ".join(info.get("names") or [])
    return [
        "### System calls per request (separate traced run: its req/s is not comparable)",
        "",
        f"Measured in a separate short run per subject and scenario, after the session's measurements, in repetition "
        f"{', '.join(map(str, info.get('reps') or [1]))} only: the same load command, shortened "
        f"({info['seconds']} s for wrk, autocannon and hammer; {info['ab_requests']:,} requests for ab; one run of "
        f"time-seq), while `perf stat -p <every process of the server>` ({info.get('tool') or 'perf'}) counts the "
        f"kernel's syscall tracepoints in all their threads, and in threads started meanwhile. Counting is switched "
        f"on just before the load tool starts and off when it has finished (perf's control FIFO), so the counts "
        f"include the load tool's start-up and exit, when the server idles (timers; a few calls). The total is "
        f"`{info.get('total_event')}` (every system call); by name: {names}; the rest is \"other\". perf counts in "
        f"the kernel, without stopping the server per call as strace does, but the server runs somewhat slower "
        f"meanwhile, which can change how many events one `epoll_wait` returns and so the calls per request; the "
        f"traced run's req/s and its ratio to the measured median are shown for that reason (⚐: other processes "
        f"used {measure.OTHER_LOAD:.0%} of a core or more during the probe or a measured run, so the ratio says more "
        f"about them than about tracing). Calls made by the "
        f"kernel on the server's behalf (softirq network work) are not system calls and are not counted; on "
        f"loopback a `sendto` also does the receiving side's work.",
    ]


def _syscall_matrix(res, servers, scenarios):
    rows = []
    for s in servers:
        cells = [res["subjects"][s]["title"]]
        for sc in scenarios:
            p = aggregate.syscall_probe(res, s, sc)
            cells.append(per_req(p["per_request"]) if p and p.get("ok") else ("failed" if p else "–"))
        rows.append(cells)
    if not any(c != "–" for r in rows for c in r[1:]):
        return ""
    return "System calls per request, all names:\n\n" + table(["Subject"] + list(scenarios), rows)


def _scenario(res, sc, servers):
    rows = []
    for s in servers:
        p = aggregate.syscall_probe(res, s, sc)
        if not p:
            continue
        title = res["subjects"][s]["title"]
        if not p.get("ok"):
            rows.append([title, f"failed: {p.get('error')}", "", "", "", "", ""])
            continue
        req = p["requests"]
        top = " · ".join(f"{name} {per_req(n / req)}" for name, n in list(p["calls"].items())[:TOP])
        measured = aggregate.row(res, s, sc)
        busy = (p.get("other_busy") or 0) >= measure.OTHER_LOAD or (measured and measured["flags"].get("other-load"))
        rows.append([title, per_req(p["per_request"]), top or "–", per_req(p["other"] / req), n0(req),
                     f"{n0(p['rps'])} ({ratio(p['rps'], measured['rps'] if measured else None)})" + (" ⚐" if busy else ""),
                     f"{p.get('processes')} / {p.get('threads')}"])
    if not rows:
        return ""
    return "\n".join([
        f"#### {sc}",
        "",
        table(["Subject", "syscalls/req", f"top {TOP} by name, per request", "other/req", "requests traced",
               "traced req/s (÷ measured median)", "processes / threads"], rows,
              ["l", "r", "l", "r", "r", "r", "r"]),
    ])
