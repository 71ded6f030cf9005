#!/usr/bin/env python3
"""One h2load measurement of a gRPC server: h2load pinned to core 1 posts BODY (a prepared
gRPC request: 5-byte prefix and a protobuf message) to URL over h2c for DURATION seconds with
C connections of M streams each, while the server's CPU time is read from /proc/PID/stat.
Prints one tab-separated line: calls/s, calls, server CPU seconds, calls per server CPU-second,
p50 and p99 of the call time in ms (h2load's per-request log), the load tool's share of its
core, and for a stream (MESSAGE_BYTES given: the size of one response message with its prefix)
messages/s and messages per server CPU-second, counted from the DATA bytes h2load received.

Usage: bench/grpc/measure.py PID URL BODY DURATION C M [MESSAGE_BYTES]
NO_LATENCY=1: h2load keeps no per-request log (it costs h2load about a third of its core, and
at 16 or 64 connections of 16 calls h2load's core is the limit): p50 and p99 are then "nan".
"""
import os, re, resource, subprocess, sys, tempfile

pid, url, body, duration, c, m = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
message_bytes = int(sys.argv[7]) if len(sys.argv) > 7 else 0
hz = os.sysconf("SC_CLK_TCK")


def ticks():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])   # utime + stime of the whole process


log = tempfile.NamedTemporaryFile(prefix="h2load-", suffix=".log", delete=False).name
latency = not os.environ.get("NO_LATENCY")
command = ["taskset", "-c", "1", "h2load", "-c", c, "-m", m, "-D", duration, "-d", body,
           "-H", "content-type: application/grpc", "-H", "te: trailers"] + ([f"--log-file={log}"] if latency else []) + [url]
usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = ticks()
out = subprocess.run(command, capture_output=True, text=True).stdout
t1 = ticks()
usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)

rate = float(re.search(r"finished in ([0-9.]+)s, ([0-9.]+) req/s", out).group(2))
elapsed = float(re.search(r"finished in ([0-9.]+)s", out).group(1))
succeeded = int(re.search(r"(\d+) succeeded", out).group(1))
failed = re.search(r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
data = int(re.search(r"\((\d+)\) data", out).group(1))
cpu = (t1 - t0) / hz
tool = (usage1.ru_utime + usage1.ru_stime - usage0.ru_utime - usage0.ru_stime) / elapsed
times = sorted(int(line.split("\t")[2]) for line in open(log) if line.count("\t") == 2 and line.split("\t")[1] == "200") if latency else []
os.unlink(log)


def percentile(p):
    return times[min(len(times) - 1, int(len(times) * p))] / 1000 if times else float("nan")


row = [f"{rate:.0f}", str(succeeded), f"{cpu:.2f}", f"{succeeded / max(cpu, 0.01):.0f}",
       f"{percentile(0.5):.2f}", f"{percentile(0.99):.2f}", f"{tool * 100:.0f}"]
if message_bytes:
    messages = data / message_bytes
    row += [f"{messages / elapsed:.0f}", f"{messages / max(cpu, 0.01):.0f}"]
if any(int(x) for x in failed.groups()):
    row.append("errors:" + "/".join(failed.groups()))
print("\t".join(row))
