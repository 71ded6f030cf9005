#!/usr/bin/env python3
"""Where a server's CPU went, by component: reads `perf report --no-children --sort dso,sym`
from stdin (a recording made with DOTNET_PerfMapEnabled=1 and DOTNET_EnableWriteXorExecute=0,
so that jitted methods carry their assembly's name) and prints the share of each assembly,
native library and the kernel, largest first. bench/db/run --profile uses it to show what
limits a test: the web framework, the driver (Npgsql), the runtime or the kernel."""
import collections
import re
import sys

# The framework a subject brings, for the one-line summary.
FRAMEWORK = {"Fortunes", "FSharp.Core", "MinimalDb", "GiraffeDb", "Dapper"}
FRAMEWORK_PREFIXES = ("Swoop", "Giraffe", "Microsoft.AspNetCore", "Microsoft.Extensions")

shares = collections.Counter()
for line in sys.stdin:
    m = re.match(r"\s*([\d.]+)%\s+(.*?)\s+\[(.)\]\s+(.*)", line)
    if not m:
        continue
    pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4)
    if kind == "k":
        key = "kernel"
    elif dso.endswith(".dll"):
        key = dso[:-4]
    elif dso.startswith("[JIT]"):
        # "instance void [Npgsql] Npgsql.NpgsqlDataReader+...": the assembly in brackets
        a = re.search(r"\[([A-Za-z][\w.]*)\]", sym)
        key = a.group(1) if a else ("runtime stubs" if sym.startswith("stub") else "jitted, unnamed")
    else:
        key = dso
    if key.startswith("System.") or key in ("libcoreclr.so", "libclrjit.so", "ld-linux-x86-64.so.2",
                                            "libc.so.6", "libSystem.Native.so", "runtime stubs", "[vdso]"):
        group = "runtime"
    elif key == "Npgsql":
        group = "driver"
    elif key == "kernel":
        group = "kernel"
    elif key in FRAMEWORK or key.startswith(FRAMEWORK_PREFIXES):
        group = "framework+app"
    else:
        group = "other"
    shares[(group, key)] += pct

groups = collections.Counter()
for (group, _), pct in shares.items():
    groups[group] += pct
label = sys.argv[1] if len(sys.argv) > 1 else ""
print(f"  {label} by group: " + ", ".join(f"{g} {p:.1f}%" for g, p in groups.most_common()))
print("  " + ", ".join(f"{k} {p:.1f}%" for (_, k), p in shares.most_common(10)))
