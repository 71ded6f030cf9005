#!/usr/bin/env python3
"""Medians (min–max) of bench/tls/run's rows, per server, key, protocol and handshake kind,
and each server's ratio to nginx within the same repetition (rows of a repetition follow each
other; the i-th row of a combination is repetition i). Usage: bench/tls/summarize.py < run.txt"""
import sys, statistics as st
from collections import defaultdict

rows = defaultdict(list)
for line in sys.stdin:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 7 or not cells[-1].isdigit():
        continue
    server, key, protocol, mode, _, _, rate = cells
    rows[(key, protocol, mode, server)].append(int(rate))

def span(xs):
    return f"{st.median(xs):.0f} ({min(xs)}–{max(xs)})" if xs else "–"

print("| key | protocol | handshake | server | handshakes per server CPU-s | ÷ nginx (same repetition) |")
print("| --- | --- | --- | --- | ---: | ---: |")
for (key, protocol, mode, server), xs in sorted(rows.items()):
    ng = rows.get((key, protocol, mode, "nginx"), [])
    ratios = [a / b for a, b in zip(xs, ng)] if server != "nginx" else []
    r = f"{st.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})" if ratios else ""
    print(f"| {key} | {protocol} | {mode} | {server} | {span(xs)} | {r} |")
