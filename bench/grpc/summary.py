#!/usr/bin/env python3
"""bench/grpc/run's table: per scenario and subject the median (min-max) over the repetitions,
and Swoop's ratio to Kestrel taken repetition by repetition (median, min-max).
Usage: bench/grpc/summary.py results.tsv"""
import statistics, sys

rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
data = {}
for rep, subject, scenario, *values in rows:
    data.setdefault(scenario, {}).setdefault(subject, {})[rep] = values


def cell(xs, digits=0):
    xs = sorted(xs)
    f = f"{{:,.{digits}f}}"
    return f"{f.format(statistics.median(xs))} ({f.format(xs[0])}-{f.format(xs[-1])})" if xs else "-"


def ratio(scenario, column, a="swoop", b="kestrel"):
    s, k = data[scenario].get(a, {}), data[scenario].get(b, {})
    rs = [float(s[r][column]) / float(k[r][column]) for r in s if r in k and float(k[r][column]) > 0]
    return cell(rs, 2) + "x" if rs else "-"


print("| scenario | server | calls/s | calls per server CPU-s | p50 ms | p99 ms | h2load core |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for scenario in [s for s in data if s.startswith("unary")]:
    for subject, reps in data[scenario].items():
        v = list(reps.values())
        print(f"| {scenario} | {subject} | {cell([float(x[0]) for x in v])} | {cell([float(x[3]) for x in v])} | "
              f"{cell([float(x[4]) for x in v], 2)} | {cell([float(x[5]) for x in v], 2)} | {cell([float(x[6]) for x in v])}% |")
    # swoopb: another Swoop build beside (bench/grpc/run's SWOOP_B), its ratios too.
    for a, b in [("swoop", "kestrel"), ("swoopb", "kestrel"), ("swoop", "swoopb")]:
        if a in data[scenario] and b in data[scenario]:
            print(f"| {scenario} | {a}/{b} | {ratio(scenario, 0, a, b)} | {ratio(scenario, 3, a, b)} | | | |")
if "stream" in data:
    print()
    print("| scenario | server | messages/s | messages per server CPU-s | calls/s | h2load core |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for subject, reps in data["stream"].items():
        v = list(reps.values())
        print(f"| stream | {subject} | {cell([float(x[7]) for x in v])} | {cell([float(x[8]) for x in v])} | "
              f"{cell([float(x[0]) for x in v])} | {cell([float(x[6]) for x in v])}% |")
    print(f"| stream | swoop/kestrel | {ratio('stream', 7)} | {ratio('stream', 8)} | | |")
if "idle-calls" in data:
    print()
    print("| idle calls | server | RSS before KiB | KiB per call at 2 s | KiB per call settled |")
    print("| --- | --- | ---: | ---: | ---: |")
    for subject, reps in data["idle-calls"].items():
        v = list(reps.values())
        print(f"| {v[0][0]} on {v[0][1]} connections | {subject} | {cell([float(x[2]) for x in v])} | "
              f"{cell([float(x[5]) for x in v], 1)} | {cell([float(x[6]) for x in v], 1)} |")
    print(f"| | swoop/kestrel | | {ratio('idle-calls', 5)} | {ratio('idle-calls', 6)} |")
