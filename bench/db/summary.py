#!/usr/bin/env python3
"""bench/db/run's summary: each subject's median (min-max) over the repetitions, and Swoop's
ratios to each peer, taken repetition by repetition (a repetition runs every subject in turn, so
a pair shares its minute) and then summarised as median (min-max).

  summary.py RAW.tsv                       # print the summary
  summary.py RAW.tsv --save DIR --meta M   # and write DIR/results.json and DIR/report.md
  summary.py RAW.tsv --first-level 64      # the connections of tests named without @N (the
                                           # driver's table then gives each p99 over the mean latency)

RAW.tsv lines: subject, rep, test, req/s, p99 (wrk's text), server us/req, postgres us/req.
M is a JSON file with what the run was (command, subjects' options, machine, commit, and the peers
skipped with why: Oxpecker where its package does not restore). Ratios are Swoop over every other
subject present, whichever peers the run had; the driver alone (bench/db/driver, no HTTP) is not
a peer but a floor: its own table sets its CPU per query and its p99 beside each server's."""
import json
import os
import statistics
import sys


def ms(text):  # wrk's latency: 1.23ms, 850.00us, 1.02s
    for unit, f in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * f
    return float("nan")


def load(path):
    rows = []
    for line in open(path):
        subject, rep, test, rps, p99, server, pg = line.rstrip("\n").split("\t")
        rows.append({"subject": subject, "rep": int(rep), "test": test, "rps": float(rps),
                     "p99_ms": ms(p99), "server_us": float(server), "postgres_us": float(pg)})
    return rows


def spread(values):
    return statistics.median(values), min(values), max(values)


def paired(rows, test, a, b, key):
    """a's value over b's, per repetition."""
    mine = {r["rep"]: r[key] for r in rows if r["test"] == test and r["subject"] == a}
    theirs = {r["rep"]: r[key] for r in rows if r["test"] == test and r["subject"] == b}
    return [mine[k] / theirs[k] for k in mine if k in theirs and theirs[k]]


def summary(rows):
    tests = list(dict.fromkeys(r["test"] for r in rows))
    subjects = list(dict.fromkeys(r["subject"] for r in rows))
    lines = ["| test | subject | req/s | p99 ms | server µs/req | PostgreSQL µs/req |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for test in tests:
        for subject in subjects:
            runs = [r for r in rows if r["test"] == test and r["subject"] == subject]
            if not runs:
                continue
            cells = []
            for key, f in (("rps", "{:,.0f}"), ("p99_ms", "{:.2f}"), ("server_us", "{:.1f}"), ("postgres_us", "{:.1f}")):
                m, lo, hi = spread([r[key] for r in runs])
                cells.append(f"{f.format(m)} ({f.format(lo)}-{f.format(hi)})")
            lines.append(f"| {test} | {subject} | " + " | ".join(cells) + " |")
    ratios = ["| test | peer | req/s | server CPU/req | PostgreSQL CPU/req | p99 |",
              "| --- | --- | ---: | ---: | ---: | ---: |"]
    for test in tests:
        for peer in subjects:
            if peer in ("swoop", "driver"):
                continue
            if not paired(rows, test, "swoop", peer, "rps"):
                continue
            cells = []
            for key in ("rps", "server_us", "postgres_us", "p99_ms"):
                # PostgreSQL's CPU is 0 on plaintext and json: no ratio there.
                values = paired(rows, test, "swoop", peer, key) if key != "postgres_us" or test not in ("plaintext", "json") else []
                if values:
                    m, lo, hi = spread(values)
                    cells.append(f"{m:.2f}x ({lo:.2f}-{hi:.2f})")
                else:
                    cells.append("-")
            ratios.append(f"| {test} | {peer} | " + " | ".join(cells) + " |")
    return lines, ratios


def tail_shape(rows, test, subject, first_level):
    """p99 over the mean latency, per repetition: with a closed loop of N connections the mean
    is N ÷ rate, so this is the tail's shape apart from the rate."""
    level = int(test.split("@")[1]) if "@" in test else first_level
    if not level:
        return []
    return [r["p99_ms"] / (level / r["rps"] * 1000) for r in rows
            if r["test"] == test and r["subject"] == subject and r["rps"]]


def floor(rows, first_level=None):
    """The driver alone against each server, repetition by repetition: the database work's
    share of a server's CPU per request (no server using this driver and recipe goes below
    it), how the driver's own p99 compares with the server's, and (knowing the connections)
    each one's p99 over its mean latency."""
    tests = list(dict.fromkeys(r["test"] for r in rows))
    subjects = list(dict.fromkeys(r["subject"] for r in rows))
    if "driver" not in subjects:
        return []
    shapes = first_level is not None
    table = ["| test | server | driver's CPU/query ÷ server's CPU/req | driver's p99 ÷ server's |"
             + (" p99 ÷ mean: driver, server |" if shapes else ""),
             "| --- | --- | ---: | ---: |" + (" ---: |" if shapes else "")]
    for test in tests:
        for server in subjects:
            if server == "driver" or not paired(rows, test, "driver", server, "server_us"):
                continue
            cells = []
            for key in ("server_us", "p99_ms"):
                m, lo, hi = spread(paired(rows, test, "driver", server, key))
                cells.append(f"{m:.2f} ({lo:.2f}-{hi:.2f})")
            if shapes:
                mine, theirs = tail_shape(rows, test, "driver", first_level), tail_shape(rows, test, server, first_level)
                cells.append(f"{statistics.median(mine):.1f}, {statistics.median(theirs):.1f}" if mine and theirs else "-")
            table.append(f"| {test} | {server} | " + " | ".join(cells) + " |")
    return table


FLOOR_TITLE = "The driver alone (no HTTP) against each server, repetition by repetition, median (min-max)"
FLOOR_NOTE = ("The driver's CPU a query is the least CPU a request any server spends on the test with "
              "this driver and recipe; a server at 0.7x another's CPU needs this share below 0.7 at least.")


def main():
    rows = load(sys.argv[1])
    lines, ratios = summary(rows)
    first_level = None
    if "--first-level" in sys.argv:
        first_level = int(sys.argv[sys.argv.index("--first-level") + 1])
    elif "--meta" in sys.argv:
        first_level = int(str(json.load(open(sys.argv[sys.argv.index("--meta") + 1]))["connections"]).split(",")[0])
    floors = floor(rows, first_level)
    print("\nmedians over repetitions (min-max)")
    print("\n".join(lines))
    print("\nSwoop ÷ peer, repetition by repetition, median (min-max)")
    print("\n".join(ratios))
    if floors:
        print(f"\n{FLOOR_TITLE}\n{FLOOR_NOTE}")
        print("\n".join(floors))
    if "--save" in sys.argv:
        folder = sys.argv[sys.argv.index("--save") + 1]
        meta = json.load(open(sys.argv[sys.argv.index("--meta") + 1]))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "results.json"), "w") as f:
            json.dump({**meta, "rows": rows}, f, indent=1)
        with open(os.path.join(folder, "report.md"), "w") as f:
            f.write(f"# TechEmpower's test types with a database: {os.path.basename(folder)}\n\n")
            f.write(f"`{meta['command']}` at commit `{meta['commit']}`, {meta['started']} to {meta['ended']} (UTC).\n\n")
            levels = str(meta["connections"]).split(",")
            # Several levels: the first level's tests are named plainly, the others test@N.
            wrk = f"`-t1 -c{levels[0]}`" if len(levels) == 1 else \
                f"`-t1 -c{levels[0]}`, and `-c{'`, `-c'.join(levels[1:])}` for the tests named @N"
            f.write(f"Machine: {meta['machine']}. Server on core 0; PostgreSQL and wrk ({wrk}, "
                    f"{meta['duration']} s a test after a warm-up) on core 1; load average before the run "
                    f"{meta['load_before']}, after {meta['load_after']}; idle cores poll: {meta['idle_polling']}; "
                    f"the run's niceness {meta['nice']}.\n\n")
            if float(meta["load_before"].split()[0]) > 1.5:
                f.write("The machine was shared with other work (the load averages above). The run had the CPU "
                        "first (its niceness, in its own autogroup), but the caches, the memory and the kernel's "
                        "network work were shared: read the ratios, taken repetition by repetition, before the "
                        "absolute rates.\n\n")
            f.write("Subjects and their Npgsql options:\n\n")
            for name, options in meta["subjects"].items():
                f.write(f"- {name}: `{options}`\n")
            if meta.get("skipped"):
                # A peer asked for but not built here (Oxpecker without its package) is named, with why.
                f.write(f"\nSkipped: {meta['skipped']}.\n")
            f.write("\n## Medians over repetitions (min-max)\n\n" + "\n".join(lines) + "\n")
            f.write("\n## Swoop ÷ peer, repetition by repetition, median (min-max)\n\n"
                    "Above 1 is Swoop ahead for req/s; below 1 is Swoop ahead for CPU per request and p99.\n\n"
                    + "\n".join(ratios) + "\n")
            if floors:
                f.write(f"\n## {FLOOR_TITLE}\n\n{FLOOR_NOTE}\n\n" + "\n".join(floors) + "\n")
        print(f"\nsaved: {folder}/results.json, report.md")


if __name__ == "__main__":
    main()
