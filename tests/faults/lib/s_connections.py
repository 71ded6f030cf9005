"""Scenario `connections`: many keep-alive connections held open at once while wrk keeps
requests coming on others. Memory before, with and after the held connections."""

import asyncio
import time

from common import Server, mib, open_conn, quiet_close, read_response, request, wrk, wrk_text

TITLE = "10,000 concurrent keep-alive connections"


async def _open_all(port, count, parallel):
    """Opens `count` connections, each answered once (a keep-alive GET); returns the
    (reader, writer) pairs that got their 200 and the number of failures."""
    gate = asyncio.Semaphore(parallel)
    held, failures = [], []

    async def one(i):
        async with gate:
            try:
                reader, writer = await open_conn(port, limit=65536)
                writer.write(request("GET", f"/held/{i}"))
                await writer.drain()
                r = await asyncio.wait_for(read_response(reader), 10)
                if r.status == 200 and not r.closes:
                    held.append((i, reader, writer))
                else:
                    failures.append(f"{i}: status {r.status}")
                    quiet_close(writer)
            except Exception as e:
                failures.append(f"{i}: {type(e).__name__} {e}")

    await asyncio.gather(*(one(i) for i in range(count)))
    return held, failures


async def _ask_again(held, parallel):
    """A second request on every held connection: all still open and served?"""
    gate = asyncio.Semaphore(parallel)
    bad = []

    async def one(i, reader, writer):
        async with gate:
            try:
                writer.write(request("GET", f"/again/{i}"))
                await writer.drain()
                r = await asyncio.wait_for(read_response(reader), 10)
                if r.status != 200 or f"/again/{i}".encode() not in r.body:
                    bad.append(f"{i}: status {r.status}")
            except Exception as e:
                bad.append(f"{i}: {type(e).__name__} {e}")

    await asyncio.gather(*(one(i, r, w) for i, r, w in held))
    return bad


def run(scn, args):
    count = 2000 if scn.quick else args.connections
    wrk_seconds = 5 if scn.quick else 10
    server = Server(scn, "echo", args.port).start()
    try:
        scn.number("server_fd_limit", server.fd_limit())
        wrk(scn, args.port, "/warm", 32, 5 if scn.quick else 10, "warm-up (discarded)")
        rss0, fd0 = server.settle(2)
        scn.log(f"before: RSS {mib(rss0)} MiB, {fd0} fds")
        base = wrk(scn, args.port, "/", 32, wrk_seconds, "wrk alone (baseline)")
        scn.log(f"baseline wrk: {wrk_text(base)}")
        rss0b, fd0b = server.settle(1)

        async def hold():
            t0 = time.time()
            held, failures = await _open_all(args.port, count, 256)
            opened = time.time() - t0
            scn.log(f"{len(held)} connections open and answered in {opened:.1f} s, {len(failures)} failed")
            await asyncio.sleep(3)
            rss1, fd1 = server.rss(), server.fds()
            scn.log(f"with {len(held)} held: RSS {mib(rss1)} MiB, {fd1} fds")
            # wrk runs in a thread so that this loop keeps the held sockets' reads flowing.
            during = await asyncio.to_thread(
                wrk, scn, args.port, "/", 32, wrk_seconds, f"wrk while {count} connections are held"
            )
            rss1b = server.rss()
            scn.log(f"wrk while held: {wrk_text(during)}")
            again = await _ask_again(held, 256)
            for _, _, w in held:
                quiet_close(w)
            await asyncio.sleep(0.2)
            return held, failures, opened, rss1, fd1, rss1b, during, again

        held, failures, opened, rss1, fd1, rss1b, during, again = asyncio.run(hold())
        t_closed = time.time()
        rss2, fd2 = server.settle(2)
        # The server trims pooled connections and unused slabs every 10 s; give it two rounds.
        while time.time() - t_closed < 25:
            time.sleep(1)
        rss3, fd3 = server.rss(), server.fds()
        scn.log(f"after close: RSS {mib(rss2)} MiB ({fd2} fds) at 2 s, {mib(rss3)} MiB ({fd3} fds) at 25 s")

        per_conn = (rss1 - rss0b) * 1024 / max(1, len(held))
        scn.number("connections", count)
        scn.number("open_seconds", round(opened, 1))
        scn.number("rss_before_mib", mib(rss0b))
        scn.number("rss_held_mib", mib(rss1))
        scn.number("rss_held_after_wrk_mib", mib(rss1b))
        scn.number("rss_after_close_2s_mib", mib(rss2))
        scn.number("rss_after_close_25s_mib", mib(rss3))
        scn.number("rss_per_held_connection_bytes", round(per_conn))
        scn.number("fds_before", fd0b)
        scn.number("fds_held", fd1)
        scn.number("fds_after_close", fd3)
        scn.number("wrk_alone", base)
        scn.number("wrk_while_held", during)

        scn.check("all connections opened and answered", not failures and len(held) == count,
                  f"{len(held)}/{count} ({failures[:3]})")
        scn.check("the server holds them all", fd1 - fd0b >= count,
                  f"server fds {fd0b} -> {fd1} (+{fd1 - fd0b})")
        scn.check("requests on other connections answered meanwhile",
                  during["errors"] == 0 and during["requests"] > 0,
                  f"{wrk_text(during)} (alone: {base['rps']} req/s, p99 {base['p99_ms']:.2f} ms)")
        scn.check("every held connection answers again afterwards", not again,
                  f"{len(held) - len(again)}/{len(held)} ({again[:3]})")
        scn.check("descriptors released after close", fd3 <= fd0b + 2, f"{fd0b} -> {fd1} -> {fd3}")
        scn.note(f"RSS {mib(rss0b)} MiB before, {mib(rss1)} MiB with {len(held)} held "
                 f"({per_conn:.0f} B per connection), {mib(rss2)} MiB 2 s after they closed, "
                 f"{mib(rss3)} MiB after 25 s")
    finally:
        rc, secs = server.terminate()
        scn.number("exit_code", rc)
