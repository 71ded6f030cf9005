"""Scenario `bursts`: does memory come back after a burst of large responses? 100 clients at
once fetch 6 MiB each from FaultServer's /big (a handler that allocates nothing of its own, so
what stays is the server's), three times; then the server idles for 25 s (several rounds of its
5 s trimmer). README: "Memory follows load both ways"."""

import asyncio

from common import Server, mib, open_conn, quiet_close, read_response, request

TITLE = "Memory after a burst of large responses"
KIB = 6144
CLIENTS = 100
ALLOWANCE_MIB = 64  # what the idle server may keep over its RSS before the bursts


async def _burst(port):
    bad = []

    async def one(i):
        try:
            reader, writer = await open_conn(port)
            writer.write(request("GET", f"/big?kb={KIB}"))
            await writer.drain()
            r = await asyncio.wait_for(read_response(reader), 60)
            if r.status != 200 or len(r.body) != KIB * 1024:
                bad.append(f"{i}: {r.status}, {len(r.body)} bytes")
            quiet_close(writer)
        except Exception as e:
            bad.append(f"{i}: {type(e).__name__} {e}")

    await asyncio.gather(*(one(i) for i in range(CLIENTS)))
    return bad


def run(scn, args):
    rounds = 2 if scn.quick else 3
    server = Server(scn, "fault", args.port).start()
    try:
        asyncio.run(_burst_small(args.port))
        rss0, fd0 = server.settle(2)
        scn.log(f"before: RSS {mib(rss0)} MiB")
        after_rounds, bad = [], []
        for k in range(rounds):
            bad += asyncio.run(_burst(args.port))
            after_rounds.append(server.rss())
            scn.log(f"after burst {k + 1}: RSS {mib(after_rounds[-1])} MiB")
        idle = server.idle_rss()
        scn.log(f"idle 5..25 s: {[mib(x) for x in idle]} MiB")
        scn.number("bursts", f"{rounds} x {CLIENTS} clients at once, {KIB} KiB each")
        scn.number("rss_mib", {"before": mib(rss0), "after_each_burst": [mib(x) for x in after_rounds],
                               "idle_every_5s": [mib(x) for x in idle]})
        scn.check("every large response complete", not bad, f"{rounds * CLIENTS - len(bad)}/{rounds * CLIENTS} {bad[:3]}")
        scn.check(f"RSS back within {ALLOWANCE_MIB} MiB of before after 25 s idle", idle[-1] <= rss0 + ALLOWANCE_MIB * 1024,
                  f"{mib(rss0)} MiB before, {mib(max(after_rounds))} MiB after the bursts, {mib(idle[-1])} MiB after 25 s idle")
        scn.check("descriptors back to before (+-2)", abs(server.fds() - fd0) <= 2, f"{fd0} -> {server.fds()}")
    finally:
        rc, _ = server.terminate()
        scn.number("exit_code", rc)


async def _burst_small(port):
    """Warm-up: the same path with 64 KiB answers, so that code is compiled before measuring."""
    for _ in range(20):
        reader, writer = await open_conn(port)
        writer.write(request("GET", "/big?kb=64"))
        await writer.drain()
        await asyncio.wait_for(read_response(reader), 10)
        quiet_close(writer)
