"""Command lines of the load tools and parsers of their output. Every parser
returns a dict with the same keys (missing ones None):
  requests, seconds, rps, lat_ms {p50, p90, p99, max, mean}, errors {...}, errors_total
"""
import json
import os
import re

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRK_DIR = os.path.join(BENCH, "wrk")
AUTOCANNON = os.path.join(BENCH, "tools", "node_modules", ".bin", "autocannon")
HAMMER = os.path.join(BENCH, ".work", "bin", "hammer", "hammer.dll")
# The paced latency meter (tests/faults/lat.c), compiled by the runner.
LAT_SOURCE = os.path.join(os.path.dirname(BENCH), "tests", "faults", "lat.c")
LAT = os.path.join(BENCH, ".work", "bin", "lat")


def url(port, path):
    return f"http://127.0.0.1:{port}{path}"


# ---------------------------------------------------------------- wrk

def wrk_cmd(port, path, connections, seconds, close=False, pipeline=0, headers=()):
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if close:
        cmd += ["-H", "Connection: close"]
    for h in headers:
        cmd += ["-H", h]
    script = "pipeline.lua" if pipeline else "plain.lua"
    cmd += ["-s", os.path.join(WRK_DIR, script), url(port, path)]
    if pipeline:
        cmd += ["--", str(pipeline)]
    return cmd


def wrk_raw_cmd(port, path, connections, seconds, request_file):
    """wrk sending the request held in `request_file` as it is (head and body; wrk/raw.lua). The
    timeout is 30 s rather than wrk's 2 s: four 100 MiB uploads at once take seconds on a slow
    server, and wrk leaves a request slower than its timeout out of the latencies."""
    return ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "--latency",
            "-s", os.path.join(WRK_DIR, "raw.lua"), url(port, path), "--", request_file]


def _tagged_json(text, tag, tool):
    """The JSON object a tool printed on a line of its own after `tag`."""
    m = re.search(rf"^{tag} (\{{.*\}})\s*$", text, re.M)
    if not m:
        first = text.strip().splitlines()[:1]
        raise ValueError(f"{tool} gave no result ({first[0] if first else 'no output'})")
    return json.loads(m.group(1))


def parse_wrk(text):
    d = _tagged_json(text, "WRKJSON", "wrk")
    secs = d["duration_us"] / 1e6
    lat = d["latency_us"]
    errors = dict(d["errors"])
    # "status" is wrk's count of responses with a status >= 400 (its "Non-2xx or 3xx" line).
    errors_total = sum(errors.values())
    # Cross-check against the human summary so a parsing slip cannot go unnoticed.
    m2 = re.search(r"^\s*(\d+) requests in", text, re.M)
    if m2 and int(m2.group(1)) != d["requests"]:
        raise ValueError("wrk summary and WRKJSON disagree")
    # wrk's percentile() answers 0 when its histogram holds fewer samples than its
    # sample count says (seen with pipelining): that is "no value", not 0 ms.
    lat_ms = {k: (lat[k] / 1000.0 if lat[k] or not d["requests"] else None)
              for k in ("p50", "p90", "p99", "max", "mean")}
    return {
        "requests": d["requests"],
        "seconds": secs,
        "rps": d["requests"] / secs if secs else 0.0,
        "bytes_per_request": d["bytes"] / d["requests"] if d["requests"] else None,
        "lat_ms": lat_ms,
        "errors": errors,
        "errors_total": errors_total,
    }


# ---------------------------------------------------------------- ab

def ab_cmd(port, path, concurrency, requests, keep_alive):
    cmd = ["ab"]
    if keep_alive:
        cmd.append("-k")
    cmd += ["-c", str(concurrency), "-n", str(requests), url(port, path)]
    return cmd


def _num(pattern, text, cast=float):
    m = re.search(pattern, text, re.M)
    return cast(m.group(1)) if m else None


def parse_ab(text):
    complete = _num(r"^Complete requests:\s+(\d+)", text, int)
    if complete is None:
        # ab aborted (for instance "apr_socket_recv: Connection reset by peer").
        lines = [l for l in text.strip().splitlines() if l.strip()]
        reason = next((l for l in lines if "apr_" in l or "failed" in l.lower() or "Invalid" in l),
                      lines[-1] if lines else "no output")
        if "apr_" in reason:
            reason = reason[reason.index("apr_"):]
        done = _num(r"^Total of (\d+) requests completed", text, int)
        raise ValueError(f"ab aborted: {reason.strip()}" + (f" after {done} requests" if done else ""))
    failed = _num(r"^Failed requests:\s+(\d+)", text, int) or 0
    non2xx = _num(r"^Non-2xx responses:\s+(\d+)", text, int) or 0
    seconds = _num(r"^Time taken for tests:\s+([\d.]+)", text)
    pct = {int(p): float(v) for p, v in re.findall(r"^\s+(\d+)%\s+(\d+)", text, re.M)}
    keep = _num(r"^Keep-Alive requests:\s+(\d+)", text, int)
    total_bytes = _num(r"^Total transferred:\s+(\d+)", text, int)
    detail = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    errors = {"failed": failed, "non2xx": non2xx}
    if detail:
        errors.update(dict(zip(("connect", "receive", "length", "exceptions"), map(int, detail.groups()))))
    good = complete - failed - non2xx
    return {
        "requests": complete,
        "seconds": seconds,
        "rps": _num(r"^Requests per second:\s+([\d.]+)", text),
        "bytes_per_request": total_bytes / complete if complete and total_bytes else None,
        # ab's percentiles have 1 ms resolution; 100% is the longest request.
        "lat_ms": {"p50": pct.get(50), "p90": pct.get(90), "p99": pct.get(99), "max": pct.get(100),
                   "mean": _num(r"^Time per request:\s+([\d.]+) \[ms\] \(mean\)$", text)},
        "errors": errors,
        "errors_total": failed + non2xx,
        "keep_alive_requests": keep,
        "good_requests": good,
    }


# ---------------------------------------------------------------- autocannon

def autocannon_cmd(port, path, connections, seconds):
    return [AUTOCANNON, "-c", str(connections), "-d", str(seconds), "--json", url(port, path)]


def parse_autocannon(text):
    start = text.find("{")
    if start < 0:
        raise ValueError(f"autocannon gave no JSON ({text.strip()[:200]})")
    d = json.loads(text[start:text.rindex("}") + 1])
    lat = d["latency"]
    total = d["requests"]["total"]
    errors = {"errors": d.get("errors", 0), "timeouts": d.get("timeouts", 0), "non2xx": d.get("non2xx", 0)}
    return {
        "requests": total,
        "seconds": d["duration"],
        # autocannon's own headline figure: the mean of its per-second samples.
        "rps": d["requests"]["average"],
        "rps_total_over_duration": total / d["duration"] if d["duration"] else None,
        "bytes_per_request": d["throughput"]["total"] / total if total else None,
        "lat_ms": {"p50": lat.get("p50"), "p90": lat.get("p90"), "p99": lat.get("p99"),
                   "max": lat.get("max"), "mean": lat.get("average")},
        "errors": errors,
        "errors_total": errors["errors"] + errors["timeouts"] + errors["non2xx"],
    }


# ---------------------------------------------------------------- hammer

def hammer_cmd(port, path, seconds=None, count=None, keep_alive=False, runs=1):
    cmd = ["dotnet", HAMMER, "--port", str(port), "--path", path, "--runs", str(runs)]
    cmd += ["--duration", str(seconds)] if seconds else ["--count", str(count)]
    if keep_alive:
        cmd.append("--keep-alive")
    return cmd


def parse_hammer(text):
    m = re.search(r"^JSON (\{.*\})\s*$", text, re.M)
    if not m:
        raise ValueError(f"hammer gave no result ({text.strip()[:200]})")
    d = json.loads(m.group(1))
    runs = d["runs"]
    first = runs[0]
    requests = sum(r["requests"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    errors_total = sum(r["errors"] for r in runs)
    return {
        "requests": requests,
        "seconds": seconds,
        "rps": requests / seconds if seconds else 0.0,
        "lat_ms": {"p50": None, "p90": None, "p99": None,
                   "max": max(r["maxMs"] for r in runs),
                   "mean": (sum(r["meanMs"] * r["requests"] for r in runs) / requests) if requests else None,
                   "min": min((r["minMs"] for r in runs if r["requests"]), default=None)},
        "errors": {"failed": errors_total},
        "errors_total": errors_total,
        "first_error": next((r["firstError"] for r in runs if r["firstError"]), None),
        "runs": [{k: r[k] for k in ("requests", "errors", "seconds", "meanMs", "minMs", "maxMs")} for r in runs],
        "per_second": first.get("perSecond", []),
    }


# ---------------------------------------------------------------- lat (open loop)

def lat_cmd(port, path, connections, seconds, rate):
    """Open loop: `rate` requests a second in all, each connection on its own fixed schedule,
    whether or not the answers came back; a request is timed from when it was due."""
    return [LAT, str(port), str(connections), str(seconds), str(int(rate)), path]


def parse_lat(text):
    d = _tagged_json(text, "LATJSON", "lat")
    secs = d["duration_us"] / 1e6
    lat_ms = {"p50": d["p50_us"] / 1000.0, "p90": d["p90_us"] / 1000.0, "p99": d["p99_us"] / 1000.0,
              "p999": d["p999_us"] / 1000.0, "max": d["max_us"] / 1000.0, "mean": None}
    # Requests that fell behind their schedule (the server answered too late for the next to
    # go on time) are not errors: they are timed from when they were due, so they show in the
    # percentiles. What the meter itself delayed is reported beside them.
    return {
        "requests": d["requests"],
        "seconds": secs,
        "rps": d["requests"] / secs if secs else 0.0,
        "target_rps": d["rate"],
        "behind_schedule": d["blocked"],
        "meter_late": d["meter_late"],
        "lat_ms": lat_ms,
        "errors": {},
        "errors_total": 0,
    }
