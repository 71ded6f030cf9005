"""The scenarios: which tool, which endpoint, how many connections, how long.

Durations come from the mode (quick/full) so that the plan, the ETA and the
report all read them from one place.
"""
import bodies
import live
import tools

MODES = {
    # A smoke run: every subject and scenario once, short.
    "quick": {"reps": 1, "wrk_warmup": 0, "wrk_seconds": 2, "session_warmup": 2,
              "ab_requests": 20000, "autocannon_seconds": 3, "hammer_seconds": 2,
              "time_requests": 1000, "time_runs": 5, "syscall_seconds": 1, "syscall_ab_requests": 10000,
              "sse_streams": 10000, "sse_broadcasts": 3, "sse_event_size": 32, "sse_settle": 5,
              "ws_size": 32, "ws_warmup": 1, "ws_seconds": 2},
    # The full run: 3 interleaved repetitions, sized for about 30 minutes on 2 cores
    # (7 servers x 3 repetitions x about 85 s: a 20 s warm-up, the 11 wrk
    # scenarios, the two fixed-size ab runs, hammer and autocannon), plus about
    # 7 minutes of system-call probes (7 servers x 16 scenarios x about 3.5 s).
    # The warm-up is long because a .NET server's thread pool (hill climbing)
    # takes about 20 s of load on one core to settle; measured before choosing.
    "full": {"reps": 3, "wrk_warmup": 0, "wrk_seconds": 3, "session_warmup": 10,
             "ab_requests": 100000, "autocannon_seconds": 4, "hammer_seconds": 3,
             "time_requests": 1000, "time_runs": 5, "syscall_seconds": 2, "syscall_ab_requests": 20000,
             "sse_streams": 10000, "sse_broadcasts": 5, "sse_event_size": 32, "sse_settle": 10,
             "ws_size": 32, "ws_warmup": 2, "ws_seconds": 5},
}
# sse_*: the live group's idle streams (live.py): how many, how many measured broadcasts (after
# one discarded), the event's data size in bytes, seconds after closing them before RSS is read
# again; ws_*: message size, warm-up and measured seconds of the WebSocket echo.
# syscall_*: the system-call probes (syscalls.py), one per subject and scenario in the
# first repetition, after that session's measurements: wrk, autocannon and hammer run
# syscall_seconds, ab syscall_ab_requests requests, time-seq one run.


# The open-loop scenarios' rates are fractions of this capacity (requests a second): the
# slowest chosen subject's median plaintext-c32 in the published run (set by the runner).
OPEN_CAPACITY = {"rps": 20000.0, "source": "default"}


class Scenario:
    def __init__(self, name, group, title, tool, path, connections=None, close=False,
                 pipeline=0, keep_alive=True, note=None, tier="basic", rate_fraction=None, headers=(), body=None,
                 min_seconds=0):
        self.name = name
        # The body group: the name of the request (bodies.REQUESTS) wrk sends whole from a file.
        self.body = body
        # wrk runs at least this long (the 100 MiB upload: a few requests a second at best).
        self.min_seconds = min_seconds
        self.headers = tuple(headers)  # wrk: extra request header lines
        self.rate_fraction = rate_fraction  # lat: the share of OPEN_CAPACITY to send
        # "basic": every subject; "routing": only the subjects that serve samples/Api's routes;
        # "static", "compress", "app": only the subjects of that tier.
        self.tier = tier
        self.group = group
        self.title = title
        self.tool = tool            # wrk | ab | autocannon | hammer | time
        self.path = path
        self.connections = connections
        self.close = close
        self.pipeline = pipeline
        self.keep_alive = keep_alive
        self.note = note

    def command(self, port, mode, seconds=None):
        """The load tool's command line; `seconds` (wrk with a body only) overrides the duration,
        as the body group's warm-up does."""
        if self.tool in live.TOOLS:
            return live.command(self, port, mode)
        if self.tool == "wrk" and self.body:
            return tools.wrk_raw_cmd(port, self.path, self.connections,
                                     seconds or max(mode["wrk_seconds"], self.min_seconds),
                                     bodies.request_file(self.body, port))
        if self.tool == "wrk":
            return tools.wrk_cmd(port, self.path, self.connections, mode["wrk_seconds"],
                                 close=self.close, pipeline=self.pipeline, headers=self.headers)
        if self.tool == "ab":
            return tools.ab_cmd(port, self.path, self.connections, mode["ab_requests"], self.keep_alive)
        if self.tool == "autocannon":
            return tools.autocannon_cmd(port, self.path, self.connections, mode["autocannon_seconds"])
        if self.tool == "hammer":
            return tools.hammer_cmd(port, self.path, seconds=mode["hammer_seconds"])
        if self.tool == "time":
            return tools.hammer_cmd(port, self.path, count=mode["time_requests"],
                                    keep_alive=True, runs=mode["time_runs"])
        if self.tool == "lat":
            return tools.lat_cmd(port, self.path, self.connections, mode["wrk_seconds"] + 2, self.rate)
        raise ValueError(self.tool)

    @property
    def rate(self):
        """The open-loop rate (lat): the fraction of the capacity, rounded to 100."""
        return round(OPEN_CAPACITY["rps"] * self.rate_fraction / 100 / 100) * 100  # to the hundred

    def warmup_command(self, port, mode):
        """Run just before the measurement and discarded (wrk scenarios only: it
        opens this scenario's connections and settles the server at this load)."""
        if self.tool == "wrk" and mode["wrk_warmup"] and self.body:
            return tools.wrk_raw_cmd(port, self.path, self.connections, mode["wrk_warmup"],
                                     bodies.request_file(self.body, port))
        if self.tool == "wrk" and mode["wrk_warmup"]:
            return tools.wrk_cmd(port, self.path, self.connections, mode["wrk_warmup"],
                                 close=self.close, pipeline=self.pipeline, headers=self.headers)
        return None

    def parse(self, text):
        return {"wrk": tools.parse_wrk, "ab": tools.parse_ab, "autocannon": tools.parse_autocannon,
                "hammer": tools.parse_hammer, "time": tools.parse_hammer, "lat": tools.parse_lat}[self.tool](text)

    def estimate_seconds(self, mode):
        """Rough wall time, for the ETA before a first measurement exists."""
        if self.tool in live.TOOLS:
            return live.estimate_seconds(self, mode)
        if self.tool == "wrk":
            return mode["wrk_warmup"] + max(mode["wrk_seconds"], self.min_seconds) + 0.4
        if self.tool == "ab":
            return mode["ab_requests"] / (40000 if self.keep_alive else 10000) + 0.3
        if self.tool == "autocannon":
            return mode["autocannon_seconds"] + 0.8
        if self.tool == "hammer":
            return mode["hammer_seconds"] + 0.3
        if self.tool == "lat":
            return mode["wrk_seconds"] + 2.3
        return 1.5


KEEP, PIPE, CLOSE, EARLIER = "keep-alive", "pipelined", "new connection per request", "methods of earlier F# write-ups"
ROUTED = "routing tier (samples/Api's routes)"
OPEN = "open loop (fixed request rates)"
FILES = "static files"
APP = "app tier (a page from data, an asset, compressed JSON)"

# The app tier's three requests (bench/subjects/app): the catalogue page rendered per request,
# its stylesheet, and the catalogue as JSON compressed per request.
APP_PAGE = "/catalog"
# The same page with 100 products, the view built per request and rendered by each subject's
# node renderer (Swoop's htmlView, Giraffe's htmlView, Suave's RenderView.AsBytes): a view moved
# from Giraffe as it is written, not rewritten as a Template.
APP_VIEW = "/catalog/view"
APP_ASSET = "/static/site.css"
APP_JSON = "/api/products"
LIVE = "live: Server-Sent Events and WebSockets"
BODY = "requests with bodies (JSON bound and validated, a form, uploads, a multipart file)"

# The routing tier's two requests: a static path among the 100 of /r/0 .. /r/99, and a
# template with an int and a string (/r/%i/items/%s).
STATIC_ROUTE = "/r/57"
PARAM_ROUTE = "/r/42/items/abc"

ALL = [
    # Runs first in every session, on a server that has answered only one request:
    # the first of its five runs shows the cold start.
    Scenario("time-seq", EARLIER, "1000 sequential GET /time, one keep-alive connection, 5 runs (first = cold)",
             "time", "/time"),
    Scenario("plaintext-c1", KEEP, "plaintext, keep-alive, 1 connection", "wrk", "/plaintext", 1),
    Scenario("plaintext-c32", KEEP, "plaintext, keep-alive, 32 connections", "wrk", "/plaintext", 32),
    Scenario("plaintext-c256", KEEP, "plaintext, keep-alive, 256 connections", "wrk", "/plaintext", 256),
    Scenario("plaintext-c1024", KEEP, "plaintext, keep-alive, 1024 connections", "wrk", "/plaintext", 1024),
    Scenario("pipeline16-c256", PIPE, "plaintext, 16 requests pipelined per write, 256 connections",
             "wrk", "/plaintext", 256, pipeline=16),
    Scenario("json-c32", KEEP, "JSON, keep-alive, 32 connections", "wrk", "/json", 32),
    Scenario("json-c256", KEEP, "JSON, keep-alive, 256 connections", "wrk", "/json", 256),
    Scenario("close-c32", CLOSE, "plaintext, Connection: close, 32 connections", "wrk", "/plaintext", 32, close=True),
    Scenario("close-c64", CLOSE, "plaintext, Connection: close, 64 (web-frameworks style)", "wrk", "/plaintext", 64, close=True),
    Scenario("close-c256", CLOSE, "plaintext, Connection: close, 256 (web-frameworks style)", "wrk", "/plaintext", 256, close=True),
    Scenario("close-c512", CLOSE, "plaintext, Connection: close, 512 (web-frameworks style)", "wrk", "/plaintext", 512, close=True),
    Scenario("ab-k-c1000", EARLIER, "ab -k -c 1000 -n N (HTTP/1.0 keep-alive)", "ab", "/plaintext", 1000),
    Scenario("ab-c1000", EARLIER, "ab -c 1000 -n N (no keep-alive)", "ab", "/plaintext", 1000, keep_alive=False),
    Scenario("hammer", EARLIER, "hammer: one client, new connection per request", "hammer", "/plaintext", 1,
             keep_alive=False),
    Scenario("autocannon-c100", EARLIER, "autocannon -c 100 -d D", "autocannon", "/plaintext", 100),
    # Open loop: requests sent on schedule whether or not answers came back (the paced mode of
    # tests/faults/lat.c, as wrk2), at a quarter, half and three quarters of the slowest chosen
    # subject's capacity; p50/p90/p99/p99.9/max per rate. The closed-loop percentiles above
    # are what a client that waits for each answer sees; these are what arriving users see.
    Scenario("open25-c32", OPEN, "plaintext, open loop at 25% of the slowest subject's capacity, 32 connections",
             "lat", "/plaintext", 32, rate_fraction=25),
    Scenario("open50-c32", OPEN, "plaintext, open loop at 50% of the slowest subject's capacity, 32 connections",
             "lat", "/plaintext", 32, rate_fraction=50),
    Scenario("open75-c32", OPEN, "plaintext, open loop at 75% of the slowest subject's capacity, 32 connections",
             "lat", "/plaintext", 32, rate_fraction=75),
    # Static files (subjects of the static tier only): a file of each size, keep-alive.
    Scenario("static-1k-c32", FILES, "GET a 1 KiB file, keep-alive, 32 connections", "wrk", "/static/f1k.bin", 32,
             tier="static"),
    Scenario("static-64k-c32", FILES, "GET a 64 KiB file, keep-alive, 32 connections", "wrk", "/static/f64k.bin", 32,
             tier="static"),
    Scenario("static-10m-c4", FILES, "GET a 10 MiB file, keep-alive, 4 connections", "wrk", "/static/f10m.bin", 4,
             tier="static"),
    # Compression of a dynamic response (subjects of the compress tier only): 64 KiB of JSON,
    # gzip at the fastest level, per request.
    Scenario("gzip-json64k-c32", FILES, "GET 64 KiB of JSON, gzip per request, keep-alive, 32 connections", "wrk",
             "/big.json", 32, tier="compress", headers=("Accept-Encoding: gzip",)),
    # The app tier (subjects of the app tier only): what a small site answers, keep-alive.
    Scenario("app-page-c32", APP, "GET an HTML page of 40 products rendered per request, keep-alive, 32 connections",
             "wrk", APP_PAGE, 32, tier="app"),
    Scenario("app-view-c32", APP, "GET an HTML page of 100 products, its Giraffe.ViewEngine tree built and rendered "
             "per request on every subject, keep-alive, 32 connections", "wrk", APP_VIEW, 32, tier="app"),
    Scenario("app-asset-c32", APP, "GET a 3.4 KiB stylesheet (static file), keep-alive, 32 connections",
             "wrk", APP_ASSET, 32, tier="app"),
    Scenario("app-json-gzip-c32", APP, "GET 4 KiB of JSON serialised and gzipped per request, keep-alive, 32 connections",
             "wrk", APP_JSON, 32, tier="app", headers=("Accept-Encoding: gzip",)),
    # The live tier (swoop-live, kestrel-live; `bench/run --only live`): measured by live.py
    # with bench/tools/live.js, not by a load tool's summary.
    Scenario("sse-idle-10k", LIVE, "10,000 idle Server-Sent Event streams: memory per stream, server CPU per "
             "broadcast of one small event to all", "sse", "/sse", 10000, tier="live"),
    Scenario("ws-echo-c256", LIVE, "WebSocket echo of 32-byte messages, 256 connections, closed loop per "
             "connection: server CPU per message", "ws", "/ws", 256, tier="live"),
    # Requests with bodies (subjects of the body tier only; `bench/run --only body`): each request
    # is written whole by bodies.py and sent as it is by wrk/raw.lua, keep-alive; every subject is
    # checked to answer it as expected before it is timed.
    Scenario("json-write-c32", BODY, "POST a 1 KiB JSON product, bound to a record and validated, answered 201 "
             "with it as JSON and a Location, keep-alive, 32 connections", "wrk", "/products", 32, tier="body",
             body="json-write"),
    Scenario("json-write-chunked-c32", BODY, "the same JSON sent Transfer-Encoding: chunked (256-byte chunks), "
             "32 connections", "wrk", "/products", 32, tier="body", body="json-write-chunked"),
    Scenario("form-post-c32", BODY, "POST an urlencoded form of 10 fields bound to a record, answered 200 with a line "
             "of text, keep-alive, 32 connections", "wrk", "/orders", 32, tier="body", body="form-post"),
    Scenario("upload-10m-c4", BODY, "POST 10 MiB (Content-Length), read and discarded, answered with its length, "
             "keep-alive, 4 connections", "wrk", "/upload", 4, tier="body", body="upload-10m"),
    Scenario("upload-10m-chunked-c4", BODY, "POST 10 MiB chunked (64 KiB chunks), read and discarded, answered "
             "with its length, 4 connections", "wrk", "/upload", 4, tier="body", body="upload-10m-chunked"),
    Scenario("upload-100m-c4", BODY, "POST 100 MiB (Content-Length), read and discarded: does memory stay flat "
             "as the body grows? 4 connections, at least 8 s", "wrk", "/upload", 4, tier="body", body="upload-100m",
             min_seconds=8),
    Scenario("upload-multipart-c16", BODY, "POST a multipart/form-data form with a 1 MiB file saved to disk, "
             "answered 201, keep-alive, 16 connections", "wrk", "/files", 16, tier="body", body="upload-multipart"),
    Scenario("route-static-c32", ROUTED, "GET /r/57, static among 100, keep-alive, 32 connections",
             "wrk", STATIC_ROUTE, 32, tier="routing"),
    Scenario("route-static-c256", ROUTED, "GET /r/57, static among 100, keep-alive, 256 connections",
             "wrk", STATIC_ROUTE, 256, tier="routing"),
    Scenario("route-param-c32", ROUTED, "GET /r/42/items/abc, template, keep-alive, 32 connections",
             "wrk", PARAM_ROUTE, 32, tier="routing"),
    Scenario("route-param-c256", ROUTED, "GET /r/42/items/abc, template, keep-alive, 256 connections",
             "wrk", PARAM_ROUTE, 256, tier="routing"),
]

# Names --only understands for several subjects and scenarios at once.
GROUPS = {
    # The routing tier beside samples/Hello's raw handler: routed /plaintext and /json
    # (samples/Api) against the same paths in Hello, and the routes against their peers.
    "routing": ["swoop", "swoop-jit", "swoop-api", "swoop-api-aot", "swoop-api-threadpool", "minimal-routes", "node-routes",
                "plaintext-c32", "plaintext-c256", "json-c32", "json-c256", "route-*"],
    # The server on both cores beside the same servers on one: keep-alive and a new
    # connection per request.
    # Start-up and idle memory of the toolkit's sample as the JIT runs it, ReadyToRun and
    # native AOT, beside samples/Hello as native AOT (every session reports both; time-seq is the shortest).
    "static": ["swoop-static", "nginx-static", "kestrel-static", "static-*", "gzip-*"],
    # The app tier: a page, an asset and compressed JSON on Swoop, Giraffe and Suave.
    "app": ["swoop-app", "giraffe-app", "suave-app", "app-*"],
    # Idle event streams and a WebSocket echo, Swoop.Live beside ASP.NET Core.
    "live": ["swoop-live", "kestrel-live", "c-live", "sse-*", "ws-*"],
    # Requests with bodies: Swoop's toolkit beside the minimal API and Giraffe (nginx cannot
    # read a body before it answers without a module that buffers it: see bench/README.md).
    "body": ["swoop-body", "minimal-body", "giraffe-body", "json-write-*", "form-post-*", "upload-*"],
    "open-loop": ["swoop", "kestrel-raw", "nginx", "open*"],
    "startup": ["swoop", "swoop-api", "swoop-api-aot", "swoop-api-r2r", "time-seq"],
    "two-cores": ["swoop", "swoop-2core", "nginx", "nginx-2core", "kestrel-raw", "kestrel-2core",
                  "plaintext-c256", "close-c32", "close-c256"],
}

BY_NAME = {s.name: s for s in ALL}
