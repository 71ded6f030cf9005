"""Builds and runs the BenchmarkDotNet micro-benchmarks (bench/micro) pinned to the
server core, and turns BenchmarkDotNet's JSON export into report rows."""
import glob
import json
import os
import subprocess
import time

import subjects as subj

PROJECT = "bench/micro/Swoop.Benchmarks.fsproj"
REQUESTS_PER_INPUT = {"short": 1, "browser": 1, "pipelined16": 16}

DESCRIPTION = (
    "In-process BenchmarkDotNet runs pinned to the server core (`taskset -c 0`). Parser: the same request bytes "
    "for both parsers (a short GET as wrk sends it; a browser-like GET with 12 headers; 16 short GETs in one "
    "buffer). Kestrel's `HttpParser<T>` is driven through its public `IHttpRequestLineHandler` / "
    "`IHttpHeadersHandler` interfaces with a handler that only records what Swoop's `RequestHead` records; "
    "Kestrel's own header-dictionary work after tokenising is internal and not included, while Swoop's figure "
    "includes its interpretation of the framing headers. Response writing: Swoop's `HttpContext` writing a whole "
    "response into its output buffer as the connection loop does (socket send excluded); Kestrel's response "
    "writer is internal, so it has no row. Route lookup: the web toolkit's compiled routes finding a request's "
    "handler as `Web.handler` does (the path decoded into the toolkit's per-connection state, then the compiled "
    "`choose`) on a context built over a real parsed request; the handlers at the end only record that they ran "
    "(no response written), so the time and bytes are the router's plus the `routef` values it binds (a string "
    "value and a tuple are allocations of the handler's argument). Tables: one static route (GET /r/57); "
    "samples/Api's route table in its order and with its method filters (/openapi.json; GET /plaintext, /json, /time, "
    "/hello/%s; /users for GET and POST; /users/%i for GET, PUT and DELETE; GET /r/0 .. /r/99, "
    "/r/%i/items/%s, /r/%i/users/%i: 105 static paths and 6 templates); once more with samples/Api's own "
    "handler on /r/%i/items/%s (`text (sprintf ...)`, its body written after the response is reset), the "
    "difference being the handler's. Times are the median of the measured iterations, per request (per 16 for the pipelined input, divided). "
    "BenchmarkDotNet 0.14 labels the .NET 10 host `DEBUG`; that label comes from the entry assembly's "
    "DebuggableAttribute (JIT tracking), not from disabled optimisation, which BenchmarkDotNet refuses to run.")

NOTES = []

# Route-lookup benchmarks: (table, request) per method of RouterBenchmarks.
ROUTER_CASES = {
    "Static1": ("1 static route", "GET /r/57"),
    "Static100": ("samples/Api routes (105 static paths, 6 templates)", "GET /r/57"),
    "RoutefInt": ("samples/Api routes", "GET /users/42 (routef %i)"),
    "RoutefString": ("samples/Api routes", "GET /hello/abc (routef %s)"),
    "RoutefIntString": ("samples/Api routes", "GET /r/42/items/abc (routef %i %s)"),
    "Miss100": ("samples/Api routes", "GET /nothing/here (no route: 404)"),
    "RoutefIntStringApiHandler": ("samples/Api routes and handler",
                                  "GET /r/42/items/abc with `text (sprintf \"item %d %s\" i s)`, body written"),
}


# Pinned to one core, the runtime sees one processor and multiplies its tiering delay by 10
# (TC_DelaySingleProcMultiplier): code JIT-compiled at start (Swoop's, not Kestrel's
# precompiled code) then runs at tier 0 for about 2 s, which BenchmarkDotNet's warm-up takes
# for steady state, so tier 1 arrives in the middle of the measured iterations (medians from
# 0.2 to 2 us for the same parser). The usual 100 ms delay gives every subject tier 1 before
# the measurement starts.
ENV = dict(os.environ, DOTNET_TC_DelaySingleProcMultiplier="1")


def run(mode, log_dir, line):
    out_dir = os.path.join(subj.BIN, "micro")
    line("micro-benchmarks: building bench/micro ...")
    ok, secs, err = subj.publish(PROJECT, out_dir, os.path.join(subj.LOGS, "build-micro.log"))
    if not ok:
        line(f"micro-benchmarks: build failed: {err}")
        return {"error": f"failed to build: {err}", "notes": NOTES}
    artifacts = os.path.join(log_dir, "micro")
    cmd = ["taskset", "-c", "0", "dotnet", os.path.join(out_dir, "Swoop.Benchmarks.dll"), "--artifacts", artifacts]
    if mode == "quick":
        cmd.append("--quick")
    line("micro-benchmarks: running (" + ("about 15 s" if mode == "quick" else "1 to 3 minutes") + ") ...")
    t0 = time.monotonic()
    with open(os.path.join(log_dir, "micro.log"), "w") as log:
        try:
            rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=subj.REPO, timeout=900, env=ENV)
        except subprocess.TimeoutExpired:
            rc = -1
    secs = time.monotonic() - t0
    reports = glob.glob(os.path.join(artifacts, "results", "*-report-full.json"))
    if rc != 0 or not reports:
        line(f"micro-benchmarks: failed (exit {rc})")
        return {"error": f"BenchmarkDotNet exited with {rc}; see {os.path.relpath(log_dir, subj.REPO)}/micro.log",
                "notes": NOTES}
    rows = []
    for path in sorted(reports):
        with open(path) as f:
            data = json.load(f)
        for b in data.get("Benchmarks", []):
            params = b.get("Parameters") or ""
            inp = params.split("=", 1)[1] if params.startswith("Input=") else "–"
            per = REQUESTS_PER_INPUT.get(inp, 1)
            st = b.get("Statistics") or {}
            median, lo, hi = st.get("Median"), st.get("Min"), st.get("Max")
            alloc = (b.get("Memory") or {}).get("BytesAllocatedPerOperation")
            method = b.get("Method", "")
            if "Parser" in b.get("Type", ""):
                what, impl = "parse request head", b.get("Method")
            elif "Router" in b.get("Type", ""):
                table, request = ROUTER_CASES.get(method, ("?", method))
                what, impl, inp = "route lookup", "Swoop: " + table, request
            else:
                what, impl, inp = "write response", "Swoop", b.get("Method", "").lower()
            rows.append([what, impl, inp,
                         "–" if median is None else f"{median / per:,.1f} ({lo / per:,.1f}–{hi / per:,.1f})",
                         "–" if not median else f"{1e9 / (median / per) / 1e6:,.2f}",
                         "–" if alloc is None else f"{alloc / per:,.1f}"])
    line(f"micro-benchmarks: done in {secs:.0f} s")
    return {
        "description": DESCRIPTION,
        "headers": ["What", "Implementation", "Input", "ns per request, median (min–max of iterations)",
                    "million requests/s per core", "bytes allocated per request"],
        "rows": rows,
        "notes": NOTES,
        "seconds": round(secs, 1),
    }
