"""Number and Markdown formatting shared by the report's sections."""

import aggregate


def n0(v):
    return "–" if v is None else f"{v:,.0f}"


def ms(v):
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def mib(kb):
    return "–" if not kb else f"{kb / 1024:.1f}"


def pct(v):
    return "–" if v is None else f"{v * 100:.0f}%"


def ratio(v, base):
    if v is None or not base:
        return "–"
    return f"{v / base:.2f}×"


def table(headers, rows, align=None):
    align = align or ["l"] + ["r"] * (len(headers) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join(sep) + " |"]
    for r in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(out)


def code(s):
    return "`" + s.replace("`", "'") + "`"


def per_req(v):
    """A small count per request (system calls, context switches): three significant digits."""
    if v is None:
        return "–"
    if v == 0:
        return "0"
    if v < 0.001:
        return "<0.001"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def spread(values, fmt="{:.2f}×", count=True):
    """median (min–max) of per-repetition values (None left out), and how many when `count`."""
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    med = aggregate.med(values)
    if len(values) == 1:
        return fmt.format(med) + " (1 rep.)"
    reps = f", {len(values)} reps" if count else ""
    return f"{fmt.format(med)} ({fmt.format(min(values))}–{fmt.format(max(values))}{reps})"
