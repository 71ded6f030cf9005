"""The report's section on the live group: idle Server-Sent Event streams (memory per stream,
server CPU per broadcast) and a WebSocket echo (server CPU per message), each Swoop subject
beside its ASP.NET Core peer with ratios per repetition (both measured in the same repetition)."""
import statistics

import aggregate
import live
from fmt import code, mib, ms, n0, pct, table

# (subject, peer): the ratios are subject ÷ peer, repetition by repetition. The C floor beside
# Kestrel says how low any server could go on this machine (a target below it cannot be met
# here); Swoop beside the floor, what Swoop adds to the kernel's share.
PAIRS = (("swoop-live", "kestrel-live"), ("c-live", "kestrel-live"), ("swoop-live", "c-live"))


def _ok(res, subject, scenario):
    return [m for m in aggregate.measurements(res, subject, scenario) if m.get("ok") and not m.get("invalid")]


def _by_rep(res, subject, scenario, key):
    """{repetition: value} of one measured quantity."""
    out = {}
    for s in aggregate.sessions_of(res, subject):
        for m in s.get("measurements", []):
            if m["scenario"] == scenario and m.get("ok") and not m.get("invalid") and m.get(key) is not None:
                out[s["rep"]] = m[key]
    return out


def _spread(values, fmt=ms):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    mid = fmt(statistics.median(values))
    return mid if len(values) == 1 else f"{mid} ({fmt(min(values))}–{fmt(max(values))})"


def _kib(v):
    return f"{v:.2f}"


def _flags(ms_):
    flags = {}
    for m in ms_:
        for f in m.get("flags", []):
            flags[f] = flags.get(f, 0) + 1
    return ", ".join(f"{k} ({v}/{len(ms_)})" for k, v in flags.items())


def _subject_rows(res, subjects, sc, blanks, cells):
    """One row a subject that ran `sc`: its title, then cells(ok_measurements, every_measurement),
    or "failed: ..." and `blanks` empty cells when no measurement succeeded."""
    rows = []
    for s in subjects:
        ms_ = _ok(res, s, sc)
        every = aggregate.measurements(res, s, sc)
        if not every:
            continue
        title = res["subjects"][s]["title"]
        if not ms_:
            rows.append([title, "failed: " + "; ".join(sorted({m.get("error") or "?" for m in every}))[:200]] + [""] * blanks)
        else:
            rows.append([title] + cells(ms_, every))
    return rows


def _sse_table(res, subjects, sc):
    def cells(ms_, every):
        return [f"{min(m['streams'] for m in ms_):,}",
                _spread([m["kib_per_stream"] for m in ms_], _kib),
                " → ".join(mib(statistics.median(m[k] for m in ms_))
                           for k in ("rss_before_kb", "rss_open_kb", "rss_closed_kb")),
                _spread([m["broadcast_cpu_ms"] for m in ms_]),
                _spread([m["broadcast_ticks_ms"] for m in ms_]),
                _spread([m["broadcast_last_ms"] for m in ms_]),
                _spread([m["idle_cpu_ms_per_s"] for m in ms_]),
                n0(sum(m.get("errors_total") or 0 for m in every)),
                pct(statistics.median(m["loadgen_cpu_s"] / m["wall_s"] for m in ms_)),
                _flags(every)]

    rows = _subject_rows(res, subjects, sc, 9, cells)
    head = ["Subject", "streams", "KiB per stream", "RSS MiB before → open → closed", "broadcast CPU ms",
            "(stat ticks) ms", "last client ms", "CPU ms/s in the 2 s after opening", "errors", "client core", "flags"]
    return table(head, rows) if rows else ""


def _ws_table(res, subjects, sc):
    def cells(ms_, every):
        return [_spread([m["rps"] for m in ms_], n0),
                _spread([m["server_cpu_us_per_msg"] for m in ms_]),
                pct(statistics.median(m["server_busy"] for m in ms_)),
                pct(statistics.median(m["loadgen_busy"] for m in ms_)),
                mib(max(m.get("peak_rss_kb") or 0 for m in ms_)),
                n0(sum(m.get("errors_total") or 0 for m in every)), _flags(every)]

    rows = _subject_rows(res, subjects, sc, 6, cells)
    head = ["Subject", "messages/s", "server CPU µs/msg", "server core", "client core", "peak RSS MiB", "errors",
            "flags"]
    return table(head, rows) if rows else ""


# What the ratio table compares: (scenario tool, key, label). Lower is better for all but messages/s.
RATIOS = (("sse", "kib_per_stream", "memory per idle stream"),
          ("sse", "broadcast_cpu_ms", "server CPU per broadcast"),
          ("sse", "broadcast_last_ms", "trigger to last client"),
          ("ws", "server_cpu_us_per_msg", "server CPU per WebSocket message"),
          ("ws", "rps", "WebSocket messages/s"))


def _ratio_table(res, subjects, scenarios):
    rows = []
    for a, b in PAIRS:
        if a not in subjects or b not in subjects:
            continue
        for tool, key, label in RATIOS:
            for sc in scenarios:
                if res["scenarios"][sc]["tool"] != tool:
                    continue
                va, vb = _by_rep(res, a, sc, key), _by_rep(res, b, sc, key)
                reps = sorted(set(va) & set(vb))
                rs = [va[r] / vb[r] for r in reps if vb[r]]
                if not rs:
                    continue
                rows.append([f"{label} ({sc})", f"{res['subjects'][a]['short']} ÷ {res['subjects'][b]['short']}",
                             f"{statistics.median(rs):.2f}×", f"{min(rs):.2f}×", f"{max(rs):.2f}×",
                             ", ".join(f"{x:.2f}" for x in rs)])
    if not rows:
        return ""
    return table(["Quantity", "Ratio", "median", "min", "max", "per repetition"], rows)


def section(res, subjects, scenarios):
    scs = [sc for sc in scenarios if res["scenarios"][sc]["tool"] in live.TOOLS]
    if not scs or not any(aggregate.measurements(res, s, sc) for s in subjects for sc in scs):
        return ""
    settings = res.get("mode_settings", {})
    lines = [f"## Live: Server-Sent Events and WebSockets", "",
             "Measured by `bench/lib/live.py` with the client `bench/tools/live.js` (Node.js; npm `ws` for "
             "WebSockets) on the load core, the server alone on its core. Server CPU: the sum over the server's "
             "threads of `/proc/<pid>/task/<tid>/schedstat` (ns), utime+stime from `/proc/<pid>/stat` (10 ms ticks) "
             "beside it. Medians over repetitions, min–max in brackets; the ratios pair the two subjects' "
             "measurements of the same repetition.", ""]
    ratios = _ratio_table(res, subjects, scs)
    if ratios:
        lines += [ratios, ""]
    for sc in scs:
        info = res["scenarios"][sc]
        lines += [f"### {sc}: {info['title']}", "", code(f"taskset -c {res['cores']['loadgen']} " + info["command"]), ""]
        if info["tool"] == "sse":
            lines += [f"The client opens {settings.get('sse_streams', '?'):,} streams (`GET /sse`, raw sockets, at most "
                      "200 connecting at once) and waits for every response head. The runner then waits "
                      f"{live.OPEN_SETTLE:.0f} s (the server's CPU over it is shown: idle streams, plus whatever the server still does after "
                      "accepting them, such as a JIT's background compilation) and reads the server's RSS: memory "
                      "per stream is (RSS open − RSS before the client started) ÷ streams open. Then "
                      f"{settings.get('sse_broadcasts', '?')} broadcasts after one discarded: the client sends "
                      f"`GET /broadcast?size={settings.get('sse_event_size', '?')}&seq=K` on a new connection and "
                      "reports when the last stream had the event (its data ends in `#K`); the server's CPU is read "
                      f"before the trigger and {live.BROADCAST_TAIL * 1000:.0f} ms after that report; per repetition "
                      "the median of the broadcasts. Then the client closes every stream and RSS is read again "
                      f"{settings.get('sse_settle', '?')} s later (\"closed\").", ""]
            lines.append(_sse_table(res, subjects, sc))
        else:
            lines += [f"{res['scenarios'][sc]['connections']} connections, each sending a "
                      f"{settings.get('ws_size', '?')}-byte binary message and the next when its echo is back; "
                      f"{settings.get('ws_warmup', '?')} s of warm-up, then {settings.get('ws_seconds', '?')} s "
                      "measured: echoes received by the client ÷ seconds, server CPU ÷ echoes. A Node.js client on "
                      "one core is near its own limit here (its core is shown): compare CPU per message.", ""]
            lines.append(_ws_table(res, subjects, sc))
        lines.append("")
    return "\n".join(lines)
