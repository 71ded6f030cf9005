"""Scenario `handlers`: on FaultServer, handlers that throw (at once, after an await, after the
response started) and handlers that never complete. A throw is a 500 and the server keeps
serving; a handler that never completes holds its own connection only: wrk on other
connections is answered as before, and shutdown still ends within its deadline."""

import asyncio
import time

from common import NoResponse, PartialResponse, Server, open_conn, percentile, quiet_close, read_response, request, swoop_log_lines, wrk, wrk_text

TITLE = "A handler that throws and one that never completes"
SHUTDOWN = 3.0  # --shutdown-timeout for this scenario, so that the hung handlers cost 3 s, not 30


async def _throws(port, path, connections, each):
    """`connections` keep-alive connections, each sending `each` requests to `path` then GET /;
    returns the statuses seen and what went wrong."""
    statuses, problems = {}, []

    async def one(c):
        reader, writer = await open_conn(port)
        try:
            for i in range(each):
                writer.write(request("GET", path))
                await writer.drain()
                r = await asyncio.wait_for(read_response(reader), 5)
                statuses[r.status] = statuses.get(r.status, 0) + 1
                if r.closes:
                    quiet_close(writer)
                    reader, writer = await open_conn(port)
            writer.write(request("GET", f"/after-throw/{c}"))
            await writer.drain()
            r = await asyncio.wait_for(read_response(reader), 5)
            if r.status != 200:
                problems.append(f"GET after {path}: {r.status}")
        except Exception as e:
            problems.append(f"{type(e).__name__} {e}")
        finally:
            quiet_close(writer)

    await asyncio.gather(*(one(c) for c in range(connections)))
    return statuses, problems


async def _throw_started(port, count):
    """The handler flushes the head and part of a chunked body, then throws: the answer
    must be cut (never passed off as complete), the server still serving."""
    outcomes = {}
    for _ in range(count):
        reader, writer = await open_conn(port)
        writer.write(request("GET", "/throw-started"))
        await writer.drain()
        try:
            r = await asyncio.wait_for(read_response(reader), 5)
            key = f"complete {r.status}"
        except PartialResponse:
            key = "cut mid-answer"
        except NoResponse:
            key = "no answer"
        except asyncio.TimeoutError:
            key = "hung"
        outcomes[key] = outcomes.get(key, 0) + 1
        quiet_close(writer)
    return outcomes


async def _probe_latency(port, count):
    """New connections, one GET each, one after another: latencies in ms and failures."""
    times, failures = [], []
    for i in range(count):
        t = time.monotonic()
        try:
            reader, writer = await open_conn(port)
            writer.write(request("GET", f"/probe/{i}", close=True))
            await writer.drain()
            r = await asyncio.wait_for(read_response(reader), 2)
            quiet_close(writer)
            if r.status != 200:
                failures.append(r.status)
            times.append((time.monotonic() - t) * 1000)
        except Exception as e:
            failures.append(f"{type(e).__name__}")
    return times, failures


def run(scn, args):
    hung_count = 100 if scn.quick else 500
    wrk_seconds = 5 if scn.quick else 10
    server = Server(scn, "fault", args.port, ["--shutdown-timeout", SHUTDOWN]).start()
    try:
        wrk(scn, args.port, "/warm", 32, 5 if scn.quick else 10, "warm-up (discarded)")
        base = wrk(scn, args.port, "/", 32, wrk_seconds, "wrk alone (baseline)")
        scn.log(f"baseline wrk: {wrk_text(base)}")
        fd0 = server.fds()

        sync, sync_bad = asyncio.run(_throws(args.port, "/throw", 20, 10))
        asyn, asyn_bad = asyncio.run(_throws(args.port, "/throw-async", 20, 10))
        started = asyncio.run(_throw_started(args.port, 20))
        scn.log(f"/throw: {sync}; /throw-async: {asyn}; /throw-started: {started}")

        async def with_hung():
            conns = []
            for i in range(hung_count):
                reader, writer = await open_conn(args.port)
                writer.write(request("GET", "/hang"))
                conns.append((reader, writer))
            await asyncio.gather(*(w.drain() for _, w in conns))
            await asyncio.sleep(1.0)
            # A hung handler holds its own connection: a request pipelined behind it waits too.
            reader0, writer0 = conns[0]
            writer0.write(request("GET", "/behind-the-hung-one"))
            await writer0.drain()
            try:
                await asyncio.wait_for(reader0.read(1), 2.0)
                own = "answered (unexpected)"
            except asyncio.TimeoutError:
                own = "waits (as expected)"
            fds_hung = server.fds()
            during = await asyncio.to_thread(wrk, scn, args.port, "/", 32, wrk_seconds,
                                             f"wrk beside {hung_count} never-completing handlers")
            probe_times, probe_failures = await _probe_latency(args.port, 50)
            answered = 0
            for reader, _ in conns:
                if reader.at_eof() or reader._buffer:  # noqa: SLF001 - any byte back would be wrong
                    answered += 1
            for _, w in conns:
                quiet_close(w)
            await asyncio.sleep(1.0)
            return own, fds_hung, during, probe_times, probe_failures, answered

        own, fds_hung, during, probe_times, probe_failures, answered = asyncio.run(with_hung())
        scn.log(f"beside {hung_count} hung handlers: {wrk_text(during)}")
        fds_after = server.fds()
        alive = server.proc.poll() is None

        rc, secs = server.terminate(timeout=SHUTDOWN + 10)
        stderr = server.stderr_text()
        handler_logs = sum(1 for l in swoop_log_lines(stderr) if " swoop[40] " in l)

        scn.number("throw_statuses", sync)
        scn.number("throw_async_statuses", asyn)
        scn.number("throw_after_start_outcomes", started)
        scn.number("hung_handlers", hung_count)
        scn.number("wrk_alone", base)
        scn.number("wrk_beside_hung", during)
        scn.number("probe_ms", {"p50": round(percentile(probe_times, 50), 2), "max": round(max(probe_times), 2)}
                   if probe_times else None)
        scn.number("fds", {"before": fd0, "hung": fds_hung, "hung_clients_gone": fds_after})
        scn.number("shutdown_seconds", round(secs, 2))
        scn.number("exit_code", rc)
        scn.number("handler_failures_logged", handler_logs)

        scn.check("a throwing handler gets 500", sync == {500: 200} and not sync_bad,
                  f"statuses {sync}; {sync_bad[:3]}")
        scn.check("a handler throwing after an await gets 500", asyn == {500: 200} and not asyn_bad,
                  f"statuses {asyn}; {asyn_bad[:3]}")
        scn.check("the same connections serve the next request (200)", not sync_bad and not asyn_bad,
                  "GET / after the throws: all 200")
        scn.check("a throw after the response started cuts the answer", started == {"cut mid-answer": 20},
                  f"{started}")
        scn.check("the failures are logged (rate-limited)", handler_logs > 0, f"{handler_logs} 'handler failed' lines")
        scn.check("never-completing handlers stay unanswered, and hold their own connection",
                  answered == 0 and own.startswith("waits"),
                  f"{hung_count} hung, {answered} answered; a request pipelined behind one {own}")
        ratio = during["p99_ms"] / base["p99_ms"] if base["p99_ms"] else float("inf")
        scn.check("other connections keep being answered (wrk: no errors, p99 within 2x)",
                  during["errors"] == 0 and during["requests"] > 0 and ratio <= 2.0,
                  f"{wrk_text(during)} vs alone {base['rps']} req/s, p99 {base['p99_ms']:.2f} ms ({ratio:.2f}x)")
        scn.check("new connections answered at once beside them", not probe_failures and probe_times
                  and max(probe_times) < 1000,
                  f"50 sequential GETs: p50 {percentile(probe_times, 50):.1f} ms, max {max(probe_times):.1f} ms, "
                  f"failures {probe_failures}")
        scn.check("server alive after all of it", alive, f"alive {alive}")
        scn.check(f"shutdown with hung handlers ends within --shutdown-timeout {SHUTDOWN:.0f} s + 3 s, exit 0",
                  rc == 0 and secs <= SHUTDOWN + 3.0, f"exit {rc} after {secs:.2f} s")
        scn.note(f"while the handlers hang the server holds their sockets: {fd0} fds -> {fds_hung} with "
                 f"{hung_count} hung -> {fds_after} after their clients closed (closed at shutdown)")
    finally:
        server.kill()
