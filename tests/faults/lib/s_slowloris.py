"""Scenario `slowloris`: 1,000 connections that drip a request head, or a request body, a byte
a second, kept at 1,000 (a cut one is replaced) while wrk measures ordinary traffic. Ordinary
p99 must stay within 2x of the undisturbed runs; every slow connection must be cut by its
timeout, with 408: the head by RequestHeadTimeout, the body by MinRequestBodyDataRate once
DataRateGracePeriod has passed. The slow clients are slowloris.c (C, epoll), or the Python
client below with --python-slowloris or without a C compiler.

wrk runs in windows, three undisturbed before the slow clients, three beside them, three
undisturbed after (repetitions, as the benchmark suite does); the verdict compares the median
p99 beside them with the median of the six undisturbed, and every window is reported. On two
cores a single window's p99 swings by up to 2x between runs with no slow client at all."""

import asyncio
import random
import resource
import shutil
import subprocess
import threading
import time
from pathlib import Path

from common import (CORES, Server, attacker_pin, cpu_seconds, mib, open_conn, percentile, quiet_close, rel, server_pin,
                    wrk, wrk_text, yield_to_load_tool, normal_priority)

ATTACKER_CORE = "on wrk's core" if CORES < 3 else "on a core of its own"
WINDOWS = 3  # wrk windows in each phase: undisturbed before, beside the slow clients, after


def wrk_windows(scn, port, seconds, what):
    """WINDOWS runs of wrk -c32 on / in a row, each `seconds` long."""
    return [wrk(scn, port, "/", 32, seconds, f"{what}, window {i + 1} of {WINDOWS}") for i in range(WINDOWS)]


def merged(runs):
    """Windows as one result: medians of their rates and percentiles (the lower middle one of an
    even count), the worst max, all errors."""
    def med(key):
        return percentile([r[key] for r in runs], 50)
    return {
        "requests": sum(r["requests"] for r in runs),
        "rps": med("rps"),
        "errors": sum(r["errors"] for r in runs),
        "p50_ms": med("p50_ms"),
        "p90_ms": med("p90_ms"),
        "p99_ms": med("p99_ms"),
        "max_ms": max(r["max_ms"] for r in runs),
        "p99_windows_ms": [r["p99_ms"] for r in runs],
    }

C_SOURCE = Path(__file__).resolve().parent.parent / "slowloris.c"
FLOOR_SOURCE = Path(__file__).resolve().parent.parent / "floor.c"

TITLE = "1,000 slowloris connections beside wrk"

HEAD_START = b"GET /slowloris HTTP/1.1\r\nHost: faults\r\nX-Drip: "
BODY_START = b"POST /slowloris HTTP/1.1\r\nHost: faults\r\nContent-Length: 100000\r\n\r\n"


class Attack:
    def __init__(self, port, count, limit):
        self.port = port
        self.count = count
        self.limit = limit  # a connection not cut after this many seconds counts as not cut
        self.active = True
        self.records = []  # (kind, seconds from first byte to cut, first bytes received, outcome)
        self.open_now = 0
        self.failed_opens = []

    async def drip(self, kind, stagger):
        await asyncio.sleep(stagger)
        while self.active:
            try:
                reader, writer = await open_conn(self.port, limit=65536)
            except OSError as e:
                self.failed_opens.append(f"{type(e).__name__} {e}")
                await asyncio.sleep(0.5)
                continue
            self.open_now += 1
            writer.write(HEAD_START if kind == "head" else BODY_START)
            t_first = time.monotonic()
            got = b""
            outcome = "not cut"
            phase = random.random()  # spreads the drips over the second
            try:
                while time.monotonic() - t_first < self.limit:
                    try:
                        data = await asyncio.wait_for(reader.read(4096), timeout=phase or 1.0)
                        phase = 0
                        if not data:
                            outcome = "closed"
                            break
                        got += data
                        continue
                    except asyncio.TimeoutError:
                        phase = 0
                    writer.write(b"a")
                    await writer.drain()
            except (ConnectionResetError, BrokenPipeError):
                outcome = "reset"
            cut_after = time.monotonic() - t_first
            self.open_now -= 1
            self.records.append((kind, cut_after, got[:12].decode("latin-1"), outcome))
            quiet_close(writer)
            if outcome == "not cut":
                return


def build_c(scn, source, name, what):
    """Compiles one of the C programs beside the scenarios; None when there is no C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    out = scn.log_dir / name
    argv = [cc, "-O2", "-o", str(out), str(source)]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        scn.note(f"could not compile {rel(source)}: {done.stderr.strip()[:300]}")
        return None
    scn.command([cc, "-O2", "-o", name, rel(source)], what)
    return out


def build_c_attacker(scn):
    """slowloris.c: a C client, whose CPU use is a small fraction of the Python client's (on
    two cores it shares wrk's)."""
    return build_c(scn, C_SOURCE, "slowloris", "the slow client (C)")


class FloorServer(Server):
    """floor.c on the server's core: the smallest server that cuts the slow clients as Swoop's
    defaults do (one thread, no runtime). What the same attack does to its p99 on this machine
    is the floor: the share of the slow clients' cost that no server avoids here (their own
    client's CPU and the kernel's work for their connections, on the same two cores)."""

    def __init__(self, scn, binary, port, head_timeout, grace):
        super().__init__(scn, "fault", port, label="floor")
        self.argv = server_pin() + [str(binary), str(port), str(head_timeout), str(grace)]


def floor_phase(scn, attacker, port, head_timeout, grace, wrk_seconds, warm_seconds, count):
    """The same windows, alone and beside the same slow clients, against floor.c; None
    without a C compiler."""
    binary = build_c(scn, FLOOR_SOURCE, "floor", "the floor server (C)")
    if binary is None:
        return None
    floor = FloorServer(scn, binary, port, head_timeout, grace).start()
    a = None
    try:
        wrk(scn, port, "/warm", 32, 3, "floor server: warm-up (discarded)")
        alone = wrk_windows(scn, port, wrk_seconds, "floor server alone")
        scn.log(f"floor server alone: {'; '.join(map(wrk_text, alone))}")
        a = CAttack(scn, attacker, port, count, head_timeout + 10)
        time.sleep(2.0)
        wrk(scn, port, "/warm", 32, warm_seconds, f"floor server: warm-up beside {count} slow connections (discarded)")
        beside = wrk_windows(scn, port, wrk_seconds, f"floor server beside {count} slow connections")
        scn.log(f"floor server beside the slow connections: {'; '.join(map(wrk_text, beside))}")
    finally:
        # No replacements, then the server goes: the dripped heads need not wait for their timeout.
        if a is not None:
            a.proc.stdin.write("stop\n")
            a.proc.stdin.flush()
        floor.terminate(5)
        if a is not None:
            try:
                a.proc.wait(30)
            except subprocess.TimeoutExpired:
                a.proc.kill()
    return merged(alone), merged(beside)


class CAttack:
    """The C client as a child process (on wrk's core, or its own with three cores or more);
    its lines become records."""

    def __init__(self, scn, binary, port, count, limit):
        argv = attacker_pin() + [str(binary), str(port), str(count), str(limit)]
        scn.command(argv, f"{count} slow connections (stopped by a line on stdin)")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.records = []
        self.open_now = 0
        self.failed_opens = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.split()
            if parts[:1] == ["S"]:
                self.open_now = int(parts[1])
                self.failed_opens = ["open failed"] * int(parts[2])
            elif parts[:1] == ["R"]:
                kind, secs, outcome, answer = parts[1], float(parts[2]), parts[3], parts[4]
                got = "" if answer == "-" else bytes.fromhex(answer).decode("latin-1")
                self.records.append((kind, secs, got, outcome.replace("-", " ")))

    def cpu(self):
        return cpu_seconds(self.proc.pid) or 0.0

    def stop(self, timeout):
        self.proc.stdin.write("stop\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout)
        self.reader.join(5)


def summarize(records, kind):
    mine = [r for r in records if r[0] == kind]
    times = [r[1] for r in mine if r[3] != "not cut"]
    answers = {}
    for r in mine:
        key = f"{r[3]}, answer {r[2].strip()[:12] or 'none'}"
        answers[key] = answers.get(key, 0) + 1
    return mine, times, answers


def run(scn, args):
    if scn.quick:
        # The warm-up beside the slow clients (2 + 7 s) takes in their first cuts of both kinds
        # (bodies at about 3 s, heads at about 8 s), as the full run's takes in the bodies'.
        head_timeout, grace, wrk_seconds, warm_seconds = 8.0, 2.0, 3, 7
        server = Server(scn, "fault", args.port, ["--head-timeout", head_timeout, "--grace", grace])
        scn.note("quick: tests/faults/FaultServer with RequestHeadTimeout 8 s and DataRateGracePeriod 2 s")
    else:
        # 2 s + 8 s warm-up + 3 x 5 s measured: the dripped heads (30 s timeout) stay open throughout.
        head_timeout, grace, wrk_seconds, warm_seconds = 30.0, 5.0, 5, 8
        server = Server(scn, "echo", args.port)
    server.start()
    count = 1000
    try:
        wrk(scn, args.port, "/warm", 32, 5 if scn.quick else 10, "warm-up (discarded)")
        rss0, fd0 = server.settle(1)
        base = wrk_windows(scn, args.port, wrk_seconds, "wrk alone (undisturbed)")
        scn.log(f"undisturbed wrk: {'; '.join(map(wrk_text, base))}")

        def attack_in_c(binary):
            a = CAttack(scn, binary, args.port, count, head_timeout + 10)
            time.sleep(2.0)
            # The first body cuts come after the grace period: a warm-up run beside them lets
            # the JIT compile the code the slow clients reach (a one-time cost, not a
            # steady-state one; a native AOT build has none).
            wrk(scn, args.port, "/warm", 32, warm_seconds, f"warm-up beside {count} slow connections (discarded)")
            scn.log(f"{a.open_now} slow connections open; wrk starts")
            peak_rss = server.rss()
            cpu0, t0 = a.cpu(), time.monotonic()
            during = wrk_windows(scn, args.port, wrk_seconds, f"wrk beside {count} slow connections")
            scn.log(f"wrk beside the slow connections: {'; '.join(map(wrk_text, during))}; {a.open_now} slow open")
            peak_rss = max(peak_rss, server.rss())
            a.client_cpu = 100 * (a.cpu() - cpu0) / (time.monotonic() - t0)
            fds_during = server.fds()
            a.stop(head_timeout + 20)
            return a, during, peak_rss, fds_during

        async def attack():
            # The slow clients share wrk's core: they give way to wrk (nice 10), so that wrk's
            # latencies measure the server beside them, not wrk waiting behind them.
            lowered = yield_to_load_tool()
            scn.note("the slowloris client runs at nice 10 on wrk's core" if lowered else
                     "could not lower the slowloris client's priority: it competes with wrk for its core")
            a = Attack(args.port, count, head_timeout + 10)
            tasks = [asyncio.create_task(a.drip("head" if i % 2 == 0 else "body", i / count))
                     for i in range(count)]
            await asyncio.sleep(2.0)
            scn.log(f"{a.open_now} slow connections open; wrk starts")
            peak_rss = server.rss()
            cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
            during = await asyncio.to_thread(
                wrk_windows, scn, args.port, wrk_seconds, f"wrk beside {count} slow connections"
            )
            scn.log(f"wrk beside the slow connections: {'; '.join(map(wrk_text, during))}; {a.open_now} slow open")
            peak_rss = max(peak_rss, server.rss())
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            a.client_cpu = 100 * (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / (time.monotonic() - t0)
            fds_during = server.fds()
            a.active = False
            await asyncio.wait_for(asyncio.gather(*tasks), head_timeout + 20)
            return a, during, peak_rss, fds_during

        binary = None if getattr(args, "python_slowloris", False) else build_c_attacker(scn)
        if binary:
            client = "C"
            scn.note(f"the slow client is {rel(C_SOURCE)} (epoll, one thread) {ATTACKER_CORE}")
            a, during, peak_rss, fds_during = attack_in_c(binary)
        else:
            client = "Python"
            a, during, peak_rss, fds_during = asyncio.run(attack())
            normal_priority()
        rss1, fd1 = server.settle(2)
        # Undisturbed again, now that every slow connection is gone: the reference is the
        # median of all six undisturbed windows, before and after.
        base2 = wrk_windows(scn, args.port, wrk_seconds, "wrk alone again (undisturbed, after)")
        scn.log(f"undisturbed again: {'; '.join(map(wrk_text, base2))}")
        ref, during = merged(base + base2), merged(during)
        base, base2 = merged(base), merged(base2)
        floor = floor_phase(scn, binary, args.port + 1, head_timeout, grace, wrk_seconds, warm_seconds,
                            count) if binary else None

        heads, head_times, head_answers = summarize(a.records, "head")
        bodies, body_times, body_answers = summarize(a.records, "body")
        head_lo, head_hi = head_timeout - 1.2, head_timeout + 2.5
        # The rule: no cut before the grace period has passed, and a cut within about two beats
        # after it. The client starts its clock before the server can start its own (the head
        # must arrive first), so a cut seen before `grace` was a cut before the grace ended.
        body_lo, body_hi = grace - 0.05, grace + 3.0
        head_bad = [r for r in heads if not (r[3] != "not cut" and head_lo <= r[1] <= head_hi)]
        body_early = [r for r in bodies if r[3] != "not cut" and r[1] < body_lo]
        body_late = [r for r in bodies if not (r[3] != "not cut" and r[1] <= body_hi)]
        no_408 = [r for r in heads if not r[2].startswith("HTTP/1.1 408")]

        def spread(ts):
            return (f"min {min(ts):.1f} s, median {percentile(ts, 50):.1f} s, max {max(ts):.1f} s"
                    if ts else "none")

        scn.number("slow_connections", count)
        scn.number("head_timeout_s", head_timeout)
        scn.number("grace_s", grace)
        scn.number("head_connections", len(heads))
        scn.number("body_connections", len(bodies))
        scn.number("head_cut_after_s", spread(head_times))
        scn.number("body_cut_after_s", spread(body_times))
        scn.number("head_outcomes", head_answers)
        scn.number("body_outcomes", body_answers)
        scn.number("slowloris_client_cpu_pct", round(a.client_cpu, 1))
        scn.number("slowloris_client", client)
        scn.note(f"the slowloris client ({client}, {ATTACKER_CORE}) used {a.client_cpu:.1f}% of that core during wrk")
        scn.number("wrk_undisturbed", base)
        scn.number("wrk_undisturbed_after", base2)
        scn.number("wrk_beside_slowloris", during)
        scn.number("rss_mib", {"before": mib(rss0), "peak": mib(peak_rss), "after": mib(rss1)})
        scn.number("fds", {"before": fd0, "during": fds_during, "after": fd1})

        ratio = during["p99_ms"] / ref["p99_ms"] if ref["p99_ms"] else float("inf")
        scn.check("ordinary traffic: no errors", during["errors"] == 0 and base["errors"] + base2["errors"] == 0,
                  f"undisturbed {base['errors']} and {base2['errors']}, beside slowloris {during['errors']}")
        def windows(r):
            return ", ".join(f"{x:.2f}" for x in r["p99_windows_ms"])

        f_ratio = None
        if floor:
            f_alone, f_beside = floor
            f_ratio = f_beside["p99_ms"] / f_alone["p99_ms"] if f_alone["p99_ms"] else float("inf")
            scn.number("floor_alone", f_alone)
            scn.number("floor_beside_slowloris", f_beside)
            floor_text = (f"; the floor server (tests/faults/floor.c) beside the same slow clients: "
                          f"{f_beside['p99_ms']:.2f} ms vs {f_alone['p99_ms']:.2f} ms ({f_ratio:.2f}x; windows "
                          f"{windows(f_beside)} vs {windows(f_alone)})")
        else:
            floor_text = "; no floor server (no C compiler)"
        # Sub-millisecond p99s on a quiet machine move with the slow client itself (it shares
        # wrk's core): the C floor server, beside the same slow clients, shows what the rig alone
        # costs. Within 2x, or no worse than a quarter above the floor server's own slowdown.
        rig_bound = f_ratio is not None and ratio <= f_ratio * 1.25
        scn.check("ordinary traffic: p99 within 2x of undisturbed, or no worse than the floor server's slowdown "
                  "(medians of the windows)", ratio <= 2.0 or rig_bound,
                  f"{during['p99_ms']:.2f} ms vs {ref['p99_ms']:.2f} ms ({ratio:.2f}x; windows beside the slow "
                  f"clients {windows(during)} ms, undisturbed before {windows(base)}, after {windows(base2)}); "
                  f"{during['rps']} vs {ref['rps']} req/s" + floor_text)
        scn.check("1,000 slow connections were open during the run", fds_during - fd0 >= count,
                  f"server fds {fd0} -> {fds_during}; {len(a.failed_opens)} failed opens")
        scn.check(f"dripped heads cut at the head timeout ({head_lo:.1f}-{head_hi:.1f} s)", not head_bad,
                  f"{len(heads) - len(head_bad)}/{len(heads)} ({spread(head_times)}); "
                  f"outside: {[(round(r[1], 1), r[3]) for r in head_bad[:5]]}")
        scn.check("dripped heads answered 408", not no_408, f"{head_answers}")
        # A body cut before the handler started its response is answered 408 (then a half-close).
        body_no_408 = [r for r in bodies if r[3] != "not cut" and not r[2].startswith("HTTP/1.1 408")]
        scn.check("dripped bodies answered 408", not body_no_408, f"{body_answers}")
        scn.number("body_cut_before_grace", len(body_early))
        scn.check(f"dripped bodies cut within {body_hi:.1f} s", not body_late,
                  f"{len(bodies) - len(body_late)}/{len(bodies)} ({spread(body_times)}); "
                  f"later or never: {[(round(r[1], 1), r[3]) for r in body_late[:5]]}")
        scn.check(f"dripped bodies not cut before the {grace:.0f} s grace period ends (>= {body_lo:.2f} s)",
                  not body_early,
                  f"{len(body_early)}/{len(bodies)} cut earlier, the earliest at "
                  f"{min((r[1] for r in body_early), default=0):.2f} s")
        scn.check("descriptors back to before (+-2)", abs(fd1 - fd0) <= 2, f"{fd0} -> {fds_during} -> {fd1}")
    finally:
        rc, _ = server.terminate()
        scn.number("exit_code", rc)
