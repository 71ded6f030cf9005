"""What the run ran on: hardware, kernel, tool and runtime versions, settings."""
import os
import platform
import re
import subprocess

import tools

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=REPO)
        return (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return None


def _first(text, pattern, default="?"):
    if not text:
        return default
    m = re.search(pattern, text, re.M)
    return m.group(1).strip() if m else default


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def collect():
    lscpu = _run(["lscpu"]) or ""
    meminfo = _read("/proc/meminfo") or ""
    os_release = _read("/etc/os-release") or ""
    runtimes = _run(["dotnet", "--list-runtimes"]) or ""
    info = {
        "cpu_model": _first(lscpu, r"^Model name:\s*(.+)$"),
        "cpu_mhz": _first(_read("/proc/cpuinfo"), r"^cpu MHz\s*:\s*(.+)$"),
        "cores": os.cpu_count(),
        "threads_per_core": _first(lscpu, r"^Thread\(s\) per core:\s*(.+)$"),
        "hypervisor": _first(lscpu, r"^Hypervisor vendor:\s*(.+)$", "none reported"),
        "memory_gib": round(int(_first(meminfo, r"^MemTotal:\s*(\d+)", "0")) / 1048576, 1),
        "kernel": platform.release(),
        "os": _first(os_release, r'^PRETTY_NAME="?([^"\n]+)'),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or "not exposed",
        "dotnet_sdk": _run(["dotnet", "--version"]),
        "dotnet_runtime": _first(runtimes, r"^Microsoft\.NETCore\.App (\S+)"),
        "aspnetcore_runtime": _first(runtimes, r"^Microsoft\.AspNetCore\.App (\S+)"),
        "node": _run(["node", "--version"]),
        "nginx": _first(_run(["nginx", "-v"]), r"nginx version: (.+)"),
        "wrk": _first(_run(["wrk", "-v"]), r"^(wrk \S+)"),
        "ab": _first(_run(["ab", "-V"]), r"^This is ApacheBench, (Version \S+)"),
        "autocannon": _first(_run([tools.AUTOCANNON, "--version"]), r"^(autocannon v\S+)", "not installed"),
        "gnuplot": _run(["gnuplot", "--version"]),
        "python": platform.python_version(),
        "sysctl": {k: _read("/proc/sys/" + k.replace(".", "/")) for k in (
            "net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.ip_local_port_range",
            "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout")},
        "nofile_limit": _run(["bash", "-c", "ulimit -n"]),
        "git_commit": _run(["git", "rev-parse", "--short", "HEAD"]),
        "git_branch": _run(["git", "rev-parse", "--abbrev-ref", "HEAD"]),
        "swoop_commit": _run(["git", "log", "-1", "--format=%h %cs %s", "--", "src/Swoop", "samples/Hello"]) or "none",
        "git_dirty": bool(_run(["git", "status", "--porcelain", "--", "src", "samples", "bench"])),
    }
    return info
