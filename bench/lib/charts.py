"""PNG charts with gnuplot: throughput per scenario, latency percentiles, memory.
Each chart gets a data file and a gnuplot script under .work (kept for
inspection); only the PNGs go into the results folder."""
import os
import subprocess

import aggregate

COLORS = {
    "swoop": "#e8590c", "swoop-jit": "#ff922b", "swoop-threadpool": "#ffa94d", "swoop-tuned": "#d9480f", "kestrel-raw": "#1c7ed6", "kestrel-inline": "#74c0fc",
    "minimal-api": "#2f9e44", "giraffe": "#9c36b5", "suave": "#c2255c",
    "httplistener": "#7048e8", "node": "#5c940d", "nginx": "#495057", "noserver": "#adb5bd",
    "swoop-api": "#c92a2a", "swoop-api-aot": "#e03131", "swoop-api-threadpool": "#ff8787", "minimal-routes": "#099268",
    "node-routes": "#94d82d",
}

LATENCY_SCENARIOS = ["plaintext-c1", "plaintext-c32", "plaintext-c256", "plaintext-c1024",
                     "pipeline16-c256", "json-c256", "close-c32", "close-c256",
                     "route-static-c256", "route-param-c256"]


def _hex(name):
    return int(COLORS.get(name, "#868e96")[1:], 16)


def _multiplot(panel_count, out_png, title):
    """The gnuplot lines that open a PNG with one panel per scenario in a grid."""
    nrows, ncols = _grid(panel_count)
    w, h = 430 * ncols, 330 * nrows + 60
    return [f"set terminal pngcairo size {w},{h} font 'DejaVu Sans,9'",
            f"set output '{out_png}'",
            f"set multiplot layout {nrows},{ncols} title '{title}' font ',12'"]


def _gnuplot(script_path, script):
    with open(script_path, "w") as f:
        f.write(script)
    p = subprocess.run(["gnuplot", script_path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"gnuplot failed on {script_path}: {p.stderr.strip()[:500]}")


def _grid(n):
    cols = 4 if n > 6 else (3 if n > 4 else max(1, n))
    rows = (n + cols - 1) // cols
    return rows, cols


def _quote(text):
    """Text for a gnuplot single-quoted string (a quote is doubled there)."""
    return text.replace("'", "''")


def _label(title, subject):
    return title.replace(" ", "\\n", 1) if len(title) > 14 else title


def throughput(results, subjects, scenarios, out_png, work):
    panels = []
    for sc in scenarios:
        rows = []
        for s in subjects:
            r = aggregate.row(results, s, sc)
            if r and r["rps"] is not None and r["ok_runs"]:
                rows.append((s, r["rps"], r["rps_min"], r["rps_max"]))
        if rows:
            panels.append((sc, rows))
    if not panels:
        return None
    lines = _multiplot(len(panels), out_png, "Requests per second (median of repetitions; bars show min-max)") + [
             "set style fill solid 0.85 border -1", "set boxwidth 0.7", "set grid ytics lc rgb '#dddddd'",
             "set xtics rotate by 35 right nomirror font ',8'", "set ytics nomirror font ',8'",
             "set format y '%g'", "set key off", "set offsets 0.5,0.5,0,0", "set yrange [0:*]"]
    for sc, rows in panels:
        dat = os.path.join(work, f"tp-{sc}.dat")
        with open(dat, "w") as f:
            for s, v, lo, hi in rows:
                f.write(f"\"{results['subjects'][s].get('short', s)}\" {v} {lo} {hi} {_hex(s)}\n")
        top = max(hi for _, _, _, hi in rows) or 1
        lines.append(f"set title '{_quote(results['scenarios'][sc]['title'][:60])}' font ',9'")
        lines.append(f"set yrange [0:{top * 1.18}]")
        lines.append(f"plot '{dat}' using 0:2:5:xtic(1) with boxes lc rgb variable, "
                     f"'' using 0:2:3:4 with yerrorbars lc rgb '#222222' pt -1 lw 1, "
                     f"'' using 0:4:(sprintf('%.3g k', $2/1000)) with labels offset 0,0.7 font ',7'")
    lines.append("unset multiplot")
    _gnuplot(os.path.join(work, "throughput.gp"), "\n".join(lines) + "\n")
    return out_png


def latency(results, subjects, scenarios, out_png, work):
    panels = []
    for sc in [s for s in LATENCY_SCENARIOS if s in scenarios]:
        rows = []
        for s in subjects:
            r = aggregate.row(results, s, sc)
            if r and r["ok_runs"] and None not in (r["lat"]["p50"], r["lat"]["p90"], r["lat"]["p99"]):
                rows.append((s, r["lat"]["p50"], r["lat"]["p90"], r["lat"]["p99"]))
        if rows:
            panels.append((sc, rows))
    if not panels:
        return None
    lines = _multiplot(len(panels), out_png, "Latency percentiles, ms (log scale; median of repetitions)") + [
             "set style data histograms", "set style histogram clustered gap 1",
             "set style fill solid 0.85 border -1", "set logscale y", "set grid ytics lc rgb '#dddddd'",
             "set xtics rotate by 35 right nomirror font ',8'", "set ytics nomirror font ',8'",
             "set key top left font ',8' samplen 1"]
    for sc, rows in panels:
        dat = os.path.join(work, f"lat-{sc}.dat")
        with open(dat, "w") as f:
            for s, p50, p90, p99 in rows:
                f.write(f"\"{results['subjects'][s].get('short', s)}\" {max(p50, 0.001)} {max(p90, 0.001)} {max(p99, 0.001)}\n")
        lo = min(r[1] for r in rows)
        hi = max(r[3] for r in rows)
        lines.append(f"set title '{_quote(results['scenarios'][sc]['title'][:60])}' font ',9'")
        lines.append(f"set yrange [{max(lo / 2, 0.001)}:{hi * 4}]")
        lines.append(f"plot '{dat}' using 2:xtic(1) title 'p50' lc rgb '#74c0fc', "
                     f"'' using 3 title 'p90' lc rgb '#1c7ed6', '' using 4 title 'p99' lc rgb '#0b3d91'")
    lines.append("unset multiplot")
    _gnuplot(os.path.join(work, "latency.gp"), "\n".join(lines) + "\n")
    return out_png


def memory(results, subjects, out_png, work):
    rows = []
    for s in subjects:
        st = aggregate.startup(results, s)
        if st["idle_rss_kb"]:
            rows.append((s, st["idle_rss_kb"] / 1024, (st["peak_rss_kb"] or 0) / 1024))
    if not rows:
        return None
    dat = os.path.join(work, "memory.dat")
    with open(dat, "w") as f:
        for s, idle, peak in rows:
            f.write(f"\"{results['subjects'][s].get('short', s)}\" {idle:.1f} {peak:.1f}\n")
    script = f"""set terminal pngcairo size 900,480 font 'DejaVu Sans,9'
set output '{out_png}'
set title 'Resident memory of the server process tree, MiB (idle after start; peak over all load scenarios)' font ',10'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics lc rgb '#dddddd'
set xtics rotate by 25 right nomirror
set yrange [0:*]
set key top left
plot '{dat}' using 2:xtic(1) title 'idle' lc rgb '#74c0fc', '' using 3 title 'peak under load' lc rgb '#1c7ed6', \\
     '' using ($0-0.15):2:(sprintf('%.0f', $2)) with labels offset 0,0.6 font ',8' notitle, \\
     '' using ($0+0.15):3:(sprintf('%.0f', $3)) with labels offset 0,0.6 font ',8' notitle
"""
    _gnuplot(os.path.join(work, "memory.gp"), script)
    return out_png


def all_charts(results, subjects, scenarios, out_dir, work):
    # The closed-port control has no throughput or memory to draw; its table says what happened.
    subjects = [s for s in subjects if results["subjects"][s]["kind"] != "none"]
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    made = {}
    for name, fn in (("throughput", lambda p: throughput(results, subjects, scenarios, p, work)),
                     ("latency", lambda p: latency(results, subjects, scenarios, p, work)),
                     ("memory", lambda p: memory(results, subjects, p, work))):
        path = os.path.join(out_dir, f"{name}.png")
        try:
            if fn(path):
                made[name] = path
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            made[name + "_error"] = str(e)
    return made
