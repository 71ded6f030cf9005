"""One session: start a subject on the server core, take its start-up numbers,
run the scenarios against it, stop it, and check that it is gone."""
import os
import subprocess
import time

import measure
import probe
import procs
import subjects as subj

SERVER_CORE = "0"


def wait_port_free(port, limit=10.0):
    deadline = time.monotonic() + limit
    while procs.listening_on(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def session_warmup(port, mode):
    """Discarded load right after start so JIT tiering and pools settle before
    the first measured scenario (time-seq runs before this, on purpose)."""
    secs = mode["session_warmup"]
    if secs:
        for path in ("/plaintext", "/json"):
            measure.run_tool(["wrk", "-t1", "-c32", f"-d{secs}s", f"http://127.0.0.1:{port}{path}"], secs + 30)


def run(subject, rep, scenario_list, mode, port, log_dir, progress):
    """progress(scenario, index, count, record_or_None) is called around each measurement."""
    rec = {"subject": subject.name, "rep": rep, "ok": False, "error": None, "measurements": []}
    if not subject.build.get("ok"):
        rec["error"] = "failed to build: " + (subject.build.get("error") or "?")
        return rec
    if not wait_port_free(port):
        rec["error"] = f"port {port} still in use before start (not by this run's subjects)"
        return rec

    proc = None
    sid = None
    dotnet = subject.kind == "dotnet"
    if subject.kind != "none":
        argv, env = subj.launch_spec(subject, port)
        argv = ["taskset", "-c", SERVER_CORE, *argv]
        rec["command"] = subj.display_command(argv)
        out = open(os.path.join(log_dir, f"{subject.name}-rep{rep}-server.log"), "w")
        started = time.monotonic()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=subj.REPO,
                                start_new_session=True)
        out.close()
        sid = proc.pid
        try:
            rec["first_response_s"] = probe.wait_first_response(port, started, proc)
        except RuntimeError as e:
            rec["error"] = f"failed to start: {e}"
            rec["clean_stop"] = procs.stop_session(sid)
            proc.wait()
            return rec
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
    for i, scen in enumerate(ordered):
        if i == len(cold) and sid:
            rec["checks"] = probe.check_endpoints(port)
            if warm:
                session_warmup(port, mode)
        progress(scen, i, len(ordered), None)
        timeout = scen.estimate_seconds(mode) * 3 + 60
        log_path = os.path.join(log_dir, f"{subject.name}-rep{rep}-{scen.name}.log")
        m = measure.measure(scen, port, mode, sid, dotnet, log_path, timeout)
        rec["measurements"].append(m)
        progress(scen, i, len(ordered), m)
        if proc is not None and proc.poll() is not None:
            rec["error"] = f"server exited with code {proc.returncode} during {scen.name}"
            break
    if sid and "checks" not in rec:
        rec["checks"] = probe.check_endpoints(port)

    if proc is not None:
        gone = procs.stop_session(sid)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        rec["clean_stop"] = gone and wait_port_free(port, 10.0)
    return rec
