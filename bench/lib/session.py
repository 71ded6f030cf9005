"""One session: start a subject on the server core, take its start-up numbers,
run the scenarios against it, stop it, and check that it is gone.

If the server exits on its own in the middle (for instance because something
outside the suite signalled it), the measurement under way is marked invalid,
the server is started again once, warmed up, and the remaining scenarios run;
both facts go into the report."""
import os
import subprocess
import time

import bodies
import live
import measure
import probe
import procs
import scenarios as scen_mod
import subjects as subj
import syscalls

SERVER_CORE = "0"
RESTARTS = 1


def wait_port_free(port, limit=10.0):
    deadline = time.monotonic() + limit
    while procs.listening_on(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def warmup_requests(subject):
    """What the warm-up loads, as (path, extra headers): /plaintext and /json; for the routing
    tier also its two routes (a static one and a template); for the app tier its three
    requests as its scenarios send them (the JSON with Accept-Encoding: gzip), so that the
    code they run is compiled before it is measured."""
    if "app" in subject.tiers:
        return [(sc.path, sc.headers) for sc in scen_mod.ALL if sc.tier == "app"]
    if subject.routing:
        return [(path, ()) for path in ("/plaintext", "/json", scen_mod.STATIC_ROUTE, scen_mod.PARAM_ROUTE)]
    return [("/plaintext", ()), ("/json", ())]


# The body group warms up three times as long as the others (60 s in a full run), in passes over
# its scenarios: swoop-app runs under the JIT, and on one core the runtime delays tiered compilation
# tenfold (and again while new methods keep appearing), so its code was still at tier 0 when the
# first scenario was measured after a 20 s warm-up. In a trial here json-write-c32 ran at about
# 15k req/s for the first 16 s of one process and about 34k after (one route alone); in the first
# full run of the group, json-write-c32 (measured first) came out at half its chunked twin's rate,
# measured next.
BODY_WARMUP_PASSES = 3


def session_warmup(port, mode, subject, scenario_list=()):
    """Discarded load right after start so JIT tiering, the thread pool and
    buffer pools settle before the first measured scenario (time-seq runs before
    this, on purpose): wrk at 256 connections on each warm-up request in turn, for
    2 x `session_warmup` seconds in all (/plaintext then /json, `session_warmup`
    seconds each; the routing tier's four paths and the app tier's three requests share
    the same time). The body group's subjects run their chosen body scenarios instead, each as
    it will be measured (its request, its connections), in BODY_WARMUP_PASSES passes of that
    time each (see there)."""
    total = 2 * mode["session_warmup"]
    body_scs = [sc for sc in scenario_list if sc.body]
    if "body" in subject.tiers and body_scs and total:
        secs = max(1, round(total / len(body_scs)))
        for _ in range(BODY_WARMUP_PASSES):
            for sc in body_scs:
                measure.run_tool(sc.command(port, mode, seconds=secs), secs + 30)
        return
    reqs = warmup_requests(subject)
    if total:
        secs = max(1, round(total / len(reqs)))
        for path, headers in reqs:
            head = [arg for h in headers for arg in ("-H", h)]
            measure.run_tool(["wrk", "-t1", "-c256", f"-d{secs}s", *head, f"http://127.0.0.1:{port}{path}"], secs + 30)


def _start(subject, rep, port, log_dir, attempt):
    """Spawns the subject pinned to the server core. Returns (proc, first_response_s or error)."""
    argv, env = subj.launch_spec(subject, port)
    argv = ["taskset", "-c", getattr(subject, "cores", SERVER_CORE), *argv]
    suffix = "" if attempt == 0 else f"-restart{attempt}"
    out = open(os.path.join(log_dir, f"{subject.name}-rep{rep}-server{suffix}.log"), "w")
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=subj.REPO,
                            start_new_session=True)
    out.close()
    try:
        return proc, subj.display_command(argv), probe.wait_first_response(port, started, proc), None
    except RuntimeError as e:
        procs.stop_session(proc.pid)
        proc.wait()
        return proc, subj.display_command(argv), None, str(e)


def _stop(proc, port):
    gone = procs.stop_session(proc.pid)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    return gone and wait_port_free(port, 10.0)


def _exit_text(code):
    if code == 0:
        return ("exited with code 0, a graceful shutdown: it received SIGTERM or SIGINT, which the suite sends "
                "only when it stops a subject, so the signal came from outside the suite")
    if code < 0:
        return f"was killed by signal {-code} (not sent by the suite)"
    return f"exited with code {code}"


def _syscall_probes(subject, rep, ordered, mode, port, log_dir, proc, names, progress):
    """After the measurements, one short run per scenario with the server's system calls
    counted (syscalls.py); stops at the first probe the server does not survive."""
    probes = []
    # The live tier's measurements are conversations with their client, not a load run: no probe.
    ordered = [scen for scen in ordered if scen.tool not in live.TOOLS]
    for i, scen in enumerate(ordered):
        log_path = os.path.join(log_dir, f"{subject.name}-rep{rep}-{scen.name}-syscalls.log")
        timeout = scen.estimate_seconds(syscalls.probe_mode(mode)) * 3 + 60
        t0 = time.monotonic()
        p = syscalls.probe(scen, port, mode, proc.pid, names, log_path, timeout)
        p["probe_wall_s"] = time.monotonic() - t0
        if proc.poll() is not None:
            p["ok"] = False
            p["error"] = f"the server {_exit_text(proc.returncode)} during this probe; the remaining probes were skipped"
        probes.append(p)
        progress(scen, i, len(ordered), p)
        if proc.poll() is not None:
            break
    return probes


SETTLE_SECONDS = 10


def run(subject, rep, scenario_list, mode, port, log_dir, progress, syscall_names=None, probe_progress=None):
    """progress(scenario, index, count, record_or_None) is called around each measurement,
    probe_progress(scenario, index, count, probe) after each system-call probe; the probes
    run when syscall_names (the names perf counts) is given."""
    rec = {"subject": subject.name, "rep": rep, "ok": False, "error": None, "measurements": [],
           "incidents": []}
    if not subject.build.get("ok"):
        rec["error"] = "failed to build: " + (subject.build.get("error") or "?")
        return rec
    if not wait_port_free(port):
        rec["error"] = f"port {port} still in use before start (not by this run's subjects)"
        return rec

    proc = None
    sid = None
    dotnet = subject.kind == "dotnet"
    if "body" in subject.tiers:
        bodies.clear_upload_dir(subject.name)
    if subject.kind != "none":
        proc, rec["command"], first, err = _start(subject, rep, port, log_dir, 0)
        if err:
            rec["error"] = f"failed to start: {err}"
            rec["clean_stop"] = not procs.session_pids(proc.pid) and wait_port_free(port, 10.0)
            return rec
        sid = proc.pid
        rec["first_response_s"] = first
        time.sleep(1.0)
        rec["idle_rss_kb"] = procs.tree_rss_kb(sid)
        rec["startup_cpu_s"] = procs.tree_cpu(sid)
        rec["processes"] = len(procs.session_pids(sid))

    rec["ok"] = True
    # time-seq goes first, against a server that has answered one request only;
    # then the endpoints are checked (correctness, bytes), then the warm-up.
    cold = [s for s in scenario_list if s.name == "time-seq"]
    warm = [s for s in scenario_list if s.name != "time-seq"]
    ordered = cold + warm
    restarts = 0
    for i, scen in enumerate(ordered):
        if i == len(cold) and sid:
            rec["checks"] = probe.check_endpoints(port, subject.routing)
            if "app" in subject.tiers:
                rec["app_checks"] = probe.check_app(port)
            if "body" in subject.tiers:
                # Pre-flight: each body request once, its answer compared with the expected one
                # (the same for every subject); a subject that answers otherwise is not timed on it.
                rec["body_checks"] = bodies.check(port, subject.name, [sc.body for sc in warm if sc.body])
            if warm:
                session_warmup(port, mode, subject, warm)
        progress(scen, i, len(ordered), None)
        timeout = scen.estimate_seconds(mode) * 3 + 60
        log_path = os.path.join(log_dir, f"{subject.name}-rep{rep}-{scen.name}.log")
        check = (rec.get("body_checks") or {}).get(scen.body) if scen.body else None
        if scen.body and not (check and check.get("ok")):
            why = (f"the pre-flight request was answered otherwise: {check.get('problem')}" if check
                   else "its pre-flight request was not checked")
            m = {"scenario": scen.name, "ok": False, "refused": True, "error": f"not timed: {why}"}
            rec["measurements"].append(m)
            progress(scen, i, len(ordered), m)
            continue
        if scen.tool in live.TOOLS:
            m = live.measure_live(scen, port, mode, sid, log_path, timeout)
        else:
            m = measure.measure(scen, port, mode, sid, dotnet, log_path, timeout)
        if proc is not None and proc.poll() is not None:
            what = f"the server {_exit_text(proc.returncode)} during {scen.name}"
            m["ok"] = False
            m["invalid"] = True
            m["error"] = what + "; this measurement is not counted (its errors are listed under failures)"
            rec["incidents"].append(what)
            rec["measurements"].append(m)
            progress(scen, i, len(ordered), m)
            if restarts >= RESTARTS or i == len(ordered) - 1:
                rec["error"] = what + ("" if i == len(ordered) - 1 else "; the remaining scenarios were skipped")
                break
            restarts += 1
            procs.stop_session(sid)
            proc, _, first, err = _start(subject, rep, port, log_dir, restarts)
            if err:
                rec["error"] = what + f"; restarting it failed: {err}"
                break
            sid = proc.pid
            rec["incidents"].append(f"started again (first response after {first:.3f} s), warmed up, and the "
                                    "remaining scenarios ran against the new process")
            session_warmup(port, mode, subject, ordered[i + 1:])
            continue
        rec["measurements"].append(m)
        progress(scen, i, len(ordered), m)
    # Memory after the load: sampled SETTLE_SECONDS after the last measured scenario (a server
    # that keeps its peak after a burst shows it here; compared with idle_rss_kb).
    if sid and proc.poll() is None and rec["measurements"]:
        time.sleep(SETTLE_SECONDS)
        rec["settled_rss_kb"] = procs.tree_rss_kb(sid)
    if sid and "checks" not in rec and proc.poll() is None:
        rec["checks"] = probe.check_endpoints(port, subject.routing)
        if "app" in subject.tiers:
            rec["app_checks"] = probe.check_app(port)
    if syscall_names is not None and sid and not rec.get("error") and proc.poll() is None:
        rec["syscall_probes"] = _syscall_probes(subject, rep, ordered, mode, port, log_dir, proc,
                                                syscall_names, probe_progress or (lambda *a: None))

    if proc is not None:
        rec["clean_stop"] = _stop(proc, port)
    return rec
