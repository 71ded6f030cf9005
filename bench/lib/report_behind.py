"""The report's "Where Swoop is behind" section: every load scenario in which a peer's median
req/s is above Swoop's (`swoop`, the published native AOT sample), with the ratio taken
repetition by repetition and what this run measured beside it that says why: whether the load
generator's core was the limit, each server's CPU per request and busy share, system calls per
request, and, where a case has been looked into, a note (NOTES) naming the measurement that
explains it."""

import aggregate
from fmt import ms, pct, per_req, spread, table

SWOOP = "swoop"

# Paced scenarios (the same request rate for every subject): their req/s are the schedule's.
PACED_TOOLS = ("lat",)

# (scenario, peer) -> why, from a measurement named in the text; "*" matches any peer.
NOTES = {
    ("json-c256", "nginx"):
        "nginx answers /json with a `return` of a constant string; Swoop serialises the object with "
        "System.Text.Json on every request (the basic tier's rule). Compare the CPU per request: the "
        "serialisation is the difference (plaintext-c256, where both send a constant, is level).",
    ("json-c32", "nginx"):
        "as json-c256: nginx's /json is a constant string, Swoop's is serialised per request.",
}


def _note(sc, peer):
    return NOTES.get((sc, peer)) or NOTES.get((sc, "*"))


def _busy(r):
    return "–" if r.get("server_busy") is None else pct(r["server_busy"])


def _reasons(res, sc, peer, rs, rp, ratios):
    out = []
    if ratios and min(ratios) < 1.0 <= max(ratios):
        out.append("level within the run's spread: the repetitions fall on both sides of 1.0")
    bound = [name for name, r in ((SWOOP, rs), (peer, rp)) if r["flags"].get("load-generator-bound")]
    if bound:
        out.append("the load generator's core was saturated in the measurements of " + " and ".join(bound)
                   + f" (load tool {pct(rs.get('loadgen_busy'))} beside Swoop, {pct(rp.get('loadgen_busy'))} "
                     "beside the peer): req/s there are the client's limit more than the server's")
    a, b = rs.get("server_cpu_ms_per_1k"), rp.get("server_cpu_ms_per_1k")
    if a is not None and b is not None:
        waited = (f"was busy {_busy(rs)} of its core against {_busy(rp)}: it waited on the client or the "
                  "kernel, not on its own work")
        if a < 0.97 * b:
            out.append(f"Swoop spent less server CPU per request ({ms(a)} against {ms(b)} ms per 1,000) and {waited}")
        elif a <= 1.03 * b:
            out.append(f"Swoop spent about the same server CPU per request ({ms(a)} against {ms(b)} ms per 1,000) "
                       f"and {waited}")
        else:
            out.append(f"Swoop spent more server CPU per request: {ms(a)} against {ms(b)} ms per 1,000 "
                       f"(busy {_busy(rs)} against {_busy(rp)})")
    ps, pp = aggregate.syscall_probe(res, SWOOP, sc), aggregate.syscall_probe(res, peer, sc)
    if ps and pp and ps.get("per_request") is not None and pp.get("per_request") is not None:
        out.append(f"system calls per request {per_req(ps['per_request'])} against {per_req(pp['per_request'])}")
    note = _note(sc, peer)
    if note:
        out.append(note.rstrip("."))
    return "; ".join(out) + "."


def section(res, subjects, scenarios):
    if SWOOP not in subjects:
        return ""
    peers = [p for p in subjects if not p.startswith("swoop") and res["subjects"][p]["kind"] != "none"]
    rows = []
    for sc in scenarios:
        if res["scenarios"][sc]["tool"] in PACED_TOOLS:
            continue
        rs = aggregate.row(res, SWOOP, sc)
        if not rs or rs["rps"] is None:
            continue
        for peer in peers:
            rp = aggregate.row(res, peer, sc)
            if not rp or rp["rps"] is None or rp["rps"] <= rs["rps"]:
                continue
            ratios = aggregate.rep_ratios(res, SWOOP, peer, sc)
            rows.append((sc, res["subjects"][peer]["title"], f"{rs['rps']:,.0f}", f"{rp['rps']:,.0f}",
                         spread(ratios), _reasons(res, sc, peer, rs, rp, ratios)))
    lines = ["## Where Swoop is behind", ""]
    if not rows:
        lines.append(f"In no load scenario of this run did a peer's median req/s exceed Swoop's "
                     f"(`{SWOOP}`).")
        return "\n".join(lines)
    lines += [f"Every load scenario in which a peer's median req/s is above Swoop's (`{SWOOP}`), with "
              "Swoop ÷ peer per repetition (median, min–max) and what the same run measured beside it. "
              "Open-loop scenarios are left out (every subject gets the same request rate; see their p99).",
              "",
              table(["scenario", "peer", "Swoop req/s", "peer req/s", "Swoop ÷ peer", "measured beside it"], rows,
                    ["l", "l", "r", "r", "r", "l"])]
    return "\n".join(lines)
