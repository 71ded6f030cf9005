"""tests/faults/run: fault and load scenarios against Swoop's samples/Echo and
tests/faults/FaultServer, on loopback, each bounded in time. Prints a summary and exits 1 when
a check fails. See docs/reliability.md ("Fault and load tests")."""

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

from common import (
    CORES, ECHO_PROJECT, FAULT_PROJECT, ROOT, WORK, Scenario, describe_machine, machine_state,
    pin_self_to_client_core, raise_fd_limit, rel,
)
import s_bursts
import s_connections
import s_handlers
import s_heads
import s_resets
import s_sigterm
import s_slowloris
import s_soak

SCENARIOS = {
    "connections": s_connections,
    "slowloris": s_slowloris,
    "resets": s_resets,
    "soak": s_soak,
    "sigterm": s_sigterm,
    "handlers": s_handlers,
    "bursts": s_bursts,
    "heads": s_heads,
}


def parse():
    p = argparse.ArgumentParser(
        prog="tests/faults/run",
        description="Fault and load tests of Swoop (loopback only, bounded in time).",
    )
    p.add_argument("scenarios", nargs="*", default=["all"],
                   help=f"all (default) or some of: {', '.join(SCENARIOS)}")
    p.add_argument("--quick", action="store_true", help="fewer connections, shorter runs (smoke test)")
    p.add_argument("--minutes", type=float, default=None,
                   help="soak length in minutes (default 10; 1 with --quick)")
    p.add_argument("--connections", type=int, default=10000,
                   help="connections held by `connections` (default 10000; 2000 with --quick)")
    p.add_argument("--port", type=int, default=18190, help="port for the servers (default 18190)")
    p.add_argument("--python-slowloris", action="store_true",
                   help="slowloris: the Python slow client instead of the C one (slowloris.c, built with cc)")
    p.add_argument("--no-build", action="store_true", help="use the Release builds already there")
    p.add_argument("--wait-quiet", type=float, default=0, metavar="MIN",
                   help="first wait up to MIN minutes for a quiet machine (load < 0.7, nobody busy)")
    a = p.parse_args()
    names = list(SCENARIOS) if a.scenarios in ([], ["all"]) else a.scenarios
    for n in names:
        if n not in SCENARIOS:
            p.error(f"unknown scenario {n!r}: pick from {', '.join(SCENARIOS)} or all")
    if a.minutes is None:
        a.minutes = 1.0 if a.quick else 10.0
    return a, names


def build():
    for project in (ECHO_PROJECT, FAULT_PROJECT):
        argv = ["dotnet", "build", "-c", "Release", "-nologo", "-v", "q", rel(project)]
        print(f"$ {' '.join(argv)}", flush=True)
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout[-4000:], done.stderr[-4000:])
            sys.exit(f"build failed: {rel(project)}")


def wait_quiet(minutes):
    deadline = time.time() + minutes * 60
    while True:
        state = machine_state(3.0)
        quiet = state["loadavg"][0] < 0.7 and not any(p["cpu_pct"] >= 20 for p in state["others_busy"])
        print(f"machine: {describe_machine(state)}{'' if quiet else ' (waiting for it to be quiet)'}",
              flush=True)
        if quiet or time.time() > deadline:
            return state, quiet
        time.sleep(20)


def main():
    args, names = parse()
    limit = raise_fd_limit()
    pin_self_to_client_core()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + ("-quick" if args.quick else "")
    log_dir = WORK / "logs" / stamp
    log_dir.mkdir(parents=True, exist_ok=True)
    (WORK / "results").mkdir(parents=True, exist_ok=True)
    if not args.no_build:
        build()
    start_state, quiet = wait_quiet(args.wait_quiet) if args.wait_quiet else (machine_state(2.0), None)
    print(f"fault tests {stamp}: {', '.join(names)}{' (quick)' if args.quick else ''}; "
          f"{CORES} cores, open-files limit {limit}; logs in {rel(log_dir)}", flush=True)

    results = []
    for name in names:
        module = SCENARIOS[name]
        scn = Scenario(name, module.TITLE, log_dir, args.quick)
        print(f"\n== {name}: {module.TITLE}", flush=True)
        scn.command(f"tests/faults/run {name}" + (" --quick" if args.quick else "")
                    + (f" --minutes {args.minutes:g}" if name == "soak" else "")
                    + (f" --connections {args.connections}" if name == "connections" and not args.quick else ""),
                    "this scenario alone")
        scn.machine_before = machine_state(2.0)
        print(f"  machine: {describe_machine(scn.machine_before)}", flush=True)
        t0 = time.time()
        try:
            module.run(scn, args)
        except Exception as e:
            traceback.print_exc()
            scn.check("scenario ran to the end", False, f"{type(e).__name__}: {e}")
        scn.seconds = round(time.time() - t0, 1)
        scn.machine_after = {"loadavg": [round(x, 2) for x in os.getloadavg()]}
        results.append(scn)

    print("\n== summary")
    for scn in results:
        failed = [c for c in scn.checks if not c["ok"]]
        print(f"{'PASS' if scn.ok else 'FAIL'}  {scn.name:12} {len(scn.checks) - len(failed)}/{len(scn.checks)} "
              f"checks, {scn.seconds:.0f} s")
        for c in failed:
            print(f"        failed: {c['check']}: {c['detail']}")
    passed = sum(s.ok for s in results)
    out = WORK / "results" / f"{stamp}.json"
    out.write_text(json.dumps({
        "stamp": stamp,
        "argv": sys.argv[1:],
        "quick": args.quick,
        "cores": CORES,
        "fd_limit": limit,
        "machine_at_start": start_state,
        "machine_quiet": quiet,
        "scenarios": [s.to_json() for s in results],
    }, indent=2))
    print(f"{passed} passed, {len(results) - passed} failed")
    print(f"results: {rel(out)}; logs: {rel(log_dir)}")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
