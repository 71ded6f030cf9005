"""What every scenario shares: the servers under test, checks and numbers, wrk, an HTTP/1.1
response reader on asyncio streams, and /proc readings (RSS, open descriptors, machine load).

Python 3 standard library only. Loopback only: every address here is 127.0.0.1.
"""

import asyncio
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FAULTS = ROOT / "tests" / "faults"
WORK = FAULTS / ".work"
ECHO_PROJECT = ROOT / "samples" / "Echo" / "Echo.fsproj"
FAULT_PROJECT = FAULTS / "FaultServer" / "FaultServer.fsproj"
DLLS = {
    "echo": ROOT / "samples" / "Echo" / "bin" / "Release" / "net10.0" / "Echo.dll",
    "fault": FAULTS / "FaultServer" / "bin" / "Release" / "net10.0" / "FaultServer.dll",
}
WRK_SCRIPT = FAULTS / "wrk" / "report.lua"
HOST = "127.0.0.1"
CORES = os.cpu_count() or 1
CLK_TCK = os.sysconf("SC_CLK_TCK")


def swoop_log_lines(text, levels=("warn", "fail", "crit")):
    """The server's log events on stderr at these levels (the built-in console sink's form:
    `2026-11-25T01:44:29.123Z fail swoop[40] HandlerFailed: ...`), first lines only."""
    import re
    pattern = re.compile(r"^\S+ (" + "|".join(levels) + r") swoop\[\d+\] ")
    return [l for l in text.splitlines() if pattern.match(l)]


def rel(path):
    """A path as the commands in the report show it: relative to the repository root."""
    try:
        return str(Path(path).relative_to(ROOT))
    except ValueError:
        return str(path)


def raise_fd_limit():
    """Soft open-files limit up to the hard one (as `ulimit -n $(ulimit -Hn)`); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def server_pin():
    return ["taskset", "-c", "0"] if CORES >= 2 else []


def client_pin():
    return ["taskset", "-c", "1"] if CORES >= 2 else []


def attacker_pin():
    """Hostile clients (the slow clients): a core of their own when there are three, so that
    neither the server nor wrk shares one with them (nor with their kernel work); else wrk's."""
    return ["taskset", "-c", "2"] if CORES >= 3 else client_pin()


def yield_to_load_tool():
    """Lowers the calling thread (and threads and processes it starts) to nice 10: a Python
    client that shares the load generator's core then mostly runs while wrk is waiting, so
    that wrk's latencies are the server's, not time wrk spent queued behind our own client,
    while the client still gets the few percent of the core it needs to keep its timing."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 10)  # Linux: 0 is the calling thread
        return True
    except (AttributeError, OSError):
        return False


def normal_priority():
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except (AttributeError, OSError):
        pass


def pin_self_to_client_core():
    if CORES >= 2:
        os.sched_setaffinity(0, {1})


# ---------------------------------------------------------------------------------------------
# Results


class Scenario:
    """One scenario's record: the commands it ran, its numbers, its checks (pass/fail)."""

    def __init__(self, name, title, log_dir, quick):
        self.name = name
        self.title = title
        self.log_dir = log_dir
        self.quick = quick
        self.checks = []
        self.numbers = {}
        self.commands = []
        self.notes = []
        self.started = time.time()
        self.machine_before = None
        self.machine_after = None
        self.seconds = None

    def log(self, text):
        print(f"  [{self.name} {time.time() - self.started:6.1f}s] {text}", flush=True)

    def check(self, name, ok, detail):
        self.checks.append({"check": name, "ok": bool(ok), "detail": detail})
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}", flush=True)
        return ok

    def number(self, key, value):
        self.numbers[key] = value
        return value

    def command(self, argv, what=""):
        text = argv if isinstance(argv, str) else " ".join(str(a) for a in argv)
        self.commands.append({"what": what, "command": text})

    def note(self, text):
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    @property
    def ok(self):
        return all(c["ok"] for c in self.checks) and bool(self.checks)

    def to_json(self):
        return {
            "name": self.name,
            "title": self.title,
            "ok": self.ok,
            "seconds": self.seconds,
            "checks": self.checks,
            "numbers": self.numbers,
            "commands": self.commands,
            "notes": self.notes,
            "machine_before": self.machine_before,
            "machine_after": self.machine_after,
        }


# ---------------------------------------------------------------------------------------------
# /proc


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def socket_count(pid):
    """Open socket descriptors (the listener and connections), without the files the runtime
    maps as it loads assemblies on first use."""
    try:
        d = f"/proc/{pid}/fd"
        names = os.listdir(d)
    except OSError:
        return None
    count = 0
    for f in names:
        try:
            count += os.readlink(f"{d}/{f}").startswith("socket:")
        except OSError:
            pass  # closed between the listing and the look
    return count


def thread_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return None


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def _proc_ticks():
    ticks = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
            comm = text[text.index("(") + 1 : text.rindex(")")]
            fields = text.rsplit(")", 1)[1].split()
            ticks[int(entry)] = (comm, int(fields[11]) + int(fields[12]))
        except (OSError, ValueError, IndexError):
            continue
    return ticks


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:90]
    except OSError:
        return "?"


def _cpu_busy():
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + parts[4]
    return sum(parts) - idle, sum(parts)


def machine_state(window=2.0, ours=()):
    """Load averages, and which processes other than ours used the CPU over `window` seconds."""
    before, (b0, t0) = _proc_ticks(), _cpu_busy()
    time.sleep(window)
    after, (b1, t1) = _proc_ticks(), _cpu_busy()
    mine = {os.getpid(), *ours}
    busy = []
    for pid, (comm, ticks) in after.items():
        if pid in mine or pid not in before:
            continue
        pct = 100.0 * (ticks - before[pid][1]) / CLK_TCK / window
        if pct >= 5.0:
            busy.append({"pid": pid, "comm": comm, "cpu_pct": round(pct, 1), "cmd": _cmdline(pid)})
    busy.sort(key=lambda p: -p["cpu_pct"])
    return {
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "machine_cpu_pct": round(100.0 * CORES * (b1 - b0) / max(1, t1 - t0), 1),
        "others_busy": busy,
    }


def describe_machine(state):
    others = ", ".join(f"{p['comm']} {p['cpu_pct']}%" for p in state["others_busy"]) or "none"
    return f"load {state['loadavg'][0]:.2f}/{state['loadavg'][1]:.2f}/{state['loadavg'][2]:.2f}, other processes >=5% CPU: {others}"


# ---------------------------------------------------------------------------------------------
# Servers


def port_free(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((HOST, port)) != 0


class Server:
    """A server under test: `dotnet <dll> --port P ...` pinned to core 0, logs in the run's folder."""

    def __init__(self, scn, kind, port, args=(), label=None):
        self.scn = scn
        self.kind = kind
        self.port = port
        self.label = label or kind
        self.argv = server_pin() + ["dotnet", rel(DLLS[kind]), "--port", str(port), *map(str, args)]
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid

    def start(self, timeout=30.0):
        if not port_free(self.port):
            raise RuntimeError(f"port {self.port} is in use: pass --port to pick another")
        self.scn.command(self.argv, f"server ({self.label})")
        base = self.scn.log_dir / f"{self.scn.name}-{self.label}"
        self.out = open(f"{base}.out", "w")
        self.err = open(f"{base}.err", "w")
        self.proc = subprocess.Popen(
            self.argv, cwd=ROOT, stdout=self.out, stderr=self.err, preexec_fn=raise_fd_limit
        )
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: see {base}.err")
            if simple_get(self.port, "/ready") is not None:
                return self
            time.sleep(0.05)
        raise RuntimeError(f"server not answering after {timeout} s")

    def rss(self):
        return rss_kib(self.pid)

    def fds(self):
        return fd_count(self.pid)

    def sockets(self):
        return socket_count(self.pid)

    def fd_limit(self):
        try:
            with open(f"/proc/{self.pid}/limits") as f:
                for line in f:
                    if line.startswith("Max open files"):
                        return int(line.split()[3])
        except (OSError, ValueError, IndexError):
            return None

    def idle_rss(self, seconds=25, every=5):
        """RSS every `every` seconds while the server idles for `seconds` (its trimmer's turns)."""
        samples = []
        t0 = time.time()
        while time.time() - t0 < seconds:
            time.sleep(every)
            samples.append(self.rss())
        return samples

    def settle(self, seconds):
        """Waits, then returns (RSS KiB, open fds)."""
        time.sleep(seconds)
        return self.rss(), self.fds()

    def stderr_text(self):
        self.err.flush()
        with open(self.err.name) as f:
            return f.read()

    def stdout_text(self):
        self.out.flush()
        with open(self.out.name) as f:
            return f.read()

    def terminate(self, timeout=40.0):
        """SIGTERM; returns (exit code, seconds to exit), SIGKILL after `timeout`."""
        if self.proc is None or self.proc.poll() is not None:
            return (self.proc.returncode if self.proc else None), 0.0
        t0 = time.time()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            self.scn.note(f"server ({self.label}) did not exit within {timeout} s of SIGTERM: killed")
        return rc, time.time() - t0

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def simple_get(port, path, timeout=2.0):
    """One blocking GET with Connection: close; the status code or None."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else None
    except (OSError, ValueError, IndexError):
        return None


# ---------------------------------------------------------------------------------------------
# wrk


def wrk(scn, port, path, conns, seconds, what, pipeline=1):
    """wrk on one thread pinned to the client core; returns its numbers (latencies in ms)."""
    argv = client_pin() + ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "-s", rel(WRK_SCRIPT)]
    argv.append(f"http://{HOST}:{port}{path}")
    scn.command(argv, what)
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=seconds + 60,
                          preexec_fn=normal_priority)
    with open(scn.log_dir / f"{scn.name}-wrk.log", "a") as f:
        f.write(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}\n")
    for line in done.stdout.splitlines():
        if line.startswith("WRKJSON "):
            r = json.loads(line[8:])
            secs = r["duration_us"] / 1e6
            return {
                "requests": r["requests"],
                "rps": round(r["requests"] / secs) if secs else 0,
                "errors": r["connect"] + r["read"] + r["write"] + r["status"] + r["timeout"],
                "errors_by_kind": {k: r[k] for k in ("connect", "read", "write", "status", "timeout")},
                "p50_ms": r["p50_us"] / 1000,
                "p90_ms": r["p90_us"] / 1000,
                "p99_ms": r["p99_us"] / 1000,
                "max_ms": r["max_us"] / 1000,
            }
    raise RuntimeError(f"wrk printed no result: {done.stdout[-500:]} {done.stderr[-500:]}")


def wrk_text(r):
    return (
        f"{r['rps']} req/s, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, "
        f"max {r['max_ms']:.1f} ms, errors {r['errors']}"
    )


# ---------------------------------------------------------------------------------------------
# HTTP on asyncio streams


class NoResponse(Exception):
    """The connection ended (EOF or reset) before a single byte of the answer."""


class PartialResponse(Exception):
    """The connection ended in the middle of an answer: some bytes, not all."""


class Response:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name):
        return self.headers.get(name.lower())

    @property
    def closes(self):
        return (self.header("connection") or "").lower() == "close"


async def read_response(reader, method="GET"):
    """Reads one whole response (Content-Length, chunked or to EOF); raises NoResponse or
    PartialResponse when the connection ends first."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if e.partial:
            raise PartialResponse(f"{len(e.partial)} bytes of a head") from None
        raise NoResponse("closed") from None
    except (ConnectionResetError, BrokenPipeError) as e:
        raise NoResponse(type(e).__name__) from None
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    try:
        if method == "HEAD" or status in (204, 304) or status < 200:
            body = b""
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass
                    break
                parts.append(await reader.readexactly(size))
                await reader.readexactly(2)
            body = b"".join(parts)
        else:
            body = await reader.read()
    except (asyncio.IncompleteReadError, ConnectionResetError, BrokenPipeError) as e:
        raise PartialResponse(f"status {status}, body cut ({type(e).__name__})") from None
    return Response(status, headers, body)


async def open_conn(port, rcvbuf=None, limit=2**20):
    """A connection to the server; `rcvbuf` sets SO_RCVBUF before connecting."""
    if rcvbuf is None:
        return await asyncio.open_connection(HOST, port, limit=limit)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.setblocking(False)
    await asyncio.get_running_loop().sock_connect(s, (HOST, port))
    return await asyncio.open_connection(sock=s, limit=limit)


def reset_close(writer):
    """Closes with SO_LINGER 0: the kernel sends RST instead of FIN, dropping unsent data."""
    sock = writer.get_extra_info("socket")
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()


def quiet_close(writer):
    try:
        writer.close()
    except Exception:
        pass


def request(method, path, body=None, headers=(), close=False):
    lines = [f"{method} {path} HTTP/1.1", "Host: faults"]
    lines += list(headers)
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return raw + (body or b"")


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * (len(values) - 1)))))
    return values[k]


def mib(kib):
    return None if kib is None else round(kib / 1024.0, 1)
