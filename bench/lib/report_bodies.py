"""The report's section on the body group (`bench/run --only body`): requests with bodies on
Swoop and its peers, Swoop's ratios taken repetition by repetition, the uploads' CPU per GiB
and memory, and the pre-flight answers every subject gave."""
import aggregate
import bodies
import scenarios as scen_mod
from fmt import mib, ms, n0, spread, table

SWOOP = "swoop-body"
PEERS = ("minimal-body", "giraffe-body")
# Scenarios whose cost is counted per GiB of payload rather than per request.
UPLOADS = ("upload-10m-c4", "upload-10m-chunked-c4", "upload-100m-c4")


def _title(res, s):
    return res["subjects"].get(s, {}).get("title", s)


def _checks(res, s):
    return next((x.get("body_checks") for x in aggregate.sessions_of(res, s) if x.get("body_checks")), None)


def _cost(res, s, sc):
    """Server CPU: seconds per GiB of payload for the uploads, ms per 1000 requests otherwise."""
    if sc in UPLOADS:
        return spread(list(aggregate.by_rep(res, s, sc, "server_cpu_s_per_gib").values()), "{:.2f}", count=False)
    return spread(list(aggregate.by_rep(res, s, sc, "server_cpu_ms_per_1k").values()), "{:.0f}", count=False)


def section(res, subjects, scenarios):
    scs = [sc for sc in scenarios if res["scenarios"][sc].get("tier") == "body"]
    subs = [s for s in subjects if "body" in res["subjects"][s].get("tiers", [])]
    if not scs or not subs:
        return ""
    reps = res.get("mode_settings", {}).get("reps")
    lines = ["## Requests with bodies", "",
             "Each request is written whole by `bench/lib/bodies.py` and sent as it is by wrk "
             "(`bench/wrk/raw.lua`), keep-alive, the same bytes to every subject: `json-write` a product of "
             f"{len(bodies.product_json())} bytes of JSON bound to a record and validated (name not empty, price not "
             "negative), answered 201 with the record as JSON and `Location: /products/<sku>`; `form-post` an "
             f"urlencoded form of {len(bodies.FORM)} fields bound to a record, answered 200 with a line of text; "
             "`upload` 10 MiB (and once 100 MiB) read to the end and discarded, answered with the number of bytes "
             "read; `upload-multipart` a multipart/form-data form with a 1 MiB file that the handler saves to disk "
             "(a folder per subject under bench/.work/uploads, 256 names reused in turn), answered 201; the "
             "`-chunked` variants send the same payload with `Transfer-Encoding: chunked` (the JSON in 256-byte "
             "chunks, the upload in 64 KiB chunks). Before the warm-up every request is sent once from a raw "
             "socket and the answer compared with the expected one (status, body, and for the JSON its "
             "Location and content type; for the multipart form, the bytes of the file saved); a subject that "
             "answers otherwise is not timed on that request (its row says so).", "",
             "nginx is not in this group: it cannot bind or validate JSON or a form, nor save a multipart part, "
             "and for the upload its `return` answers before the body has been read (the body is read and "
             "discarded after the answer, while the client is still sending), so a client that sends each "
             "request whole before it waits for the answer, as wrk does, is left waiting for an answer already "
             "given (tried: 4 requests in 3 s at 4 connections). Making nginx read the body first takes a module "
             "that stores it (proxying, or `mirror` with `mirror_request_body on`, which buffers the body in "
             "memory or a temporary file, and runs after `return` in any case): not a read-and-discard.", "",
             f"Median over {reps} repetition(s), min–max in brackets. Server CPU: seconds per GiB of payload for "
             "the uploads (the CPU of the server's process tree ÷ the payload of the requests answered), ms per "
             "1000 requests otherwise. Peak RSS: the largest sample (every 100 ms) of the server's resident memory "
             "while the scenario ran, over all repetitions. ‡ = load-generator-bound in at least one repetition.", ""]
    rows = []
    for sc in scs:
        for s in subs:
            r = aggregate.row(res, s, sc)
            if not r:
                continue
            if not r["ok_runs"]:
                err = "; ".join(sorted(set(e for e in r["errors_runs"] if e)))[:160]
                rows.append([sc, _title(res, s), f"not measured: {err}", "", "", "", "", ""])
                continue
            bound = " ‡" if r["flags"].get("load-generator-bound") else ""
            rows.append([sc, _title(res, s), f"{n0(r['rps'])} ({n0(r['rps_min'])}–{n0(r['rps_max'])}){bound}",
                         ms(r["lat"]["p50"]), ms(r["lat"]["p99"]), _cost(res, s, sc), mib(r["peak_rss_kb"]),
                         n0(r["errors_total"])])
    lines.append(table(["Scenario", "Subject", "req/s (min–max)", "p50 ms", "p99 ms",
                        "server CPU (s/GiB or ms/1k req)", "peak RSS MiB", "errors"], rows))

    peers = [p for p in PEERS if p in subs]
    if SWOOP in subs and peers:
        ratio_rows = []
        for sc in scs:
            cells = [sc]
            for p in peers:
                key = "server_cpu_s_per_gib" if sc in UPLOADS else "server_cpu_ms_per_1k"
                cells.append(spread(aggregate.rep_ratios(res, SWOOP, p, sc), count=False))
                cells.append(spread(aggregate.rep_ratios(res, p, SWOOP, sc, key), count=False))
            ratio_rows.append(cells)
        head = ["Scenario"]
        for p in peers:
            short = res["subjects"][p].get("short", p)
            head += [f"req/s Swoop ÷ {short}", f"CPU {short} ÷ Swoop"]
        lines += ["", "Swoop's ratios to each peer, taken repetition by repetition (Swoop's req/s ÷ the peer's in "
                  "the same repetition; the peer's server CPU per request, or per GiB for the uploads, ÷ Swoop's: "
                  "above 1 when Swoop spends less): median (min–max).", "", table(head, ratio_rows)]

    mem_rows = []
    for s in subs:
        st = aggregate.startup(res, s)
        cells = [_title(res, s), mib(st["idle_rss_kb"])]
        for sc in UPLOADS:
            r = aggregate.row(res, s, sc) if sc in scs else None
            cells.append(mib(r["peak_rss_kb"]) if r and r["ok_runs"] else "–")
        mem_rows.append(cells)
    if any(sc in scs for sc in UPLOADS):
        lines += ["", "Memory while uploads run (MiB): the server's RSS idle after start, and the largest RSS sampled "
                  "while each upload scenario ran (memory kept from the scenarios and warm-up before counts too). "
                  "4 connections each, so 40 MiB of bodies in flight at 10 MiB and 400 MiB at 100 MiB: a server that "
                  "streams the body stays flat from one column to the next.", "",
                  table(["Subject", "idle"] + list(UPLOADS), mem_rows)]

    def body_of(sc):  # results.json records it; older runs' from the scenario list
        return res["scenarios"][sc].get("body") or getattr(scen_mod.BY_NAME.get(sc), "body", None)

    names = [n for n in bodies.REQUESTS if any(body_of(sc) == n for sc in scs)]
    check_rows, problems, digests = [], [], {}
    for s in subs:
        checks = _checks(res, s)
        if not checks:
            continue
        cells = [_title(res, s)]
        for n in names:
            c = checks.get(n)
            if not c:
                cells.append("–")
                continue
            cells.append(f"{c.get('status')} {c.get('body_bytes', '–')} B ({c.get('sha256', '–')})"
                         + ("" if c.get("ok") else " ✗"))
            digests.setdefault(n, set()).add(c.get("sha256"))
            if not c.get("ok"):
                problems.append(f"{_title(res, s)} {n}: {c.get('problem')}")
        bad = checks.get("json-invalid") or {}
        cells.append(str(bad.get("status", "–")) + ("" if bad.get("ok") else " ✗"))
        check_rows.append(cells)
    if check_rows:
        same = [n for n in names if len(digests.get(n, ())) == 1]
        lines += ["", "The pre-flight answers (first repetition's session): status, body bytes and the first 16 hex "
                  "digits of the body's SHA-256; the last column is the status of an invalid product (empty name, "
                  "negative price), which must be a 4xx. Byte-identical bodies on every subject: "
                  + (", ".join(same) or "none") + " (the JSON answers are compared as JSON, so the key order or "
                  "spacing may differ).", "", table(["Subject"] + names + ["invalid JSON"], check_rows)]
        if problems:
            lines += ["", "Pre-flight answers that differed (those scenarios were not timed): " + "; ".join(problems) + "."]
    return "\n".join(lines)
