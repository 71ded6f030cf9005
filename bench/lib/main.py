"""bench/run: build the subjects, run every scenario against every subject in
interleaved repetitions (A B C A B C), and write the report.

Usage: bench/run [--quick | --full] [--only NAMES] [--reps N] [--port P]
                 [--no-build] [--no-micro] [--no-syscalls] [--no-publish] [--list]
NAMES is a comma-separated list of subject and/or scenario names (shell-style
wildcards allowed) and groups (`routing`); names that match subjects pick
subjects, names that match scenarios pick scenarios. A subject runs the chosen
scenarios of the tiers it serves.
"""
import argparse
import fnmatch
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone

import live
import machine
import measure
import procs
import scenarios as scen_mod
import session
import subjects as subj
import syscalls
import tools

BENCH = subj.BENCH
REPO = subj.REPO


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/run", description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="mode", action="store_const", const="quick", help="smoke run, a few minutes")
    g.add_argument("--full", dest="mode", action="store_const", const="full", help="the full run (default)")
    p.add_argument("--only", default="", help="comma-separated subject and/or scenario names (wildcards ok)")
    p.add_argument("--reps", type=int, help="repetitions (default: 1 quick, 3 full)")
    p.add_argument("--port", type=int, default=18080)
    p.add_argument("--no-build", action="store_true", help="use what .work/bin already has")
    p.add_argument("--no-micro", action="store_true", help="skip the BenchmarkDotNet micro-benchmarks")
    p.add_argument("--no-syscalls", action="store_true",
                   help="skip the system-call probes (a short perf-traced run per subject and scenario)")
    p.add_argument("--no-publish", action="store_true",
                   help="do not update docs/benchmarks.md and bench/results/latest even after a complete full run")
    p.add_argument("--baseline", metavar="REF",
                   help="a git ref whose samples/Hello the `swoop-baseline` subject runs (name it in --only)")
    p.add_argument("--list", action="store_true", help="list subjects and scenarios, then exit")
    a = p.parse_args(argv)
    a.mode = a.mode or "full"
    return a


def select(all_subjects, all_scenarios, only):
    """Returns (subjects, scenarios, micro_wanted, load_wanted)."""
    names = []
    for n in (n.strip() for n in only.split(",")):
        if n:
            names += scen_mod.GROUPS.get(n, [n])
    micro_wanted = not names or "micro" in names
    names = [n for n in names if n != "micro"]
    load_wanted = bool(names) or not only.strip()
    pick_subj = [s for s in all_subjects if any(fnmatch.fnmatch(s.name, n) for n in names)]
    pick_scen = [s for s in all_scenarios if any(fnmatch.fnmatch(s.name, n) for n in names)]
    unknown = [n for n in names
               if not any(fnmatch.fnmatch(s.name, n) for s in all_subjects)
               and not any(fnmatch.fnmatch(s.name, n) for s in all_scenarios)]
    if unknown:
        sys.exit(f"--only: no subject or scenario called {', '.join(unknown)} (see --list)")
    default_subjects = [s for s in all_subjects if not s.optional]
    return pick_subj or default_subjects, pick_scen or all_scenarios, micro_wanted, load_wanted


def open_capacity(subjects):
    """The slowest of `subjects` at plaintext-c32 in the published run (the median over its
    repetitions): the open-loop scenarios send 25, 50 and 75% of it."""
    try:
        with open(os.path.join(REPO, "docs", "benchmarks.md")) as f:
            stamp = f.readline().split("report:")[1].strip()
        with open(os.path.join(BENCH, "results", stamp, "results.json")) as f:
            run = json.load(f)
    except (OSError, IndexError, ValueError):
        return {"rps": 20000.0, "source": "no published run: a default"}
    medians = {}
    for s in subjects:
        values = sorted(m["rps"] for ses in run["sessions"] if ses["subject"] == s
                        for m in ses["measurements"] if m["scenario"] == "plaintext-c32" and m.get("ok"))
        if values:
            medians[s] = values[len(values) // 2]
    if not medians:
        return {"rps": 20000.0, "source": "no chosen subject in the published run: a default"}
    slowest = min(medians, key=medians.get)
    return {"rps": medians[slowest], "source": f"{slowest} at plaintext-c32 in run {stamp}"}


def fmt_time(seconds):
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


class Progress:
    """Prints where the run is and an ETA that learns from finished measurements."""

    SESSION_OVERHEAD = 14.0  # start, idle sample, endpoint checks, the settled sample (10 s), stop
    PROBE_OVERHEAD = 1.5    # perf attaching to the server and detaching, per system-call probe

    def __init__(self, plan, scenario_lists, mode, probes=False):
        self.plan = plan
        self.lists = scenario_lists
        self.mode = mode
        self.probes = probes  # system-call probes in the first repetition
        self.t0 = time.monotonic()
        self.seen = {}        # (subject, scenario) -> wall seconds of the last run
        self.probe_seen = {}  # (subject, scenario) -> wall seconds of its system-call probe
        self.session_extra = {}

    def estimate(self, subject, scenario):
        return self.seen.get((subject, scenario.name), scenario.estimate_seconds(self.mode))

    def probe_estimate(self, subject, scenario):
        return self.probe_seen.get((subject, scenario.name),
                                   scenario.estimate_seconds(syscalls.probe_mode(self.mode)) + self.PROBE_OVERHEAD)

    def remaining(self, from_index, skip_in_first=0, probes_done=0):
        total = 0.0
        for k, (rep, s) in enumerate(self.plan[from_index:]):
            if not s.build.get("ok"):
                continue
            lst = self.lists[s.name]
            start = skip_in_first if k == 0 else 0
            total += sum(self.estimate(s.name, sc) for sc in lst[start:])
            if self.probes and rep == 1 and s.kind != "none":
                total += sum(self.probe_estimate(s.name, sc) for sc in lst[probes_done if k == 0 else 0:])
            if k > 0 or skip_in_first == 0:
                passes = session.BODY_WARMUP_PASSES if "body" in s.tiers else 1
                total += self.SESSION_OVERHEAD + (2 * self.mode["session_warmup"] * passes if s.kind != "none" else 0)
        return total

    def line(self, text):
        elapsed = time.monotonic() - self.t0
        print(f"[{fmt_time(elapsed)}] {text}", flush=True)

    def eta_text(self, plan_index, done_in_session, probes_done=0):
        return f"ETA {fmt_time(self.remaining(plan_index, done_in_session, probes_done))}"


QUIET_THRESHOLD = 0.25   # cores used by other processes
QUIET_WAIT = 90.0        # seconds to wait for them at most, before each session


def other_load(seconds=1.0):
    """Cores' worth of CPU used by processes outside this run over `seconds`, and the biggest."""
    s0 = procs.cpu_snapshot_all()
    time.sleep(seconds)
    s1 = procs.cpu_snapshot_all()
    total, top = procs.other_cpu(s0, s1, {os.getpid()})
    return total / seconds, top


def wait_for_quiet(line):
    """Before a session: if other processes keep the machine busy, wait (up to
    QUIET_WAIT seconds) for them to calm down. Returns (load seen last, seconds waited)."""
    t0 = time.monotonic()
    load, top = other_load()
    announced = False
    while load > QUIET_THRESHOLD and time.monotonic() - t0 < QUIET_WAIT:
        if not announced:
            names = ", ".join(f"{name} ({cpu:.1f} s)" for cpu, _, name in top) or "?"
            line(f"other processes are using {load:.2f} cores ({names}); waiting up to {QUIET_WAIT:.0f} s for them")
            announced = True
        time.sleep(4.0)
        load, top = other_load()
    waited = time.monotonic() - t0 - 1.0
    if announced:
        line(f"other load now {load:.2f} cores after waiting {waited:.0f} s; going on")
    return load, max(0.0, waited)


def summary_line(m):
    if m.get("live"):
        return live.summary(m)
    if not m.get("ok"):
        return f"ERROR: {m.get('error')}"
    lat = m.get("lat_ms") or {}
    bits = [f"{m['rps']:,.0f} req/s"]
    if lat.get("p99") is not None:
        bits.append(f"p99 {lat['p99']:.2f} ms")
    elif lat.get("mean") is not None:
        bits.append(f"mean {lat['mean']:.3f} ms")
    bits.append(f"errors {m.get('errors_total', 0)}")
    if m.get("server_busy") is not None:
        bits.append(f"server {m['server_busy'] * 100:.0f}% cpu")
    bits.append(f"load tool {m['loadgen_busy'] * 100:.0f}% cpu")
    sw = m.get("switches_per_request")
    if sw:
        bits.append(f"ctx switches/req {sw['voluntary']:.2f} vol + {sw['involuntary']:.2f} invol")
    if m.get("flags"):
        bits.append("[" + ", ".join(m["flags"]) + "]")
    return ", ".join(bits)


def probe_line(p):
    if not p.get("ok"):
        return f"system calls: ERROR: {p.get('error')}"
    top = ", ".join(f"{name} {n / p['requests']:.2f}" for name, n in list(p["calls"].items())[:4])
    return (f"system calls {p['per_request']:.2f}/req ({top}); traced run {p['rps']:,.0f} req/s, "
            f"{p['requests']:,} requests")


def main(argv):
    args = parse_args(argv)
    all_subjects = subj.all_subjects()
    if args.list:
        print("subjects:")
        for s in all_subjects:
            print(f"  {s.name:20} {s.title}" + ("  (only when named in --only)" if s.optional else ""))
        print("scenarios:")
        for s in scen_mod.ALL:
            print(f"  {s.name:18} {s.title}" + (f"  ({s.tier}-tier subjects only)" if s.tier != "basic" else ""))
        print("groups:")
        for name, members in scen_mod.GROUPS.items():
            print(f"  {name:16} {', '.join(members)}")
        print("other:\n  micro            the BenchmarkDotNet micro-benchmarks (parser, response writing, route lookup)")
        return 0

    mode = dict(scen_mod.MODES[args.mode])
    if args.reps:
        mode["reps"] = args.reps
    chosen_subjects, chosen_scenarios, micro_wanted, load_wanted = select(all_subjects, scen_mod.ALL, args.only)
    if not load_wanted:
        chosen_subjects, chosen_scenarios = [], []
    complete = not args.only and args.mode == "full" and mode["reps"] >= 3

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d_%H%M") + ("" if args.mode == "full" else "-" + args.mode)
    log_dir = os.path.join(subj.LOGS, stamp)
    os.makedirs(log_dir, exist_ok=True)
    print(f"bench: {args.mode} run {stamp}; logs in {os.path.relpath(log_dir, REPO)}", flush=True)

    if os.cpu_count() < 2:
        print("warning: fewer than 2 cores; server and load generator will share one", flush=True)
        session.SERVER_CORE = "0"
        session.measure.LOADGEN_CORE = "0"

    # Which scenarios each subject runs: those of its tiers.
    lists = {}
    for s in chosen_subjects:
        lists[s.name] = [sc for sc in chosen_scenarios if s.runs(sc)]
    idle = [s.name for s in chosen_subjects if not lists[s.name]]
    if idle:
        print(f"not started (no chosen scenario of their tiers): {', '.join(idle)}", flush=True)
        chosen_subjects = [s for s in chosen_subjects if lists[s.name]]
    chosen_scenarios = [sc for sc in chosen_scenarios if any(sc in lists[s.name] for s in chosen_subjects)]

    # Build (unpinned, before anything is measured).
    t_build = time.monotonic()
    if not args.no_build:
        print("building (Release):", flush=True)
        need_hammer = any(s.tool in ("hammer", "time") for s in chosen_scenarios)
        if need_hammer:
            ok, secs, err = subj.publish("bench/hammer/Hammer.fsproj", os.path.join(subj.BIN, "hammer"),
                                         os.path.join(subj.LOGS, "build-hammer.log"))
            print(f"  hammer: {'ok' if ok else 'FAILED: ' + str(err)} ({secs:.0f} s)", flush=True)
    if any(s.tier == "static" for s in chosen_scenarios):
        subj.make_static_files()
    if any(s.tool == "lat" for s in chosen_scenarios):
        os.makedirs(os.path.dirname(tools.LAT), exist_ok=True)
        rc = subprocess.call(["cc", "-O2", "-o", tools.LAT, tools.LAT_SOURCE])
        print(f"  lat (open-loop meter): {'ok' if rc == 0 else 'FAILED'}", flush=True)
        scen_mod.OPEN_CAPACITY.update(open_capacity([s.name for s in chosen_subjects]))
        print(f"  open-loop capacity: {scen_mod.OPEN_CAPACITY['rps']:,.0f} req/s ({scen_mod.OPEN_CAPACITY['source']})",
              flush=True)
    if any(s.name == "swoop-baseline" for s in chosen_subjects):
        if not args.baseline:
            sys.exit("swoop-baseline needs --baseline REF (the git ref to build it from)")
        if not args.no_build and not subj.prepare_baseline(args.baseline, log=lambda t: print(t, flush=True)):
            sys.exit(f"--baseline {args.baseline}: could not check it out")
    subj.build_all(chosen_subjects, log=lambda t: print(t, flush=True))
    build_seconds = time.monotonic() - t_build

    # Everything from here on (this process, the load tools) runs on the load core.
    os.sched_setaffinity(0, {int(session.measure.LOADGEN_CORE)})

    syscall_names, syscall_error = None, "`--no-syscalls` was given"
    if not args.no_syscalls and not any(s.kind != "none" for s in chosen_subjects):
        syscall_error = "no server among the chosen subjects"
    elif not args.no_syscalls:
        syscall_names, syscall_error = syscalls.check()
        if syscall_error:
            syscall_names = None
            print(f"system-call probes: not possible here: {syscall_error}", flush=True)

    plan = [(rep, s) for rep in range(1, mode["reps"] + 1) for s in chosen_subjects]
    progress = Progress(plan, lists, mode, probes=syscall_names is not None)
    print(f"plan: {len(chosen_subjects)} subjects x {len(chosen_scenarios)} scenarios x {mode['reps']} "
          f"repetition(s), interleaved; estimated {fmt_time(progress.remaining(0))} (mm:ss)", flush=True)
    if syscall_names is not None:
        print(f"system-call probes: perf stat, {mode['syscall_seconds']} s per scenario (ab: "
              f"{mode['syscall_ab_requests']:,} requests), repetition 1 only, after each session's "
              f"measurements; {len(syscall_names)} syscalls by name plus the total", flush=True)
    for s in chosen_subjects:
        if not s.build.get("ok"):
            print(f"  {s.name}: will be reported as failed to build ({s.build.get('error')})", flush=True)

    results = {
        "stamp": stamp,
        "mode": args.mode,
        "mode_settings": mode,
        "complete": complete,
        "only": args.only,
        "port": args.port,
        "cores": {"server": session.SERVER_CORE, "loadgen": session.measure.LOADGEN_CORE},
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "build_seconds": round(build_seconds, 1),
        "machine": machine.collect(),
        "subjects": {s.name: {"title": s.title, "short": s.short, "kind": s.kind, "summary": s.summary, "build": s.build,
                              "settings": s.settings, "project": s.project, "tiers": list(s.tiers),
                              "scenarios": [sc.name for sc in lists[s.name]]} for s in chosen_subjects},
        "scenarios": {sc.name: {"title": sc.title, "group": sc.group, "tool": sc.tool, "path": sc.path, "tier": sc.tier,
                                "connections": sc.connections, "body": sc.body,
                                "command": " ".join(sc.command(args.port, mode)).replace(BENCH + "/", "bench/")}
                      for sc in chosen_scenarios},
        "syscalls": {"enabled": syscall_names is not None, "error": syscall_error if syscall_names is None else None,
                     "tool": syscalls.version() if syscall_names is not None else None,
                     "names": syscall_names or [], "total_event": syscalls.TOTAL, "reps": [1],
                     "seconds": mode["syscall_seconds"], "ab_requests": mode["syscall_ab_requests"]},
        "sessions": [],
    }
    raw_path = os.path.join(log_dir, "results.json")

    def save():
        with open(raw_path, "w") as f:
            json.dump(results, f, indent=1)

    # Idle CPUs poll instead of halting for the whole run (PM QoS, as tuned's
    # latency-performance profile): on a virtual machine a halted vCPU can take a millisecond
    # or more to wake, which would be charged to whichever server sleeps between requests
    # (one connection, a new connection at a time) rather than spin (measure.PollingIdle).
    polling = measure.PollingIdle().__enter__()
    results["polling_idle"] = polling.held
    progress.line("idle CPUs poll for the whole run (/dev/cpu_dma_latency 0)" if polling.held
                  else "could not hold /dev/cpu_dma_latency (not root?): idle CPUs may halt; latency at low load "
                       "then includes their wake-ups")
    run_t0 = time.monotonic()
    for k, (rep, s) in enumerate(plan):
        head = f"rep {rep}/{mode['reps']} | {s.name} ({(k % len(chosen_subjects)) + 1}/{len(chosen_subjects)})"

        def report_progress(scenario, i, count, m, head=head, k=k, s=s):
            if m is None:
                progress.line(f"{head} | {scenario.name} ({i + 1}/{count}) ... {progress.eta_text(k, i)}")
            else:
                progress.seen[(s.name, scenario.name)] = m.get("wall_s", 0) + (
                    mode["wrk_warmup"] if scenario.tool == "wrk" else 0)
                progress.line(f"{head} | {scenario.name}: {summary_line(m)}")

        def report_probe(scenario, i, count, p, head=head, k=k, s=s):
            progress.probe_seen[(s.name, scenario.name)] = p.get("probe_wall_s", 0)
            progress.line(f"{head} | {scenario.name} ({i + 1}/{count}): {probe_line(p)}; "
                          f"{progress.eta_text(k, len(lists[s.name]), i + 1)}")

        if not s.build.get("ok"):
            progress.line(f"{head} | failed to build, skipped")
            results["sessions"].append({"subject": s.name, "rep": rep, "ok": False,
                                        "error": "failed to build: " + str(s.build.get("error")),
                                        "measurements": []})
            continue
        quiet_load, waited = wait_for_quiet(progress.line)
        progress.line(f"{head} | starting")
        rec = session.run(s, rep, lists[s.name], mode, args.port, log_dir, report_progress,
                          syscall_names=syscall_names if rep == 1 else None, probe_progress=report_probe)
        rec["other_load_before"] = round(quiet_load, 2)
        rec["waited_for_quiet_s"] = round(waited, 1)
        if rec.get("error"):
            progress.line(f"{head} | {rec['error']}")
        elif rec.get("first_response_s") is not None:
            progress.line(f"{head} | first response after {rec['first_response_s']:.3f} s, "
                          f"idle RSS {rec['idle_rss_kb'] / 1024:.1f} MiB, stopped cleanly: {rec.get('clean_stop')}")
        results["sessions"].append(rec)
        save()
    results["run_seconds"] = round(time.monotonic() - run_t0, 1)
    polling.__exit__(None, None, None)

    # Micro-benchmarks (BenchmarkDotNet), pinned to the server core.
    if micro_wanted and not args.no_micro:
        import micro
        results["micro"] = micro.run(args.mode, log_dir, progress.line)
    results["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    save()

    import report
    out = report.write(results, publish=complete and not args.no_publish)
    print(f"report: {os.path.relpath(out, REPO)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
