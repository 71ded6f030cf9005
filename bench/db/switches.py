#!/usr/bin/env python3
"""Where a server's threads switch and wake each other: reads `perf script -F
comm,tid,event,trace,ip,sym,dso` of a recording of sched:sched_switch and sched:sched_wakeup
with call chains (perf record -g -p SERVER; bench/db/run --call-graph) and prints, per request,
the commonest call chains of each kind:

- a switch: the thread that left its core (by name, numbers dropped), how (the system call it
  slept in: futex, epoll_wait, sched_yield...; or "preempted" when it was still runnable), and
  the first user frames under that call (jitted frames named through the runtime's perf map);
- a wake-up made by a server thread: the waker, the thread it woke, the system call it woke it
  from (futex wake, a socket write, ...) and the waker's first user frames.

  switches.py LABEL REQUESTS < perf-script-output
"""
import collections
import re
import sys

HEADER = re.compile(r"^\s*(.*?)\s+(\d+)\s+(sched:sched_\w+):\s*(.*)$")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")
SKIP_DSOS = ("libc.so.6", "libpthread", "ld-linux")


def group(name):
    return re.sub(r"\s*\d+$", "", name.strip())


def short(sym, dso):
    # jitted: "instance void [System.Private.CoreLib] System.Threading.Foo+Bar::Baz(int32)[Optimized]"
    m = re.search(r"\]\s+([^\s(]+)::([^\s(\[]+)", sym)
    if m:
        cls = m.group(1).split(".")[-1]
        return f"{cls}::{m.group(2)}"
    if sym in ("[unknown]", ""):
        return "?" + dso.rsplit("/", 1)[-1]
    return re.sub(r"\(.*", "", sym)[:60]


def syscall_of(kernel):
    for sym in kernel:
        m = re.match(r"(?:__x64_sys_|__do_sys_|__se_sys_)(\w+)", sym)
        if m:
            return m.group(1)
    for sym in kernel:
        if sym.startswith(("irqentry_exit", "asm_sysvec", "asm_common_interrupt", "exit_to_user_mode")):
            return "interrupt"
    return "kernel"


def events(lines):
    header, frames = None, []
    for line in lines:
        if not line.strip():
            if header:
                yield header, frames
            header, frames = None, []
            continue
        if header is None:
            m = HEADER.match(line)
            if m:
                header = m.groups()
            continue
        f = FRAME.match(line)
        if f:
            frames.append((f.group(1).split("+0x")[0], f.group(2)))
    if header:
        yield header, frames


label = sys.argv[1] if len(sys.argv) > 1 else ""
requests = max(int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else 1, 1)
switches, wakeups = collections.Counter(), collections.Counter()
by_how, total_switches = collections.Counter(), 0
for (comm, _tid, event, trace), frames in events(sys.stdin):
    kernel = [s for s, d in frames if "kernel" in d]
    user = [short(s, d) for s, d in frames if "kernel" not in d and not any(x in d for x in SKIP_DSOS)]
    libc = [short(s, d) for s, d in frames if "kernel" not in d and any(x in d for x in SKIP_DSOS)]
    chain = " < ".join(user[:4]) or ("libc: " + " < ".join(libc[:2]) if libc else "-")
    how = syscall_of(kernel)
    if event == "sched:sched_switch":
        state = re.search(r"prev_state=(\S+)", trace)
        if state and state.group(1).startswith("R"):
            how = "preempted" + ("" if how in ("interrupt", "kernel") else f" in {how}")
        switches[(group(comm), how, chain)] += 1
        by_how[(group(comm), how)] += 1
        total_switches += 1
    else:
        wakee = re.search(r"comm=(.*?) pid=", trace)
        wakeups[(group(comm), group(wakee.group(1)) if wakee else "?", how, chain)] += 1

print(f"  {label}: {total_switches / requests:.2f} switches/req by thread and how: "
      + ", ".join(f"{t} {h} {n / requests:.2f}" for (t, h), n in by_how.most_common(8)))
for (thread, how, chain), n in switches.most_common(10):
    print(f"    switch {n / requests:6.3f}/req  {thread} [{how}] {chain}")
for (waker, wakee, how, chain), n in wakeups.most_common(10):
    print(f"    wake   {n / requests:6.3f}/req  {waker} -> {wakee} [{how}] {chain}")
