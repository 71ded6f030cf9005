"""Prints the Markdown of a run's results (checks, numbers' headlines, exact commands, machine
state), for docs/reliability.md:

    python3 tests/faults/lib/report.py [--no-commands] tests/faults/.work/results/<stamp>.json [...]

Several files (say, a full run and a separate soak) are printed one after the other."""

import json
import sys


def machine(m):
    if not m:
        return "not recorded"
    others = ", ".join(f"{p['comm']} {p['cpu_pct']}%" for p in m.get("others_busy", [])) or "none"
    return (f"load average {m['loadavg'][0]:.2f} / {m['loadavg'][1]:.2f} / {m['loadavg'][2]:.2f}; "
            f"other processes using 5% of a core or more: {others}")


def scenario(s, commands=True):
    out = [f"##### `{s['name']}`: {s['title']} ({'passed' if s['ok'] else 'FAILED'}, {s['seconds']:.0f} s)", ""]
    out.append(f"Machine at its start: {machine(s['machine_before'])}.")
    out.append("")
    out.append("| check | result | detail |")
    out.append("| --- | --- | --- |")
    for c in s["checks"]:
        detail = c["detail"].replace("|", "\\|")
        out.append(f"| {c['check']} | {'pass' if c['ok'] else '**FAIL**'} | {detail} |")
    out.append("")
    for n in s["notes"]:
        out.append(f"- {n}")
    if s["notes"]:
        out.append("")
    if not commands:
        return "\n".join(out)
    out.append("Commands (from the repository root; ports as in the run):")
    out.append("")
    out.append("```sh")
    seen = set()
    for c in s["commands"]:
        if (c["command"], c["what"]) in seen:
            continue
        seen.add((c["command"], c["what"]))
        out.append(f"{c['command']}    # {c['what']}" if c["what"] else c["command"])
    out.append("```")
    out.append("")
    return "\n".join(out)


def main(args):
    commands = "--no-commands" not in args
    for path in [a for a in args if a != "--no-commands"]:
        run = json.load(open(path))
        print(f"#### Run {run['stamp']} (`tests/faults/run {' '.join(run['argv'])}`)")
        print()
        print(f"{run['cores']} cores, open-files limit {run['fd_limit']}; machine at the start: "
              f"{machine(run['machine_at_start'])}"
              + ("" if run.get("machine_quiet") is None else f" (quiet: {run['machine_quiet']})") + ".")
        print()
        for s in run["scenarios"]:
            print(scenario(s, commands))


if __name__ == "__main__":
    main(sys.argv[1:])
