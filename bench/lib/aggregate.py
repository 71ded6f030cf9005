"""Folds the repetitions of each (subject, scenario) into one row: median with
min and max, errors summed over all repetitions (never dropped), flags counted."""
import statistics


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def span(values):
    values = [v for v in values if v is not None]
    return (min(values), max(values)) if values else (None, None)


def measurements(results, subject, scenario):
    out = []
    for s in results["sessions"]:
        if s["subject"] != subject:
            continue
        for m in s.get("measurements", []):
            if m["scenario"] == scenario:
                out.append(m)
    return out


def row(results, subject, scenario):
    # A measurement during which the server was stopped from outside says nothing
    # about the server; it is listed under failures instead.
    ms = [m for m in measurements(results, subject, scenario) if not m.get("invalid")]
    if not ms:
        return None
    ok = [m for m in ms if m.get("ok")]
    rps = [m["rps"] for m in ok]
    lo, hi = span(rps)
    lat = {k: med([(m.get("lat_ms") or {}).get(k) for m in ok]) for k in ("p50", "p90", "p99", "p999", "mean", "min")}
    lat["max"] = max([(m.get("lat_ms") or {}).get("max") or 0 for m in ok], default=None) if ok else None
    flags = {}
    for m in ms:
        for f in m.get("flags", []):
            flags[f] = flags.get(f, 0) + 1
    gc = [m["gc"] for m in ok if m.get("gc")]
    return {
        "runs": len(ms),
        "ok_runs": len(ok),
        "errors_runs": [m.get("error") for m in ms if not m.get("ok")],
        "rps": med(rps), "rps_min": lo, "rps_max": hi,
        "requests": sum(m.get("requests") or 0 for m in ms),
        "lat": lat,
        "errors_total": sum(m.get("errors_total") or 0 for m in ms),
        "errors": _sum_dicts([m.get("errors") or {} for m in ms]),
        "server_cpu_ms_per_1k": med([m.get("server_cpu_ms_per_1k") for m in ok]),
        "loadgen_cpu_ms_per_1k": med([m.get("loadgen_cpu_ms_per_1k") for m in ok]),
        "server_busy": med([m.get("server_busy") for m in ok]),
        "loadgen_busy": med([m.get("loadgen_busy") for m in ms]),
        "switches_vol": med([(m.get("switches_per_request") or {}).get("voluntary") for m in ok]),
        "switches_invol": med([(m.get("switches_per_request") or {}).get("involuntary") for m in ok]),
        "threads_exited": sum((m.get("switches") or {}).get("threads_exited", 0) for m in ok),
        "peak_rss_kb": max([m.get("peak_rss_kb") or 0 for m in ms], default=None) or None,
        "bytes_per_request": med([m.get("bytes_per_request") for m in ok]),
        "alloc_per_request": med([g["alloc_bytes_per_request"] for g in gc]),
        "gen0_per_100k": med([g["gen0"] * 1e5 / m["requests"] for g, m in
                              ((m["gc"], m) for m in ok if m.get("gc") and m.get("requests"))]),
        "gen2_total": sum(g["gen2"] for g in gc) if gc else None,
        "keep_alive_requests": med([m.get("keep_alive_requests") for m in ok]),
        "flags": flags,
        "first_error": next((m.get("first_error") for m in ms if m.get("first_error")), None),
        "time_runs": [m.get("runs") for m in ok if m.get("runs")],
    }


def by_rep(results, subject, scenario, key="rps"):
    """{repetition: value of `key`} of the counted, successful measurements of (subject,
    scenario): the pairs for ratios taken repetition by repetition."""
    out = {}
    for s in results["sessions"]:
        if s["subject"] != subject:
            continue
        for m in s.get("measurements", []):
            if m["scenario"] == scenario and m.get("ok") and not m.get("invalid") and m.get(key) is not None:
                out[s["rep"]] = m[key]
    return out


def rep_ratios(results, num, den, scenario, key="rps"):
    """The ratio num ÷ den of `key` in each repetition where both have a value, in
    repetition order: the median and spread of these say how stable a ratio is."""
    a, b = by_rep(results, num, scenario, key), by_rep(results, den, scenario, key)
    return [a[r] / b[r] for r in sorted(a) if r in b and b[r]]


def _sum_dicts(ds):
    out = {}
    for d in ds:
        for k, v in d.items():
            if isinstance(v, (int, float)):
                out[k] = out.get(k, 0) + v
    return out


def syscall_probe(results, subject, scenario):
    """The system-call probe of (subject, scenario): the first one recorded (they run
    in the first repetition only), or None."""
    for s in sessions_of(results, subject):
        for p in s.get("syscall_probes") or []:
            if p["scenario"] == scenario:
                return p
    return None


def sessions_of(results, subject):
    return [s for s in results["sessions"] if s["subject"] == subject]


def startup(results, subject):
    ss = sessions_of(results, subject)
    first = [s.get("first_response_s") for s in ss]
    idle = [s.get("idle_rss_kb") for s in ss]
    peaks = [m.get("peak_rss_kb") for s in ss for m in s.get("measurements", [])]
    lo, hi = span(first)
    return {
        "first_response_s": med(first), "first_min": lo, "first_max": hi,
        "idle_rss_kb": med(idle),
        "settled_rss_kb": med([s.get("settled_rss_kb") for s in ss]),
        "settled_ratios": [s["settled_rss_kb"] / s["idle_rss_kb"] for s in ss
                           if s.get("settled_rss_kb") and s.get("idle_rss_kb")],
        "peak_rss_kb": max([p for p in peaks if p], default=None),
        "startup_cpu_s": med([s.get("startup_cpu_s") for s in ss]),
        "processes": med([s.get("processes") for s in ss]),
        "errors": [s.get("error") for s in ss if s.get("error")],
        "clean_stops": sum(1 for s in ss if s.get("clean_stop")),
        "started": sum(1 for s in ss if s.get("first_response_s") is not None),
        "sessions": len(ss),
    }
