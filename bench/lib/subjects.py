"""The servers under test: how each is built, started and configured.

Every subject serves GET /plaintext, /json and /time on 127.0.0.1:<port>. The .NET
ones also serve GET /debug/gc (allocation counters) when BENCH_DEBUG=1 (Swoop's
sample: SWOOP_DEBUG=1); both variables are set for every .NET subject.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import time

import bodies

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH)
WORK = os.path.join(BENCH, ".work")
BIN = os.path.join(WORK, "bin")
LOGS = os.path.join(WORK, "logs")

# Environment variables that would change a .NET or ASP.NET Core runtime's
# behaviour; removed from the inherited environment so that only what a subject
# declares below applies.
_RUNTIME_PREFIXES = ("DOTNET_", "COMPlus_", "ASPNETCORE_", "NODE_")
_KEEP = {"DOTNET_ROOT", "DOTNET_CLI_HOME", "DOTNET_CLI_TELEMETRY_OPTOUT", "DOTNET_NOLOGO",
         "DOTNET_SKIP_FIRST_TIME_EXPERIENCE"}

DEBUG_ENV = {"BENCH_DEBUG": "1", "SWOOP_DEBUG": "1"}

# Settings of Microsoft's TechEmpower "aspnetcore" platform entry
# (TechEmpower/FrameworkBenchmarks, frameworks/CSharp/aspnetcore): the transport
# options are in bench/subjects/kestrel/Program.cs (--inline); the environment of
# its .NET 10 image plus the socket inline-completions switch of its earlier images:
TECHEMPOWER_ENV = {
    "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS": "1",
    "DOTNET_GCDynamicAdaptationMode": "0",
    "DOTNET_ReadyToRun": "0",
    "DOTNET_HillClimbing_Disable": "1",
}


class Subject:
    def __init__(self, name, short, title, kind, summary, project=None, args=(), env=None,
                 scenarios=None, note=None, optional=False, tiers=("basic",), script=None, publish_props=(),
                 cores="0"):
        self.name = name
        # The cores the server is pinned to (taskset -c): "0" for every subject but the
        # two-core variants ("0,1"), which then share core 1 with the load tool.
        self.cores = cores
        # Extra `dotnet publish` properties (e.g. -p:PublishAot=false): a separate build.
        self.publish_props = tuple(publish_props)
        # Which scenario tiers it serves: "basic" (/plaintext, /json, /time as samples/Hello)
        # and/or "routing" (samples/Api's routes, with /time answering {"now": ...}), "static" and
        # "compress" (files and gzipped JSON), "app" (bench/subjects/app's page, stylesheet and JSON).
        self.tiers = tuple(tiers)
        self.script = script  # node: the script under bench/subjects/node; c: the C source (from the repository)
        # Optional subjects run only when --only names them (kept out of the
        # default full run so that it stays within its time budget).
        self.optional = optional
        self.short = short  # label in charts
        self.title = title
        self.kind = kind            # dotnet | node | nginx | c | none
        self.summary = summary      # one line on how it is configured
        self.project = project      # .NET project (relative to the repository root)
        self.args = list(args)
        self.env = dict(env or {})
        self.scenarios = scenarios  # None = all; else the only scenarios that apply
        self.note = note
        self.build = {"ok": False, "error": "not built"}
        self.settings = {}

    def runs(self, scenario):
        """Whether this subject takes part in a scenario."""
        return scenario.tier in self.tiers and (self.scenarios is None or scenario.name in self.scenarios)

    @property
    def routing(self):
        return "routing" in self.tiers

    @property
    def out_dir(self):
        if self.project is None:
            return os.path.join(BIN, self.name)
        return os.path.join(BIN, _slug(" ".join((self.project,) + self.publish_props)))


def _slug(path):
    return re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-").lower()


# `--baseline REF`: samples/Hello of an earlier commit, from a worktree under bench/.work.
BASELINE_DIR = os.path.join(REPO, "bench", ".work", "baseline")
BASELINE_PROJECT = os.path.relpath(os.path.join(BASELINE_DIR, "samples", "Hello", "Hello.fsproj"), REPO)


def prepare_baseline(ref, log=print):
    """Checks out `ref` (detached) in bench/.work/baseline, replacing what was there."""
    subprocess.call(["git", "worktree", "remove", "--force", BASELINE_DIR], cwd=REPO,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.call(["git", "worktree", "prune"], cwd=REPO)
    rc = subprocess.call(["git", "worktree", "add", "--detach", BASELINE_DIR, ref], cwd=REPO,
                         stdout=subprocess.DEVNULL)
    log(f"  baseline: {ref} in {os.path.relpath(BASELINE_DIR, REPO)}" + ("" if rc == 0 else " FAILED"))
    return rc == 0


# The static scenarios' files (made by the runner): 1 KiB, 64 KiB and 10 MiB.
STATIC_ROOT = os.path.join(REPO, "bench", ".work", "static")
STATIC_FILES = {"f1k.bin": 1024, "f64k.bin": 64 * 1024, "f10m.bin": 10 * 1024 * 1024}
STATIC = ("basic", "static")
STATIC_COMPRESS = ("basic", "static", "compress")


def make_static_files():
    os.makedirs(STATIC_ROOT, exist_ok=True)
    for name, size in STATIC_FILES.items():
        path = os.path.join(STATIC_ROOT, name)
        if not os.path.exists(path) or os.path.getsize(path) != size:
            with open(path, "wb") as f:
                f.write(bytes((i * 7 + 3) % 251 for i in range(size)))


# The app tier (bench/subjects/app and its three subjects): a page, an asset and compressed
# JSON. Its subjects serve the basic endpoints too (the runner checks them), but run only the
# app scenarios, and only when --only names them (or the `app` group).
APP = ("app",)


def swoop_project(sample="Hello"):
    found = sorted(glob.glob(os.path.join(REPO, "samples", sample, "*.fsproj")))
    return os.path.relpath(found[0], REPO) if found else f"samples/{sample}/{sample}.fsproj"


# The body group (requests with bodies: bodies.py): its subjects serve the basic endpoints too,
# but run only the body scenarios, and only when --only names them (or the `body` group). Each
# saves the multipart files in a folder of its own (BENCH_UPLOAD_DIR).
BODY = ("body",)


def _body_env(name):
    return dict(DEBUG_ENV, BENCH_UPLOAD_DIR=bodies.upload_dir(name))


# The routing tier (samples/Api's routes and its peers) serves the basic scenarios too, but
# its /time answers {"now": ...}; its subjects run only when --only names them (or the
# `routing` group), so that the full run keeps its time budget.
ROUTING = ("basic", "routing")
# The live tier serves its own scenarios only (and /plaintext, /json, /time for the probe).
LIVE = ("live",)


def all_subjects():
    return [
        Subject("swoop", "Swoop", "Swoop", "dotnet",
                "samples/Hello from this repository as `dotnet publish` makes it: a native AOT executable (the project's "
                "PublishAot=true), with the project's own runtime settings; "
                "Swoop's defaults: deferred accepts (TCP_DEFER_ACCEPT 1 s; see `swoop-no-defer`) taken by the "
                "event loops that serve them, connections waiting on Swoop's own epoll event loops, handlers inline on their threads, "
                "idle connections without a buffer",
                project=swoop_project(), env=DEBUG_ENV),
        Subject("swoop-jit", "Swoop JIT", "Swoop, JIT", "dotnet",
                "samples/Hello published with -p:PublishAot=false, run as `dotnet Hello.dll` (JIT, tiered PGO): "
                "the same code as `swoop`, for the cost of the JIT beside native AOT",
                project=swoop_project(), env=DEBUG_ENV, publish_props=("-p:PublishAot=false",)),
        Subject("swoop-threadpool", "Swoop thread pool", "Swoop, thread-pool mode", "dotnet",
                "samples/Hello with `--no-inline`: socket completions and handlers on the thread pool, "
                "the same threading model as Kestrel's defaults",
                project=swoop_project(), args=["--no-inline"], env=DEBUG_ENV),
        Subject("swoop-tuned", "Swoop tuned", "Swoop, tuned like Kestrel's TechEmpower entry", "dotnet",
                "samples/Hello with `--hold-buffers`: idle connections keep their receive buffer "
                "(the counterpart of WaitForDataBeforeAllocatingBuffer=false); inline as by default",
                project=swoop_project(), args=["--hold-buffers"], env=DEBUG_ENV, optional=True),
        Subject("swoop-no-defer", "Swoop no defer", "Swoop, accepts not deferred", "dotnet",
                "samples/Hello with `--no-defer-accept`: every completed handshake accepted at once (no "
                "TCP_DEFER_ACCEPT), like nginx's default `listen`; otherwise as `swoop`",
                project=swoop_project(), args=["--no-defer-accept"], env=DEBUG_ENV, optional=True),
        Subject("swoop-metrics", "Swoop + metrics", "Swoop, metrics listened to", "dotnet",
                "as `swoop`, with an in-process MeterListener taking every measurement of the meter `Swoop` "
                "(SWOOP_METRICS_LISTENER=1), as an exporter would: beside `swoop` (nobody listening), what "
                "metrics cost; runs only when named in `--only`",
                project=swoop_project(), env=dict(DEBUG_ENV, SWOOP_METRICS_LISTENER="1"), optional=True),
        Subject("swoop-baseline", "Swoop baseline", "Swoop, an earlier build", "dotnet",
                "samples/Hello as `swoop`, built from the git ref given with `--baseline REF` (a worktree in "
                "bench/.work/baseline): the previous build in the same run, for ratios between two builds; "
                "runs only when named in `--only`",
                project=BASELINE_PROJECT, env=DEBUG_ENV, optional=True),
        # The server on both cores (the load tool shares core 1 with it: a machine of two
        # cores has no third). Swoop then runs two event loops (one a core), nginx two workers,
        # Kestrel as many I/O threads as it likes. swoop-2core is in every full run (the report's
        # row with the server on both cores); the peers' two-core rows run when named in `--only`
        # (or the `two-cores` group).
        Subject("swoop-2core", "Swoop 2 cores", "Swoop on two cores", "dotnet",
                "as `swoop`, pinned to cores 0 and 1: two event loops, each waiting on the listener (the kernel "
                "wakes one that waits for each new connection); the load tool shares core 1",
                project=swoop_project(), env=DEBUG_ENV, cores="0,1"),
        Subject("nginx-2core", "nginx 2 workers", "nginx, two workers on two cores", "nginx",
                "as `nginx`, with `worker_processes 2` and `reuseport`, pinned to cores 0 and 1",
                args=["two-workers"], optional=True, cores="0,1"),
        Subject("kestrel-2core", "Kestrel 2 cores", "Kestrel raw on two cores", "dotnet",
                "as `kestrel-raw`, pinned to cores 0 and 1",
                project="bench/subjects/kestrel/Kestrel.csproj", env=DEBUG_ENV, optional=True, cores="0,1"),
        # The static tier: files of 1 KiB, 64 KiB and 10 MiB on /static/ (run only when named,
        # or with the `static` group).
        Subject("swoop-static", "Swoop static", "Swoop, Files.serve", "dotnet",
                "bench/subjects/swoop-static: Swoop's Files.serve with its defaults on /static (sendfile(2) on "
                "its event loops past 16 KiB, smaller files from memory), JIT, Swoop's defaults otherwise",
                project="bench/subjects/swoop-static/SwoopStatic.fsproj", env=dict(DEBUG_ENV, BENCH_STATIC_ROOT=STATIC_ROOT),
                tiers=STATIC_COMPRESS, optional=True),
        Subject("nginx-static", "nginx static", "nginx, static files", "nginx",
                "as `nginx` (one worker), whose configuration serves /static/ with `sendfile on; tcp_nopush on;`",
                tiers=STATIC, optional=True),
        Subject("kestrel-static", "Kestrel static", "Kestrel, UseStaticFiles", "dotnet",
                "as `kestrel-raw`, with app.UseStaticFiles (a PhysicalFileProvider, RequestPath /static, unknown "
                "types served) before the terminal middleware",
                project="bench/subjects/kestrel/Kestrel.csproj", env=dict(DEBUG_ENV, BENCH_STATIC_ROOT=STATIC_ROOT),
                tiers=STATIC_COMPRESS, optional=True),
        # The app tier: the same catalogue page (Giraffe.ViewEngine), stylesheet and JSON on each.
        Subject("swoop-app", "Swoop app", "Swoop, app tier", "dotnet",
                "bench/subjects/swoop-app: one `choose` inside `Compression.compress CompressionOptions.defaults` "
                "(gzip or brotli, CompressionLevel.Fastest, 1 KiB minimum), as the guide's \"Building a site\" does; "
                "the page with Swoop.ViewEngine's `htmlView` (written into the response buffer), the JSON with `json` "
                "(System.Text.Json, web defaults), the stylesheet with `Files.serve StaticFileOptions.defaults` (files up "
                "to 16 KiB from memory); JIT (as its peers), console-app GC default; Swoop's defaults otherwise (inline)",
                project="bench/subjects/swoop-app/SwoopApp.fsproj", env=DEBUG_ENV, tiers=APP, optional=True),
        Subject("giraffe-app", "Giraffe app", "Giraffe on Kestrel, app tier", "dotnet",
                "bench/subjects/giraffe-app: Giraffe 8.3 on WebApplication/Kestrel (content root beside the executable, "
                "logging providers cleared, AddServerHeader=false); UseResponseCompression first (brotli and gzip "
                "providers, both CompressionLevel.Fastest, as the ASP.NET Core docs suggest; default MIME types), then "
                "UseStaticFiles (wwwroot, RequestPath /static), then UseGiraffe: the page with `htmlView`, the JSON with "
                "`json` (Giraffe's default serializer)",
                project="bench/subjects/giraffe-app/GiraffeApp.fsproj", env=DEBUG_ENV, tiers=APP, optional=True),
        Subject("suave-app", "Suave app", "Suave, app tier", "dotnet",
                "bench/subjects/suave-app: Suave 3.4 with `defaultConfig`, the binding and `hideHeader = true` (server GC, "
                "as `suave`); the page rendered with Giraffe.ViewEngine's `RenderView.AsBytes.htmlDocument` and `ok`, "
                "the JSON with System.Text.Json (web defaults; Suave has no serializer of its own beyond the "
                "DataContract-based Suave.Json), the stylesheet with `Files.browseFile`; Suave gzips every byte body over "
                "500 bytes when the request accepts gzip, at GZipStream's default level (Optimal; not configurable)",
                project="bench/subjects/suave-app/SuaveApp.fsproj", env=DEBUG_ENV, tiers=APP, optional=True),
        # The body group: the same routes on each (POST /products, /orders, /upload, /files).
        Subject("swoop-body", "Swoop bodies", "Swoop, body group (swoop-app)", "dotnet",
                "bench/subjects/swoop-app (its Bodies.fs), JIT, console-app GC default (workstation, concurrent), "
                "Swoop's defaults (inline handlers, 30 MB body limit): `bindJson<Product> (validate checkProduct "
                "createProduct)` (422 problem+json on a bad product; 201, `setHttpHeader \"Location\"`, `json`), "
                "`bindForm<Order>`, the upload read with `ctx.ReadAsync` into one pooled 64 KiB buffer after "
                "`ctx.MaxRequestBodySize <- 128 MiB` on that route, the file with `ctx.ReadMultipartAsync()` "
                "(parts past 64 KiB spooled to a temporary file, WebOptions' defaults) and `SaveAsAsync`",
                project="bench/subjects/swoop-app/SwoopApp.fsproj", env=_body_env("swoop-body"), tiers=BODY,
                optional=True),
        Subject("minimal-body", "Minimal API bodies", "ASP.NET Core minimal API, body group", "dotnet",
                "bench/subjects/minimal (its Bodies.cs), configured as `minimal-api` (server GC from the Web SDK, "
                "logging providers cleared, AddServerHeader=false, Kestrel's defaults): `MapPost` with a `Product` "
                "record from the body (source-generated JSON context in the resolver chain), checked in the handler "
                "(`Results.ValidationProblem(errors, statusCode: 422)`), `TypedResults.Created`; `[FromForm] Order`; "
                "the upload read from `Request.Body` into one pooled 64 KiB buffer after "
                "`IHttpMaxRequestBodySizeFeature.MaxRequestBodySize = 128 MiB` on that endpoint; `IFormFile` saved with "
                "`File.Create` + `CopyToAsync` (FormOptions' defaults: files past 64 KiB buffered to a temporary "
                "file); the two form endpoints with `DisableAntiforgery()`",
                project="bench/subjects/minimal/Minimal.csproj", env=_body_env("minimal-body"), tiers=BODY,
                optional=True),
        Subject("giraffe-body", "Giraffe bodies", "Giraffe on Kestrel, body group", "dotnet",
                "bench/subjects/giraffe (its Bodies.fs), configured as `giraffe` (WebApplication, server GC, "
                "logging providers cleared, AddServerHeader=false, Kestrel's defaults): `bindJson<Product> "
                "(validateModel createProduct)` (IModelValidation; 422 with the field errors), `Successful.CREATED`; "
                "`bindForm<Order> None`; the upload read from `Request.Body` into one pooled 64 KiB buffer after "
                "`IHttpMaxRequestBodySizeFeature.MaxRequestBodySize = 128 MiB` on that route; the file from "
                "`ctx.Request.ReadFormAsync()` saved with `File.Create` + `CopyToAsync`",
                project="bench/subjects/giraffe/Giraffe.fsproj", env=_body_env("giraffe-body"), tiers=BODY,
                optional=True),
        # The live tier: idle Server-Sent Event streams and a WebSocket echo (run only when named,
        # or with the `live` group).
        Subject("swoop-live", "Swoop live", "Swoop, eventStream + EventHub, webSocket", "dotnet",
                "bench/subjects/swoop-live, native AOT (PublishAot): `GET /sse` is `eventStream hub.AttachAsync` on one "
                "EventHub without heartbeats, `GET /broadcast` publishes one ServerSentEvent (encoded once) to it, "
                "`GET /ws` is `webSocket WebSocketOptions.defaults` with the guide's echo (`session.ReceiveAsync`, "
                "`SendBinaryAsync`); Swoop's defaults otherwise (inline handlers, deferred accepts)",
                project="bench/subjects/swoop-live/SwoopLive.fsproj", tiers=LIVE, optional=True),
        Subject("kestrel-live", "Kestrel live", "Kestrel, SSE by hand + channels, UseWebSockets", "dotnet",
                "bench/subjects/kestrel-live, as `kestrel-raw` (generic host, one terminal middleware, no logging "
                "providers, AddServerHeader=false, Kestrel's defaults): `GET /sse` writes text/event-stream to "
                "Response.Body and flushes the head at once, then drains its own bounded Channel (256 events, "
                "SingleReader) into the body, write and flush per wake-up, in a ConcurrentDictionary registry; "
                "`GET /broadcast` encodes the event once and TryWrites it to every client's channel (a full one: "
                "that client is aborted); `GET /ws` is UseWebSockets (defaults) and a ReceiveAsync/SendAsync echo on a "
                "4 KiB buffer from ArrayPool",
                project="bench/subjects/kestrel-live/KestrelLive.csproj", tiers=LIVE, optional=True),
        Subject("c-live", "C floor live", "C floor: epoll, one thread (live)", "c",
                "bench/subjects/c-live/live.c, `cc -O2`: the least a server can do for the live scenarios, as a "
                "control: one thread, epoll (edge-triggered), no runtime; `GET /sse` answers the head and holds no "
                "buffer, `GET /broadcast` frames the event once and calls send() for every stream in one loop, `GET /ws` "
                "the RFC 6455 handshake and an unmasking echo straight from the receive buffer. What is left of its CPU "
                "is the kernel's: the floor under both Swoop and Kestrel on this machine",
                script="bench/subjects/c-live/live.c", tiers=LIVE, optional=True),
        Subject("kestrel-raw", "Kestrel raw", "Kestrel raw", "dotnet",
                "Generic host + Kestrel, one terminal middleware (app.Run), no routing, no logging providers, AddServerHeader=false; Kestrel defaults otherwise",
                project="bench/subjects/kestrel/Kestrel.csproj", env=DEBUG_ENV),
        Subject("kestrel-inline", "Kestrel inline (TE)", "Kestrel raw, TechEmpower settings", "dotnet",
                "As Kestrel raw, plus what Microsoft's TechEmpower platform entry sets: UnsafePreferInlineScheduling=true, "
                "WaitForDataBeforeAllocatingBuffer=false, and the environment " +
                ", ".join(f"{k}={v}" for k, v in TECHEMPOWER_ENV.items()),
                project="bench/subjects/kestrel/Kestrel.csproj", args=["--inline"],
                env={**DEBUG_ENV, **TECHEMPOWER_ENV}),
        Subject("minimal-api", "Minimal API", "ASP.NET Core minimal API", "dotnet",
                "WebApplication.CreateBuilder + MapGet (routing), logging providers cleared, AddServerHeader=false, source-generated JSON context",
                project="bench/subjects/minimal/Minimal.csproj", env=DEBUG_ENV),
        Subject("giraffe", "Giraffe", "Giraffe on Kestrel", "dotnet",
                "Giraffe HttpHandlers on WebApplication/Kestrel, logging cleared, AddServerHeader=false",
                project="bench/subjects/giraffe/Giraffe.fsproj", env=DEBUG_ENV),
        Subject("suave", "Suave", "Suave", "dotnet",
                "Suave's own server with defaultConfig (Suave 3.4's config has no logger setting)",
                project="bench/subjects/suave/Suave.fsproj", env=DEBUG_ENV),
        Subject("httplistener", "HttpListener", "System.Net.HttpListener", "dotnet",
                "Managed HttpListener, one async accept loop; it always sends `Server: Microsoft-NetCore/2.0` (not configurable)",
                project="bench/subjects/httplistener/HttpListenerSubject.csproj", env=DEBUG_ENV),
        Subject("node", "Node.js", "Node.js http", "node",
                "node:http createServer, one process, NODE_ENV=production, no Server header by default",
                env={"NODE_ENV": "production"}),
        Subject("nginx", "nginx", "nginx (return)", "nginx",
                "One worker, `return 200` directives, access_log off, server_tokens off (the `Server: nginx` header itself cannot be removed without a third-party module), keepalive_requests 100000; "
                "`listen` without `deferred` (nginx's default; see `nginx-deferred`)"),
        Subject("nginx-deferred", "nginx deferred", "nginx (return), deferred accepts", "nginx",
                "As `nginx`, with `listen ... deferred` (TCP_DEFER_ACCEPT, as Swoop's default on Linux)",
                args=["deferred"], optional=True),
        Subject("swoop-api", "Swoop API", "Swoop, samples/Api (routed)", "dotnet",
                "samples/Api from this repository, published with -p:PublishAot=false and run under the JIT: the web "
                "toolkit (`choose`, `route`, `routef`, `text`, `json`) compiled into a hash table and a segment trie at "
                "start-up; Swoop's defaults (inline), as `swoop`",
                project=swoop_project("Api"), env=DEBUG_ENV, tiers=ROUTING, optional=True,
                publish_props=("-p:PublishAot=false",)),
        Subject("swoop-api-aot", "Swoop API AOT", "Swoop, samples/Api, native AOT", "dotnet",
                "samples/Api as `dotnet publish` makes it: a native AOT executable (the project's PublishAot=true; its "
                "JSON types as contracts); otherwise as `swoop-api`",
                project=swoop_project("Api"), env=DEBUG_ENV, tiers=ROUTING, optional=True),
        Subject("swoop-api-r2r", "Swoop API R2R", "Swoop, samples/Api, ReadyToRun", "dotnet",
                "samples/Api published ReadyToRun (-p:PublishAot=false -p:PublishReadyToRun=true -r linux-x64 "
                "--self-contained false): precompiled code for a faster start than the plain JIT build; otherwise as "
                "`swoop-api` (`swoop-api-aot` is the native AOT build)",
                project=swoop_project("Api"), env=DEBUG_ENV, tiers=ROUTING, optional=True,
                publish_props=("-p:PublishAot=false", "-p:PublishReadyToRun=true", "-r", "linux-x64", "--self-contained", "false")),
        Subject("swoop-api-threadpool", "Swoop API thread pool", "Swoop, samples/Api, thread-pool mode", "dotnet",
                "samples/Api with `--no-inline`, under the JIT as `swoop-api`: handlers on the thread pool, the threading "
                "model of Kestrel's defaults, for a like-for-like comparison with `minimal-routes`",
                project=swoop_project("Api"), args=["--no-inline"], env=DEBUG_ENV, tiers=ROUTING, optional=True,
                publish_props=("-p:PublishAot=false",)),
        Subject("minimal-routes", "Minimal API routes", "ASP.NET Core minimal API, samples/Api's routes", "dotnet",
                "WebApplication.CreateBuilder, one MapGet per route of samples/Api (100 static /r/N, "
                "/r/{i:int}/items/{s}, /r/{i:int}/users/{j:int}, /hello/{name}), endpoint routing with route "
                "constraints, logging providers cleared, AddServerHeader=false, source-generated JSON contexts",
                project="bench/subjects/minimal-routes/MinimalRoutes.csproj", env=DEBUG_ENV, tiers=ROUTING,
                optional=True),
        Subject("node-routes", "Node.js routes", "Node.js http, samples/Api's routes", "node",
                "node:http createServer, a Map for the exact paths and a split-based matcher for the templates "
                "(bench/subjects/node/routes.js), one process, NODE_ENV=production",
                env={"NODE_ENV": "production"}, tiers=ROUTING, optional=True, script="routes.js"),
        Subject("noserver", "no server", "no server (closed port)", "none",
                "Nothing listens: shows what each load tool and the kernel do (and cost) against a closed port",
                scenarios=["plaintext-c256", "close-c256", "ab-k-c1000", "ab-c1000", "hammer", "autocannon-c100"]),
    ]


# ---------------------------------------------------------------- build

def _clean_env():
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith(_RUNTIME_PREFIXES) and k not in _KEEP)}
    env["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1"
    env["DOTNET_NOLOGO"] = "1"
    return env


LOCAL_FEED = os.path.normpath(os.path.join(REPO, "..", "shared", "nuget-local"))


def publish(project, out_dir, log_path, props=()):
    """dotnet publish in Release into out_dir. Returns (ok, seconds, error)."""
    proj = os.path.join(REPO, project)
    if not os.path.exists(proj):
        return False, 0.0, f"{project} does not exist on this branch"
    cmd = ["dotnet", "publish", proj, "-c", "Release", "-o", out_dir,
           "-nodeReuse:false", "-p:UseSharedCompilation=false", *props]
    # Where the package feed does not serve Giraffe or Suave, the checkout's ../shared/nuget-local
    # may hold them, built from their own sources (see its README): an extra source, when it exists.
    if os.path.isdir(LOCAL_FEED):
        cmd.append(f"-p:RestoreAdditionalProjectSources={LOCAL_FEED}")
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        log.write(" ".join(cmd) + "\n")
        log.flush()
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=_clean_env())
    seconds = time.monotonic() - t0
    if rc == 0:
        return True, seconds, None
    with open(log_path) as f:
        errors = [l.strip() for l in f if ": error " in l]
    seen, uniq = set(), []
    for e in errors:
        short = re.sub(r"^.*?: error ", "error ", e)
        short = re.sub(r"\s*\[[^\]]*\]$", "", short)
        if short not in seen:
            seen.add(short)
            uniq.append(short)
    return False, seconds, "; ".join(uniq[:3]) or f"dotnet publish exited with {rc}"


def native_entry(out_dir, project):
    """The executable of a native AOT publish folder (named after the project), or None."""
    name = os.path.splitext(os.path.basename(project or ""))[0]
    path = os.path.join(out_dir, name)
    if name and os.path.isfile(path) and os.access(path, os.X_OK) and not glob.glob(os.path.join(out_dir, "*.runtimeconfig.json")):
        return path
    return None


def dotnet_entry(out_dir):
    """The app dll of a publish folder: the one with a runtimeconfig.json."""
    configs = glob.glob(os.path.join(out_dir, "*.runtimeconfig.json"))
    if len(configs) != 1:
        return None, {}
    with open(configs[0]) as f:
        props = json.load(f).get("runtimeOptions", {}).get("configProperties", {})
    return configs[0].replace(".runtimeconfig.json", ".dll"), props


def build_all(subjects, log=print):
    """Builds what the chosen subjects need; records the outcome on each subject."""
    os.makedirs(LOGS, exist_ok=True)
    done = {}
    for s in subjects:
        if s.kind == "dotnet":
            key = s.out_dir
            if key not in done:
                log(f"  build {s.project} {' '.join(s.publish_props)}...")
                ok, secs, err = publish(s.project, s.out_dir, os.path.join(LOGS, f"build-{os.path.basename(key)}.log"),
                                        s.publish_props)
                done[key] = (ok, secs, err)
                log(f"    {'ok' if ok else 'FAILED'} in {secs:.0f} s" + (f": {err}" if err else ""))
            ok, secs, err = done[key]
            if ok:
                dll, props = dotnet_entry(s.out_dir)
                if native_entry(s.out_dir, s.project):
                    s.settings = {"native_aot": True, "gc": "workstation (native AOT)", "env": dict(s.env)}
                elif dll is None:
                    ok, err = False, "no single *.runtimeconfig.json in the publish folder"
                else:
                    s.settings = runtime_settings(props, s.env)
            s.build = {"ok": ok, "seconds": round(secs, 1), "error": err}
        elif s.kind == "node":
            ok = shutil.which("node") is not None
            s.build = {"ok": ok, "error": None if ok else "node not found"}
            s.settings = {"env": {k: v for k, v in s.env.items()}}
        elif s.kind == "c":
            os.makedirs(s.out_dir, exist_ok=True)
            t0 = time.monotonic()
            log(f"  build {s.script} (cc -O2)...")
            r = subprocess.run(["cc", "-O2", "-o", os.path.join(s.out_dir, s.name), os.path.join(REPO, s.script)],
                               capture_output=True, text=True)
            ok = r.returncode == 0
            s.build = {"ok": ok, "seconds": round(time.monotonic() - t0, 1),
                       "error": None if ok else (r.stderr.strip().splitlines() or ["cc failed"])[-1]}
            s.settings = {"compiler": "cc -O2"}
        elif s.kind == "nginx":
            ok = shutil.which("nginx") is not None
            s.build = {"ok": ok, "error": None if ok else "nginx not found"}
        else:
            s.build = {"ok": True, "error": None}


def runtime_settings(props, env):
    """What the runtime will do, from runtimeconfig.json and the environment."""
    def flag(key, env_key, default):
        if env_key in env:
            return env[env_key] not in ("0", "false")
        return bool(props.get(key, default))
    return {
        "gc": ("server" if flag("System.GC.Server", "DOTNET_gcServer", False) else "workstation") +
              (", concurrent" if flag("System.GC.Concurrent", "DOTNET_gcConcurrent", True) else ", non-concurrent"),
        "tiered_pgo": flag("System.Runtime.TieredPGO", "DOTNET_TieredPGO", True),
        "tiered_compilation": flag("System.Runtime.TieredCompilation", "DOTNET_TieredCompilation", True),
        "ready_to_run": env.get("DOTNET_ReadyToRun", "1") != "0",
        "invariant_globalization": bool(props.get("System.Globalization.Invariant", False)),
        "env": {k: v for k, v in env.items() if k not in DEBUG_ENV},
        "config": {k: v for k, v in props.items() if k.startswith(("System.GC", "System.Runtime", "System.Threading"))},
    }


# ---------------------------------------------------------------- launch

def launch_spec(s, port):
    """(argv, env) to start the subject, pinned by the caller. None for noserver."""
    env = _clean_env()
    env.update(s.env)
    env["PORT"] = str(port)
    if s.kind == "dotnet":
        native = native_entry(s.out_dir, s.project)
        if native:
            return [native, "--port", str(port), "--host", "127.0.0.1", *s.args], env
        dll, _ = dotnet_entry(s.out_dir)
        return ["dotnet", dll, "--port", str(port), "--host", "127.0.0.1", *s.args], env
    if s.kind == "node":
        return ["node", os.path.join(BENCH, "subjects", "node", s.script or "server.js"),
                "--port", str(port), "--host", "127.0.0.1"], env
    if s.kind == "c":
        return [os.path.join(s.out_dir, s.name), "--port", str(port), "--host", "127.0.0.1"], env
    if s.kind == "nginx":
        prefix = os.path.join(WORK, s.name)
        os.makedirs(prefix, exist_ok=True)
        with open(os.path.join(BENCH, "subjects", "nginx", "nginx.conf.in")) as f:
            conf = f.read()
        conf = conf.replace("@PORT@", str(port)).replace("@HOST@", "127.0.0.1").replace("@PREFIX@", prefix)
        conf = conf.replace("@STATIC@", STATIC_ROOT)
        if "deferred" in s.args:
            conf = conf.replace("default_server;", "default_server deferred;")
        if "two-workers" in s.args:
            conf = conf.replace("worker_processes 1;", "worker_processes 2;")
            conf = conf.replace("default_server;", "default_server reuseport;")
        path = os.path.join(prefix, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        return ["nginx", "-p", prefix, "-e", os.path.join(prefix, "error.log"), "-c", path], env
    return None, env


def display_command(argv):
    """The command as a person would type it (paths relative to the repository)."""
    out = []
    for a in argv:
        if a.startswith(REPO + "/"):
            a = os.path.relpath(a, REPO)
        out.append(a if re.fullmatch(r"[\w./:=@%+,-]+", a) else "'" + a + "'")
    return " ".join(out)
