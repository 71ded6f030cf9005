#!/usr/bin/env python3
"""Medians (min-max) of one of bench/tls's or bench/h2's markdown tables, per row kind and server,
with each server's ratio to a reference server taken repetition by repetition (the i-th row of a
kind and server is repetition i). Usage: medians.py METRIC-COLUMN REFERENCE [higher|lower] < table
  METRIC-COLUMN: the header of the column to summarize; the first column is the server, and the
  columns that are not numbers name the row's kind.
  higher (default): a bigger metric is better, the ratio is server ÷ reference; lower: the ratio
  is reference ÷ server, so that above 1 is still the server ahead."""
import sys, statistics as st
from collections import defaultdict

metric, reference = sys.argv[1], sys.argv[2]
better = sys.argv[3] if len(sys.argv) > 3 else "higher"
header, rows, order = None, defaultdict(list), []
for line in sys.stdin:
    if not line.startswith("|") or "---" in line:
        continue
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if header is None:
        header = cells
        col = header.index(metric)
        continue
    if len(cells) != len(header):
        continue
    try:
        value = float(cells[col].replace(",", ""))
    except ValueError:
        continue
    kind = tuple(c for i, c in enumerate(cells[1:], 1) if i != col and not c.replace(".", "").replace(",", "").isdigit())
    if (kind, cells[0]) not in rows:
        order.append((kind, cells[0]))
    rows[(kind, cells[0])].append(value)

if header is None:
    sys.exit("no table on stdin")
print(f"| kind | server | {metric}, median (min-max) | ÷ {reference}, same repetition (above 1: ahead) |")
print("| --- | --- | ---: | ---: |")
fmt = lambda x: f"{x:,.0f}" if abs(x) >= 100 else f"{x:.2f}"
for kind, server in sorted(order, key=lambda k: (k[0], k[1] == reference, k[1])):
    xs = rows[(kind, server)]
    ref = rows.get((kind, reference), [])
    ratio = ""
    if server != reference and ref:
        rs = [(a / b) if better == "higher" else (b / a) for a, b in zip(xs, ref) if a and b]
        if rs:
            ratio = f"{st.median(rs):.2f}x ({min(rs):.2f}-{max(rs):.2f})"
    print(f"| {' '.join(kind)} | {server} | {fmt(st.median(xs))} ({fmt(min(xs))}-{fmt(max(xs))}) | {ratio} |")
