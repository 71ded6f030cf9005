"""Writes the Markdown report (and charts) from a run's results.json.

bench/results/<stamp>.md, the charts and results.json in bench/results/<stamp>/;
after a complete full run also docs/benchmarks.md and bench/results/latest/.
The report states numbers and how they were obtained; it does not rank or judge.
"""
import json
import os
import shutil
import sys

import aggregate
import charts
import probe
import live
import report_behind
import report_bodies
import report_live
import report_syscalls
from fmt import code, mib, ms, n0, pct, per_req, ratio, spread, table

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")
BASELINE = "kestrel-raw"
# Ratios are to the first of these with a result in the scenario: Kestrel raw for the
# basic tier; the minimal API with the same routes for the routing tier (and for runs of
# the routing tier alone); Giraffe on Kestrel for the app tier; the minimal API for the body group.
BASELINES = (BASELINE, "minimal-routes", "minimal-api", "giraffe-app", "minimal-body")

# The comparisons for the routing tier: samples/Api's routed handler against
# samples/Hello's raw one, mode for mode.
ROUTED_VS_RAW = (("swoop-api", "swoop-jit"), ("swoop-api-aot", "swoop"), ("swoop-api-threadpool", "swoop-threadpool"))
ROUTED_VS_RAW_SCENARIOS = ("plaintext-c32", "plaintext-c256", "json-c32", "json-c256")
ROUTING_SUBJECTS = ("swoop-api", "swoop-api-aot", "swoop-api-threadpool", "minimal-routes", "node-routes")

# The app tier: Swoop's subject and the peers its ratios are taken against, repetition by
# repetition; the names of its endpoint checks (probe.EXPECTED_APP) in the bodies table.
APP_SWOOP = "swoop-app"
APP_PEERS = ("giraffe-app", "suave-app")
APP_BODIES = (("page", "page"), ("view", "page of 100 (htmlView)"), ("asset", "stylesheet"), ("json", "JSON"), ("json-gzip", "gzipped JSON"))


def baseline(res, sc):
    """The subject whose req/s the others are compared with in scenario `sc`, or None."""
    for b in BASELINES:
        r = aggregate.row(res, b, sc) if b in res["subjects"] else None
        if r and r["ok_runs"]:
            return b
    return None


def baseline_rps(res, sc):
    b = baseline(res, sc)
    return (b, aggregate.row(res, b, sc)["rps"]) if b else (None, None)


def title_of(res, name):
    return res["subjects"].get(name, {}).get("title", name) if name else "–"


# ---------------------------------------------------------------- sections

def header(res):
    m = res["machine"]
    title = "Swoop benchmark report" + ("" if res["mode"] == "full" else f" ({res['mode']} run)")
    lines = [f"# {title}: {res['stamp']}", ""]
    lines.append(f"Produced by `bench/run {'--' + res['mode']}{' --only ' + res['only'] if res['only'] else ''}` "
                 f"from {res['started']} to {res.get('finished', '?')} (UTC), repository commit `{m['git_commit']}` "
                 f"on `{m['git_branch']}`{' with uncommitted changes' if m.get('git_dirty') else ''}; "
                 f"Swoop sources at `{m['swoop_commit']}`.")
    lines.append("")
    if not res.get("complete"):
        lines.append("> This is not a complete full run (quick mode, `--only`, or fewer than 3 repetitions): "
                     "use it as a smoke test, not as the published numbers.")
        lines.append("")
    lines.append("This report states what was measured and how; it does not rank the servers. Every number "
                 "comes from this one machine in this one run; errors are counted in every table.")
    return "\n".join(lines)


def charts_section(made, rel):
    lines = ["## Charts", ""]
    for name, caption in (("throughput", "Throughput per scenario"),
                          ("latency", "Latency percentiles"), ("memory", "Memory")):
        if name in made:
            lines.append(f"![{caption}]({rel}/{name}.png)")
            lines.append("")
        elif name + "_error" in made:
            lines.append(f"{caption}: chart not drawn ({made[name + '_error']})")
            lines.append("")
    return "\n".join(lines)


def glance(res, subjects, scenarios):
    key = [s for s in ("plaintext-c256", "pipeline16-c256", "json-c256", "close-c256", "ab-k-c1000",
                       "autocannon-c100", "hammer", "route-static-c256", "route-param-c256") if s in scenarios]
    if not key:
        return ""
    base = {sc: baseline_rps(res, sc)[1] for sc in key}
    base_names = {sc: baseline(res, sc) for sc in key}
    rows = []
    for s in subjects:
        if res["subjects"][s]["kind"] == "none":
            continue
        cells = [res["subjects"][s]["title"]]
        for sc in key:
            r = aggregate.row(res, s, sc)
            if not r:
                cells.append("not run")
            elif not r["ok_runs"]:
                cells.append("failed")
            else:
                cells.append(f"{n0(r['rps'])} ({ratio(r['rps'], base[sc])})"
                             + (" ⚑" if r["errors_total"] else ""))
        rows.append(cells)
    used = []
    for sc in key:
        if base_names[sc] and base_names[sc] not in used:
            used.append(base_names[sc])
    if len(used) == 1:
        to = f"the ratio to {title_of(res, used[0])}"
    else:
        to = "the ratio to " + "; ".join(
            f"{title_of(res, b)} ({', '.join(sc for sc in key if base_names[sc] == b)})" for b in used)
    lines = ["## At a glance", "",
             f"Median requests per second; in brackets {to}. "
             "⚑ = errors in at least one repetition (see the scenario's table).", "",
             table(["Subject"] + key, rows)]
    return "\n".join(lines)


def _cpu(r):
    return "–" if r["server_cpu_ms_per_1k"] is None else f"{r['server_cpu_ms_per_1k']:.1f}"


def _bound(r):
    return " ‡" if r["flags"].get("load-generator-bound") else ""


def routing_section(res, subjects, scenarios):
    """The routing tier: samples/Api's routed handlers beside samples/Hello's raw one, and
    the routes beside their peers. Ratios are within this run."""
    lines = []
    scs = [sc for sc in ROUTED_VS_RAW_SCENARIOS if sc in scenarios]
    for routed, raw in ROUTED_VS_RAW:
        if routed not in subjects or raw not in subjects:
            continue
        rows = []
        for sc in scs:
            r1, r0 = aggregate.row(res, routed, sc), aggregate.row(res, raw, sc)
            if not (r1 and r0 and r1["ok_runs"] and r0["ok_runs"]):
                continue
            c0, c1 = r0["server_cpu_ms_per_1k"], r1["server_cpu_ms_per_1k"]
            rows.append([sc, f"{n0(r0['rps'])} ({n0(r0['rps_min'])}–{n0(r0['rps_max'])}){_bound(r0)}",
                         ms(r0["lat"]["p99"]), _cpu(r0),
                         f"{n0(r1['rps'])} ({n0(r1['rps_min'])}–{n0(r1['rps_max'])}){_bound(r1)}",
                         ms(r1["lat"]["p99"]), _cpu(r1),
                         ratio(r1["rps"], r0["rps"]), ratio(c0, c1) if c0 and c1 else "–"])
        if rows:
            lines += [f"### Routed beside raw: {title_of(res, routed)} and {title_of(res, raw)}", "",
                      "The same requests to samples/Hello (one hand-written handler: byte comparisons of the path, "
                      "a Utf8JsonWriter for /json) and to samples/Api (the web toolkit: /plaintext is `route` among "
                      "the app's routes with `text`, /json is `json` through the app's serializer). Median req/s "
                      "(min–max over repetitions), p99 in ms, server CPU ms per 1000 requests; then the ratio of "
                      "the req/s medians (routed ÷ raw) and of the CPU each request cost (raw ÷ routed: below 1 "
                      "when a routed request costs more). ‡ = load-generator-bound in at least one repetition: "
                      "its req/s is a floor, and the CPU ratio says more.", "",
                      table(["Scenario", "raw req/s", "p99 ms", "CPU ms/1k", "routed req/s", "p99 ms", "CPU ms/1k",
                             "req/s routed ÷ raw", "CPU raw ÷ routed"], rows), ""]
    route_scs = [sc for sc in scenarios if res["scenarios"][sc].get("tier") == "routing"]
    peers = [s for s in subjects if s in ROUTING_SUBJECTS]
    if route_scs and peers:
        cells = []
        for s in peers:
            row = [title_of(res, s)]
            for sc in route_scs:
                r = aggregate.row(res, s, sc)
                _, base = baseline_rps(res, sc)
                if not r:
                    row.append("not run")
                elif not r["ok_runs"]:
                    row.append("failed")
                else:
                    row.append(f"{n0(r['rps'])} ({ratio(r['rps'], base)}), p99 {ms(r['lat']['p99'])}, "
                               f"CPU {_cpu(r)}{_bound(r)}" + (" ⚑" if r["errors_total"] else ""))
            cells.append(row)
        b = {baseline(res, sc) for sc in route_scs} - {None}
        lines += [
            "### Routes beside their peers", "",
            "samples/Api's routing tier (100 static routes /r/0 .. /r/99 and the templates /r/%i/items/%s, "
            "/r/%i/users/%i, /hello/%s) and the same routes on the minimal API (endpoint routing, route "
            "constraints) and on Node.js http (a Map and a split-based matcher). Median req/s, in brackets the "
            f"ratio to {', '.join(title_of(res, x) for x in sorted(b)) or '–'}; p99 in ms; server CPU ms per "
            "1000 requests. ‡ = load-generator-bound in at least one repetition (req/s is a floor); ⚑ = errors. "
            "Full tables under Results by scenario.", "",
            table(["Subject"] + route_scs, cells)]
    if not lines:
        return ""
    return "\n".join(["## Routing tier", ""] + lines)


def _app_checks(res, s):
    return next((x.get("app_checks") for x in aggregate.sessions_of(res, s) if x.get("app_checks")), None)


def app_section(res, subjects, scenarios):
    """The app tier: a page rendered per request, a static stylesheet and JSON gzipped per
    request, on Swoop and its F# peers; Swoop's ratios to each peer taken repetition by
    repetition; the bodies each sent."""
    scs = [sc for sc in scenarios if res["scenarios"][sc].get("tier") == "app"]
    subs = [s for s in subjects if "app" in res["subjects"][s].get("tiers", [])]
    if not scs or not subs:
        return ""
    rows = []
    for sc in scs:
        for s in subs:
            r = aggregate.row(res, s, sc)
            if not r:
                continue
            if not r["ok_runs"]:
                rows.append([sc, title_of(res, s), "failed", "", "", "", ""])
                continue
            alloc = "–" if r["alloc_per_request"] is None else f"{r['alloc_per_request']:,.0f}"
            rows.append([sc, title_of(res, s),
                         f"{n0(r['rps'])} ({n0(r['rps_min'])}–{n0(r['rps_max'])}){_bound(r)}"
                         + (" ⚑" if r["errors_total"] else ""),
                         ms(r["lat"]["p99"]), _cpu(r), alloc, n0(r["bytes_per_request"])])
    lines = ["## App tier", "",
             "What a small site answers, on Swoop and on the F# peers that can express it, keep-alive at 32 "
             "connections: `app-page-c32` a catalogue page of 40 products rendered per request from an in-memory "
             "list with the same Giraffe.ViewEngine view on every subject (layout: head, nav, the list as a table, "
             "footer; Swoop answers it from a Template prepared at start-up); `app-view-c32` the same view with 100 "
             "products, its tree built and rendered per request on every subject (Swoop's and Giraffe's `htmlView`); "
             "`app-asset-c32` a 3.4 KiB stylesheet served as a static file; `app-json-gzip-c32` the same "
             "40 products serialised to JSON and gzipped per request (the request sends `Accept-Encoding: gzip`). "
             "Median req/s (min–max over repetitions), p99 in ms, server CPU ms per 1000 requests, bytes allocated "
             "per request, and bytes per response as wrk counted them (head and body). ‡ = load-generator-bound "
             "in at least one repetition (req/s is a floor); ⚑ = errors (see the scenario's table).", "",
             table(["Scenario", "Subject", "req/s (min–max)", "p99 ms", "CPU ms/1k", "alloc B/req", "bytes/resp."], rows)]
    if APP_SWOOP in subs:
        peers = [p for p in APP_PEERS if p in subs]
        ratio_rows = []
        for sc in scs:
            cells = [sc]
            for p in peers:
                rows_ = [aggregate.row(res, x, sc) for x in (APP_SWOOP, p)]
                bound = any(r_ and r_["flags"].get("load-generator-bound") for r_ in rows_)
                cells.append(spread(aggregate.rep_ratios(res, APP_SWOOP, p, sc)) + (" ‡" if bound else ""))
                cells.append(spread(aggregate.rep_ratios(res, p, APP_SWOOP, sc, "server_cpu_ms_per_1k")))
            ratio_rows.append(cells)
        if peers:
            head = ["Scenario"]
            for p in peers:
                short = res["subjects"][p].get("short", p)
                head += [f"req/s Swoop ÷ {short}", f"CPU/req {short} ÷ Swoop"]
            lines += ["", "Swoop's ratios to each peer, taken repetition by repetition (Swoop's req/s in a repetition "
                      "÷ the peer's in the same repetition; the peer's server CPU per request ÷ Swoop's, above 1 "
                      "when a Swoop request costs less): the median of those ratios, then their min–max. ‡ = load-generator-"
                      "bound in at least one repetition: the req/s ratio is then a floor, and the CPU ratio says more.", "",
                      table(head, ratio_rows)]
    bodies, heads, problems = [], [], []
    for s in subs:
        checks = _app_checks(res, s)
        if not checks:
            continue
        cells = [title_of(res, s)]
        for key, _ in APP_BODIES:
            c = checks.get(key) or {}
            if c.get("body_bytes") is None:
                cells.append("–")
            elif key == "json-gzip":
                cells.append(f"{c['body_bytes']:,} (decoded {c['decoded_bytes']:,}, {c['sha256']})")
            else:
                cells.append(f"{c['body_bytes']:,} ({c['sha256']})")
            if not c.get("ok"):
                cells[-1] += " ✗"
                problems.append(f"{title_of(res, s)} {key}: {c.get('problem')}")
        bodies.append(cells)
        if (checks.get("json-gzip") or {}).get("head"):
            heads.append((title_of(res, s), checks["json-gzip"]["head"]))
    if bodies:
        same = {}
        for key, label in APP_BODIES:
            digests = {(c.get(key) or {}).get("sha256") for c in (_app_checks(res, s) for s in subs) if c}
            sizes = {(c.get(key) or {}).get("body_bytes") for c in (_app_checks(res, s) for s in subs) if c}
            same[label] = (len(digests) == 1 and None not in digests, len(sizes) == 1)
        identical = [l for l, (d, _) in same.items() if d]
        differ = [l for l, (_, z) in same.items() if not z]
        summary = ("Decoded bodies identical on every subject (size and SHA-256): " + (", ".join(identical) or "none")
                   + ". Sizes on the wire that differ: " + (", ".join(differ) or "none") + ".")
        lines += ["", "The bodies each subject sent (one request per endpoint after start, read from a raw socket): "
                  "size in bytes and the first 16 hex digits of the SHA-256 of the decoded body. The gzip answers "
                  "are checked to decode to the same JSON. " + summary, "",
                  table(["Subject"] + [label for _, label in APP_BODIES], bodies)]
        if heads:
            lines += ["", "Response head of the gzipped JSON per subject:", ""]
            for title, head in heads:
                lines += [f"{title}:", "```", head.replace("\r\n", "\n"), "```"]
        if problems:
            lines += ["", "App checks that failed: " + "; ".join(problems) + "."]
    if "suave-app" in subs:
        lines += ["", "What each peer can express: all three render the page, serve the file and gzip dynamic JSON. "
              "Suave's gzip is not configurable: it compresses every byte body over 500 bytes at GZipStream's default "
              "level (Optimal), where Swoop and ASP.NET Core's middleware use the fastest level; its smaller compressed "
              "body is more work per request, so that row is the same request, not the same work."]
    return "\n".join(lines)


def machine_section(res):
    m = res["machine"]
    rows = [
        ("CPU", f"{m['cpu_model']} ({m['cores']} cores, {m['threads_per_core']} thread(s) per core, {m['cpu_mhz']} MHz); "
                f"hypervisor: {m['hypervisor']}; governor: {m['governor']}"),
        ("Memory", f"{m['memory_gib']} GiB"),
        ("OS / kernel", f"{m['os']} / {m['kernel']}"),
        (".NET", f"SDK {m['dotnet_sdk']}, runtime {m['dotnet_runtime']}, ASP.NET Core {m['aspnetcore_runtime']}"),
        ("Node.js", m["node"]), ("nginx", m["nginx"]), ("wrk", m["wrk"]), ("ApacheBench", m["ab"]),
        ("autocannon", m["autocannon"]), ("gnuplot", m["gnuplot"]), ("Python", m["python"]),
        ("sysctl", ", ".join(f"{k}={v}" for k, v in m["sysctl"].items())),
        ("open files limit", m["nofile_limit"]),
    ]
    return "## Machine\n\n" + table(["", ""], [(a, str(b).replace("\t", " ")) for a, b in rows], ["l", "l"])


def method_section(res):
    mo = res["mode_settings"]
    c = res["cores"]
    lines = ["## Method", ""]
    lines += [
        f"- **Pinning.** The server runs on core {c['server']} (`taskset -c {c['server']}`, the whole process tree); "
        f"the load tool and this runner on core {c['loadgen']}. wrk uses one thread (`-t1`).",
        f"- **Repetitions.** {mo['reps']} repetition(s), interleaved across subjects (A B C … A B C …): each repetition "
        "starts every subject afresh, runs all its scenarios, and stops it. Tables give the median over repetitions "
        "with min–max; errors are summed over all repetitions.",
        f"- **Warm-up, discarded.** After start: the `time-seq` scenario (which is meant to see the cold server), "
        f"the endpoint checks, then wrk at 256 connections on /plaintext and then /json for {mo['session_warmup']} s "
        "each (the routing tier's subjects: /plaintext, /json, /r/57 and /r/42/items/abc, "
        f"{max(1, round(mo['session_warmup'] / 2))} s each; the app tier's: its page, stylesheet and gzipped JSON, "
        f"{max(1, round(2 * mo['session_warmup'] / 3))} s each; the same {2 * mo['session_warmup']} s in all). It is long on purpose: on one core the .NET thread pool's hill climbing took about 20 s of load to "
        "settle (Kestrel raw went from about 25k to about 60k req/s on plaintext at 256 connections between "
        "seconds 15 and 24 after start in a trial on this machine), and a shorter warm-up would measure that ramp "
        "instead of the server." + (f" Before every wrk measurement, {mo['wrk_warmup']} s more of the same command."
                                    if mo.get("wrk_warmup") else ""),
        f"- **Durations.** wrk {mo['wrk_seconds']} s per measurement; `ab` {mo['ab_requests']:,} requests; "
        f"autocannon {mo['autocannon_seconds']} s per repetition; hammer {mo['hammer_seconds']} s; time-seq "
        f"{mo['time_runs']} runs of {mo['time_requests']} requests. Chosen so that the full mode fits 30 minutes "
        "on 2 cores; runs are shorter than the 30 s of the earlier write-ups' autocannon runs, which is stated here "
        "rather than hidden. Runs are short (3 s for wrk), so the medians of the interleaved repetitions and "
        "their min–max matter more than any single figure.",
        "- **Between subjects.** The whole session (process group) gets SIGTERM, then SIGKILL after 5 s; the runner then "
        "checks that no process of that session is left and that nothing listens on the port before the next start.",
        "- **Requests per second.** Responses completed divided by the tool's measured time. With pipelining, wrk "
        "counts every response once (its latency samples are per batch of 16). For autocannon the figure is its own "
        "mean of per-second samples. For ab, its `Requests per second`.",
        "- **Latency.** wrk: exact percentiles from its histogram (printed by `bench/wrk/report.lua`); max over "
        "repetitions. ab: its percentile table (1 ms resolution). hammer: mean / min / max per request. "
        "A dash where wrk returned no percentile (its histogram can come up short with pipelining).",
        "- **Open loop** (`open*` scenarios). The paced meter `tests/faults/lat.c` sends a fixed rate on 32 "
        "keep-alive connections, each on its own schedule whether or not its last answer came back, and times a "
        "request from when it was due (no coordinated omission): p50, p99, p99.9 and max (10 µs bins, exact max); "
        "the rate is a share of the slowest chosen subject's plaintext-c32 in the published run. **below-rate** "
        "flags a subject that could not keep up." + _polling_note(res),
        "- **Errors.** wrk: connect, read, write, timeout (> 2 s) socket errors plus responses with status ≥ 400; ab: "
        "failed requests plus non-2xx; autocannon: errors, timeouts, non-2xx; hammer: failed exchanges. Always shown.",
        "- **CPU.** Server: utime+stime of every process of its session, from /proc, before and after the run; given "
        "as CPU milliseconds per 1000 requests and as the share of its core. Load tool: its rusage (wait4). A run is "
        "flagged **load-generator-bound** when the load tool kept ≥ 90% of its core busy: its number is then a floor "
        "for the server, not its capacity.",
        "- **Context switches.** `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` of every thread of "
        "every process of the server's session (`/proc/<pid>/task/<tid>/status`: nginx's master and worker, every "
        "thread of a .NET or Node.js process), read before and after the run; the differences summed and divided "
        "by the responses. Voluntary: a thread blocked (waited for a socket, a lock, a timer); involuntary: it left "
        "the core while still runnable (preempted, or a `sched_yield` that let another thread run). A thread that exited during the run takes its switches with it (the "
        "count of such threads is kept in results.json).",
        "- **System calls.** " + ("Counted in a separate short run per subject and scenario (first repetition, "
                                  "after the measurements) with `perf stat` attached to the server; see the section "
                                  "on system calls and context switches per request."
                                  if (res.get("syscalls") or {}).get("enabled") else
                                  "Not counted in this run" + (f" ({res['syscalls']['error']})"
                                                               if res.get("syscalls") else "") + "."),
        "- **Memory.** RSS summed over the server's process tree: idle = 1 s after the first response; peak = the "
        "highest 100 ms sample during any measurement.",
        "- **Start-up.** From spawning the process to the first `200` on /plaintext (polled every 5 ms on fresh "
        "connections).",
        "- **Allocation.** .NET subjects expose `GET /debug/gc` (`GC.GetTotalAllocatedBytes(true)` and collection "
        "counts) when `BENCH_DEBUG=1` / `SWOOP_DEBUG=1`; it is read before and after each measurement, and the "
        "difference divided by the responses completed.",
        "- **Other load.** CPU used by processes other than the server, the load tool and the runner during a "
        "measurement, and the hypervisor's steal time, are recorded; a run is flagged **other-load** (≥ 15% of a "
        "core) or **steal** (≥ 5% of a core stolen). This machine is shared, so such flags can appear. Before "
        "each session the runner also waits (up to 90 s) while other processes use more than a quarter of a "
        "core, and notes the sessions that had to start anyway.",
    ]
    lines += ["", "Load commands (port as in this run):", ""]
    pin = f"taskset -c {res['cores']['loadgen']} "
    for name, sc in res["scenarios"].items():
        lines.append(f"- `{name}`: {code(pin + sc['command'])}")
    return "\n".join(lines)


def subjects_section(res, subjects):
    lines = ["## Subjects and their configuration", "",
             "Release builds, logging off, Server header off where the server allows it, each configured as its "
             "own documentation recommends for production; what differs between subjects at run time is listed.", ""]
    rows = []
    for s in subjects:
        info = res["subjects"][s]
        st = info.get("settings") or {}
        rt = []
        if st.get("native_aot"):
            rt.append("native AOT (no JIT), GC workstation non-concurrent, invariant globalization")
        elif st.get("gc"):
            rt.append(f"GC {st['gc']}")
            rt.append("TieredPGO " + ("on" if st.get("tiered_pgo") else "off"))
            rt.append("ReadyToRun code " + ("used" if st.get("ready_to_run") else "off (DOTNET_ReadyToRun=0)"))
            if st.get("invariant_globalization"):
                rt.append("invariant globalization")
        env = st.get("env") or {}
        if env:
            rt.append("env " + ", ".join(f"{k}={v}" for k, v in env.items()))
        build = info["build"]
        status = "ok" if build.get("ok") else f"**failed to build**: {build.get('error')}"
        rows.append((info["title"], info["summary"], "; ".join(rt) or "–", status))
    lines.append(table(["Subject", "Configuration", "Runtime settings", "Build"], rows, ["l", "l", "l", "l"]))
    lines += ["", "Server command lines:", ""]
    for s in subjects:
        cmd = next((x.get("command") for x in aggregate.sessions_of(res, s) if x.get("command")), None)
        if cmd:
            lines.append(f"- {res['subjects'][s]['title']}: {code(cmd)}")
    return "\n".join(lines)


def scenario_table(res, sc, subjects):
    info = res["scenarios"][sc]
    base_name, base = baseline_rps(res, sc)
    tool = info["tool"]
    rows = []
    for s in subjects:
        r = aggregate.row(res, s, sc)
        if r is None:
            continue
        title = res["subjects"][s]["title"]
        if not r["ok_runs"]:
            err = "; ".join(sorted(set(e for e in r["errors_runs"] if e)))[:200]
            rows.append([title, f"failed: {err}"] + [""] * 13)
            continue
        flags = ", ".join(f"{k} ({v}/{r['runs']})" for k, v in r["flags"].items())
        if r["ok_runs"] < r["runs"]:
            flags = (flags + "; " if flags else "") + f"{r['runs'] - r['ok_runs']} run(s) failed"
        lat = r["lat"]
        if tool == "hammer":
            lat_cells = [ms(lat["mean"]), ms(lat.get("min")), "–", ms(lat["max"])]
        elif tool == "lat":
            lat_cells = [ms(lat["p50"]), ms(lat["p99"]), ms(lat.get("p999")), ms(lat["max"])]
        else:
            lat_cells = [ms(lat["p50"]), ms(lat["p90"]), ms(lat["p99"]), ms(lat["max"])]
        rows.append([title, n0(r["rps"]), f"{n0(r['rps_min'])}–{n0(r['rps_max'])}", ratio(r["rps"], base),
                     *lat_cells, n0(r["errors_total"]),
                     "–" if r["server_cpu_ms_per_1k"] is None else f"{r['server_cpu_ms_per_1k']:.1f}",
                     pct(r["server_busy"]), per_req(r["switches_vol"]), per_req(r["switches_invol"]),
                     pct(r["loadgen_busy"]), mib(r["peak_rss_kb"]), flags or ""])
    lat_names = (["mean ms", "min ms", "–", "max ms"] if tool == "hammer"
                 else ["p50 ms", "p99 ms", "p99.9 ms", "max ms"] if tool == "lat"
                 else ["p50 ms", "p90 ms", "p99 ms", "max ms"])
    head = ["Subject", "req/s", "min–max", f"vs {title_of(res, base_name)}", *lat_names, "errors", "server CPU ms/1k req",
            "server core", "ctx switches/req vol.", "invol.", "load-tool core", "peak RSS MiB", "flags"]
    lines = [f"### {sc}: {info['title']}", "", code(f"taskset -c {res['cores']['loadgen']} " + info["command"]), ""]
    if rows:
        lines.append(table(head, rows))
    errs = []
    for s in subjects:
        r = aggregate.row(res, s, sc)
        if r and r["errors_total"]:
            detail = ", ".join(f"{k} {v:,}" for k, v in r["errors"].items() if v)
            errs.append(f"{res['subjects'][s]['title']}: {detail}"
                        + (f" (first: {r['first_error']})" if r.get("first_error") else ""))
        if r and tool == "ab" and r.get("keep_alive_requests") is not None and r["ok_runs"]:
            pass
    if errs:
        lines += ["", "Errors by kind, summed over repetitions: " + "; ".join(errs) + "."]
    if tool == "ab":
        ka = []
        for s in subjects:
            r = aggregate.row(res, s, sc)
            if r and r["ok_runs"] and r.get("keep_alive_requests") is not None:
                ka.append(f"{res['subjects'][s]['title']} {n0(r['keep_alive_requests'])}")
        if ka:
            lines += ["", "Requests ab saw answered on a kept-alive connection (median): " + "; ".join(ka) + "."]
    return "\n".join(lines)


def results_section(res, subjects, scenarios):
    groups = []
    for sc in scenarios:
        g = res["scenarios"][sc]["group"]
        if g not in groups:
            groups.append(g)
    # The load-generator scenarios first, the earlier write-ups' methods last.
    groups.sort(key=lambda g: g.startswith("methods"))
    if not any(aggregate.measurements(res, s, sc) for s in subjects for sc in scenarios):
        return ""
    lines = ["## Results by scenario", ""]
    for g in groups:
        scs = [sc for sc in scenarios if res["scenarios"][sc]["group"] == g and sc != "time-seq"]
        if not scs:
            continue
        lines.append(f"## {g[0].upper() + g[1:]}")
        lines.append("")
        for sc in scs:
            lines.append(scenario_table(res, sc, subjects))
            lines.append("")
    return "\n".join(lines)


def time_section(res, subjects):
    if "time-seq" not in res["scenarios"]:
        return ""
    rows = []
    for s in subjects:
        ms_ = aggregate.measurements(res, s, "time-seq")
        if not ms_:
            continue
        ok = [m for m in ms_ if m.get("ok") and m.get("runs")]
        if not ok:
            rows.append([res["subjects"][s]["title"], "failed: " + str(ms_[0].get("error") or ms_[0].get("first_error")),
                         "", "", "", ""])
            continue
        firsts = [m["runs"][0]["seconds"] * 1000 for m in ok]
        others = [r["seconds"] * 1000 for m in ok for r in m["runs"][1:]]
        alls = [r["seconds"] * 1000 for m in ok for r in m["runs"]]
        errors = sum(m.get("errors_total") or 0 for m in ms_)
        rows.append([res["subjects"][s]["title"], f"{aggregate.med(firsts):.1f} ({min(firsts):.1f}–{max(firsts):.1f})",
                     f"{aggregate.med(others):.1f}" if others else "–",
                     f"{min(alls):.1f}–{max(alls):.1f}",
                     f"{aggregate.med([r['maxMs'] for m in ok for r in m['runs']]):.2f}", n0(errors)])
    mo = res["mode_settings"]
    lines = ["### time-seq: 1000 sequential requests to GET /time", "",
             f"One client, one keep-alive connection, {mo['time_requests']} sequential `GET /time` (current date and time as JSON), "
             f"timed end to end, {mo['time_runs']} runs back to back. The first run starts right after the server's "
             "first response, so it includes the server's cold paths (JIT for .NET). Milliseconds for the whole run; "
             "medians over repetitions.", "", code(res["scenarios"]["time-seq"]["command"]), "",
             table(["Subject", "first run ms (min–max)", "runs 2–5 median ms", "all runs min–max ms",
                    "slowest request ms (median)", "errors"], rows)]
    return "\n".join(lines)


def hammer_detail(res, subjects):
    if "hammer" not in res["scenarios"]:
        return ""
    lines = ["### hammer, second by second (first repetition)", "",
             "The hammer (bench/hammer, F# on raw sockets) prints one line a second: requests done, latency mean, min "
             "and max. Its output for the first repetition of each subject:", ""]
    for s in subjects:
        ms_ = [m for m in aggregate.measurements(res, s, "hammer") if m.get("per_second")]
        if not ms_:
            continue
        lines.append(f"{res['subjects'][s]['title']}:")
        lines.append("")
        lines.append("```")
        for p in ms_[0]["per_second"]:
            lines.append(f"[{p['t']:5.1f} s] {p['requests']:7d} req  mean {p['meanMs']:7.3f} ms  "
                         f"min {p['minMs']:7.3f} ms  max {p['maxMs']:8.3f} ms  errors {p['errors']}")
        lines.append("```")
        lines.append("")
    return "\n".join(lines)


def _polling_note(res):
    """Where idle CPUs polled instead of halting (PM QoS, /dev/cpu_dma_latency held at 0)."""
    why = (" On a virtual machine a halted vCPU can take a millisecond or more to be woken by the host: "
           "a server that sleeps between requests (one connection, one new connection at a time, a paced "
           "load) would be charged for it, and one that spins would not.")
    if res.get("polling_idle"):
        return " Idle CPUs poll instead of halting throughout the run (PM QoS: `/dev/cpu_dma_latency` held at 0)." + why
    if res.get("polling_idle") is False:
        return " Idle CPUs could NOT be kept from halting (no access to `/dev/cpu_dma_latency`)." + why
    # Run 2026-11-27_0941 held it per measurement, in its open-loop scenarios only.
    held = [m.get("polling_idle") for ses in res.get("sessions", []) for m in ses.get("measurements", [])
            if "polling_idle" in m]
    if not held:
        return ""
    return (" During these scenarios only, idle CPUs polled instead of halting (PM QoS: `/dev/cpu_dma_latency` held "
            "at 0" + ("" if all(held) else "; NOT in some") + "); the other scenarios of this run let them halt." + why)


def settled(st):
    """The settled RSS and its ratio to idle across sessions: "7.2 (1.03–1.06x)"."""
    if not st.get("settled_rss_kb"):
        return "–"
    r = st["settled_ratios"]
    return f"{mib(st['settled_rss_kb'])} ({min(r):.2f}–{max(r):.2f}x)" if r else mib(st["settled_rss_kb"])


def startup_section(res, subjects):
    rows = []
    for s in subjects:
        if res["subjects"][s]["kind"] == "none":
            continue
        st = aggregate.startup(res, s)
        if not st["sessions"]:
            continue
        if not st["started"]:
            rows.append([res["subjects"][s]["title"], "did not start: " + "; ".join(sorted(set(st["errors"])))[:200],
                         "", "", "", "", "", ""])
            continue
        rows.append([res["subjects"][s]["title"],
                     f"{st['first_response_s'] * 1000:.0f} ({st['first_min'] * 1000:.0f}–{st['first_max'] * 1000:.0f})",
                     "–" if st["startup_cpu_s"] is None else f"{st['startup_cpu_s']:.2f}",
                     mib(st["idle_rss_kb"]), mib(st["peak_rss_kb"]), settled(st), n0(st["processes"]),
                     f"{st['clean_stops']}/{st['sessions']}"])
    if not rows:
        return ""
    return "\n".join(["## Start-up and memory", "",
                      "First response: milliseconds from spawning the process to the first 200 (median, min–max). "
                      "CPU: seconds of CPU the tree used until 1 s after that. RSS of the whole process tree in MiB; "
                      "settled: 10 s after the session's last measured scenario, with its ratio to idle per "
                      "session (min–max).", "",
                      table(["Subject", "first response ms", "start-up CPU s", "idle RSS", "peak RSS under load",
                             "settled RSS (x idle)", "processes", "clean stops"], rows)])


def allocation_section(res, subjects, scenarios):
    keys = [s for s in ("plaintext-c32", "plaintext-c256", "pipeline16-c256", "json-c256", "close-c256",
                        "route-static-c256", "route-param-c256", "app-page-c32", "app-view-c32", "app-asset-c32",
                        "app-json-gzip-c32")
            if s in scenarios]
    rows = []
    for s in subjects:
        if res["subjects"][s]["kind"] != "dotnet":
            continue
        cells = [res["subjects"][s]["title"]]
        any_ = False
        for sc in keys:
            r = aggregate.row(res, s, sc)
            if r and r["alloc_per_request"] is not None:
                any_ = True
                cells.append(f"{r['alloc_per_request']:,.0f} B"
                             + (f" · {r['gen0_per_100k']:.1f}" if r.get("gen0_per_100k") is not None else ""))
            else:
                cells.append("–")
        if any_:
            rows.append(cells)
    if not rows:
        return ""
    return "\n".join(["## Allocation per request on the live server", "",
                      "Bytes allocated per response (`GC.GetTotalAllocatedBytes(true)` difference over the measured "
                      "run ÷ responses), then after the dot the gen-0 collections per 100,000 responses. Medians over "
                      "repetitions. Includes everything the process allocated meanwhile (timers, connection setup in the "
                      "close scenario).", "",
                      table(["Subject"] + keys, rows)])


def bytes_section(res, subjects):
    rows = []
    heads = []
    for s in subjects:
        checks = next((x.get("checks") for x in aggregate.sessions_of(res, s) if x.get("checks")), None)
        if not checks:
            continue
        cells = [res["subjects"][s]["title"]]
        for path in probe.BASIC_PATHS:
            c = checks.get(path) or {}
            cells.append(("–" if c.get("bytes") is None else str(c["bytes"])) + ("" if c.get("ok") else " ✗"))
        rows.append(cells)
        if checks.get("/plaintext", {}).get("head"):
            heads.append((res["subjects"][s]["title"], checks["/plaintext"]["head"]))
    if not rows:
        return ""
    lines = ["## Response bytes per request", "",
             "Bytes on the wire for one keep-alive response (status line, headers, body), read from a raw socket. "
             "✗ marks a response whose status, content type or body was not the expected one (see below).", "",
             table(["Subject", *probe.BASIC_PATHS], rows), ""]
    routed = []
    for s in subjects:
        checks = next((x.get("checks") for x in aggregate.sessions_of(res, s) if x.get("checks")), None)
        if not checks or "/r/57" not in checks:
            continue
        cells = [res["subjects"][s]["title"]]
        for path in probe.ROUTING_PATHS:
            c = checks.get(path) or {}
            cells.append(("–" if c.get("bytes") is None else str(c["bytes"])) + ("" if c.get("ok") else " ✗"))
        cells.append(f"{sum(1 for c in checks.values() if c.get('ok'))}/{len(checks)}")
        routed.append(cells)
    if routed:
        lines += ["Routing tier: the same, and how many of its endpoint checks passed (the answers of "
                  "samples/Api on " + ", ".join(f"`{p}`" for p, v in probe.EXPECTED_ROUTING.items() if v[0] == 200) + "; /r/100, "
                  "/r/x/items/abc and /r/42/users/x must be 404):", "",
                  table(["Subject", *probe.ROUTING_PATHS, "checks passed"], routed), ""]
    lines += ["Response head of `GET /plaintext` per subject:", ""]
    for title, head in heads:
        lines.append(f"{title}:")
        lines.append("```")
        lines.append(head.replace("\r\n", "\n"))
        lines.append("```")
    problems = []
    for s in subjects:
        checks = next((x.get("checks") for x in aggregate.sessions_of(res, s) if x.get("checks")), None) or {}
        for path, c in checks.items():
            if not c.get("ok"):
                problems.append(f"{res['subjects'][s]['title']} {path}: {c.get('problem')}")
    if problems:
        lines += ["", "Endpoint checks that failed: " + "; ".join(problems) + "."]
    return "\n".join(lines)


def micro_section(res):
    mic = res.get("micro")
    if not mic:
        return "## Micro-benchmarks\n\nNot run in this invocation (`--no-micro`, or `--only` without `micro`)."
    lines = ["## Micro-benchmarks (BenchmarkDotNet)", ""]
    if mic.get("error"):
        lines.append(f"Did not complete: {mic['error']}")
    if mic.get("description"):
        lines.append(mic["description"])
        lines.append("")
    if mic.get("rows"):
        lines.append(table(mic["headers"], mic["rows"]))
    for note in mic.get("notes", []):
        lines += ["", note]
    return "\n".join(lines)


def failures_section(res, subjects):
    lines = []
    for s in subjects:
        info = res["subjects"][s]
        if not info["build"].get("ok"):
            lines.append(f"- {info['title']}: failed to build: {info['build'].get('error')}")
            continue
        for x in aggregate.sessions_of(res, s):
            for inc in x.get("incidents") or []:
                lines.append(f"- {info['title']}, repetition {x['rep']}: {inc}")
            for m in x.get("measurements", []):
                if m.get("invalid"):
                    errs = ", ".join(f"{k} {v:,}" for k, v in (m.get("errors") or {}).items() if v)
                    lines.append(f"- {info['title']}, repetition {x['rep']}, {m['scenario']}: not counted "
                                 f"({m.get('rps') or 0:,.0f} req/s" + (f"; errors {errs}" if errs else "") + ")")
            if x.get("error") and not x.get("incidents"):
                lines.append(f"- {info['title']}, repetition {x['rep']}: {x['error']}")
            elif x.get("error") and "skipped" in x["error"]:
                lines.append(f"- {info['title']}, repetition {x['rep']}: the remaining scenarios were skipped")
            if x.get("clean_stop") is False:
                lines.append(f"- {info['title']}, repetition {x['rep']}: did not stop cleanly (processes or the port were left)")
    busy = [f"{res['subjects'][x['subject']]['title']} (repetition {x['rep']}: {x['other_load_before']:.2f} cores"
            + (f", after waiting {x['waited_for_quiet_s']:.0f} s" if x.get("waited_for_quiet_s") else "") + ")"
            for x in res["sessions"] if (x.get("other_load_before") or 0) > 0.25]
    notes = ["## Failures and notes", ""]
    notes += lines or ["- None: every subject that was built started and stopped cleanly."]
    if busy:
        notes += ["", "Sessions that started while other processes on the machine were busy (cores used by them "
                      "just before the start): " + "; ".join(busy) + ". Their measurements carry `other-load` "
                      "flags where it lasted."]
    if any(res["subjects"][s]["kind"] == "dotnet" and not res["subjects"][s]["build"].get("ok") and
           "NU1101" in str(res["subjects"][s]["build"].get("error")) for s in subjects):
        notes += ["", "Giraffe and Suave: the NuGet feed this machine reaches did not serve these packages (`NU1101`), "
                      "so those two subjects could not be built. Their projects stay in `bench/subjects/` and join a run "
                      "wherever the feed serves them."]
    if "noserver" in subjects:
        notes += ["", "No-server control: nothing listens on the port. wrk refuses to start when its first connection "
                      "is refused, and ab aborts on the first refused connection, so those rows show a failure, which "
                      "is the tools' own behaviour; the hammer and autocannon rows show how many refused connection "
                      "attempts per second a client manages and what it costs the load core."]
    return "\n".join(notes)


# ---------------------------------------------------------------- assembly

def _load_scenarios(res):
    """The scenarios measured by a load tool (the live group's are reported on their own)."""
    return [sc for sc, info in res["scenarios"].items() if info["tool"] not in live.TOOLS]


def _newest_separate_run(prefix):
    """The name and body (its first line, the title, left out; its sections one level down) of
    the newest saved run of a separate command (bench/results/PREFIX*/report.md), or None."""
    runs = sorted(d for d in os.listdir(RESULTS) if d.startswith(prefix) and
                  os.path.exists(os.path.join(RESULTS, d, "report.md")))
    if not runs:
        return None
    with open(os.path.join(RESULTS, runs[-1], "report.md")) as f:
        body = f.read().split("\n", 1)[1].strip()
    return runs[-1], body.replace("\n## ", "\n### ")


def database_section():
    """The newest `bench/db/run --save` run, as its own section: it is a separate command with
    its own PostgreSQL cluster, not part of this run."""
    found = _newest_separate_run("db-")
    if not found:
        return ""
    run, body = found
    return ("## With a database\n\n"
            f"TechEmpower's test types on PostgreSQL: Swoop's `samples/Fortunes` beside its peers, measured by "
            f"`bench/db/run` on the same machine but not in the run above (database run: {run}, "
            f"`bench/results/{run}/`). Where each server's CPU goes, and what limits each test, is in "
            "docs/guide.md (\"Using a database\").\n\n" + body)


def tls_section():
    """The newest `bench/tls/suite --save` run, as its own section: a separate command
    (handshakes, resumption, requests and a file over TLS)."""
    found = _newest_separate_run("tls-")
    if not found:
        return ""
    run, body = found
    return ("## Over TLS\n\n"
            f"HTTPS beside nginx and Kestrel, measured by `bench/tls/suite` on the same machine but not in "
            f"the run above (run: {run}, `bench/results/{run}/`). Where a handshake's CPU goes is in "
            "docs/performance.md (\"What a handshake costs\").\n\n" + body)


def build(res, chart_rel, made):
    subjects = list(res["subjects"].keys())
    scenarios = _load_scenarios(res)
    parts = [header(res), glance(res, subjects, scenarios), report_behind.section(res, subjects, scenarios),
             routing_section(res, subjects, scenarios),
             app_section(res, subjects, scenarios), database_section(), tls_section(), report_bodies.section(res, subjects, scenarios),
             report_live.section(res, subjects, list(res["scenarios"].keys())),
             charts_section(made, chart_rel),
             machine_section(res), subjects_section(res, subjects), method_section(res),
             results_section(res, subjects, scenarios), time_section(res, subjects), hammer_detail(res, subjects),
             startup_section(res, subjects), allocation_section(res, subjects, scenarios),
             report_syscalls.section(res, subjects, scenarios),
             bytes_section(res, subjects), micro_section(res), failures_section(res, subjects)]
    return "\n\n".join(p for p in parts if p) + "\n"


def write(res, publish=False):
    stamp = res["stamp"]
    out_dir = os.path.join(RESULTS, stamp)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    work = os.path.join(BENCH, ".work", "charts", stamp)
    subjects = list(res["subjects"].keys())
    scenarios = _load_scenarios(res)
    made = charts.all_charts(res, subjects, scenarios, out_dir, work)
    md_path = os.path.join(RESULTS, f"{stamp}.md")
    with open(md_path, "w") as f:
        f.write(build(res, stamp, made))
    if publish:
        latest = os.path.join(RESULTS, "latest")
        os.makedirs(latest, exist_ok=True)
        for name in ("throughput", "latency", "memory"):
            if name in made:
                shutil.copyfile(made[name], os.path.join(latest, f"{name}.png"))
        docs = os.path.join(REPO, "docs")
        os.makedirs(docs, exist_ok=True)
        with open(os.path.join(docs, "benchmarks.md"), "w") as f:
            f.write(build(res, f"../bench/results/{stamp}", made))
    return md_path


if __name__ == "__main__":
    # Re-render a report from a saved results.json: python3 bench/lib/report.py PATH [--publish]
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print(write(data, publish="--publish" in sys.argv))
