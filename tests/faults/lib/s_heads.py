"""Scenario `heads`: memory through a burst of connections that each hold a request head just
under the limits (31 KiB of header lines, no blank line), as issue 9 asks: RSS before, every
second while they are held, after the head timeout cuts them (408), and after the 5 s
trimmer has had its turn. FaultServer with RequestHeadTimeout 10 s (the default is 30 s; the
same code, a shorter wait)."""

import asyncio
import time

from common import Server, mib, open_conn, quiet_close, simple_get

TITLE = "Memory through a burst of near-limit partial heads"
HEAD_TIMEOUT = 10
ALLOWANCE_MIB = 64  # what the idle server may keep over its RSS before the burst


def partial_head(i):
    lines = [f"GET /heads/{i} HTTP/1.1\r\n".encode(), b"Host: faults\r\n"]
    size = sum(len(x) for x in lines)
    k = 0
    while size < 31 * 1024:  # under the 32 KiB header section, 1 KiB a line
        line = f"X-Fill-{k}: ".encode() + b"v" * 1000 + b"\r\n"
        lines.append(line)
        size += len(line)
        k += 1
    return b"".join(lines)


async def _hold(port, count, server, samples):
    outcomes = {}
    opened = []

    async def one(i):
        try:
            reader, writer = await open_conn(port, limit=65536)
        except OSError as e:
            outcomes[f"open failed: {type(e).__name__}"] = outcomes.get(f"open failed: {type(e).__name__}", 0) + 1
            return
        opened.append(time.monotonic())
        try:
            writer.write(partial_head(i))
            await writer.drain()
            data = await asyncio.wait_for(reader.read(64), HEAD_TIMEOUT + 20)
            key = data[:12].decode("latin-1") or "closed, no answer"
        except (ConnectionResetError, BrokenPipeError):
            key = "reset"
        except asyncio.TimeoutError:
            key = "not cut"
        outcomes[key] = outcomes.get(key, 0) + 1
        quiet_close(writer)

    async def sample():
        t0 = time.monotonic()
        while True:
            samples.append((round(time.monotonic() - t0, 1), server.rss(), server.fds()))
            await asyncio.sleep(1.0)

    sampler = asyncio.create_task(sample())
    # Opened in waves of 500, as fast as the client manages.
    tasks = []
    for start in range(0, count, 500):
        tasks += [asyncio.create_task(one(i)) for i in range(start, min(count, start + 500))]
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    alive = await asyncio.to_thread(simple_get, port, "/ready", 5.0)
    await asyncio.gather(*tasks)
    sampler.cancel()
    return outcomes, alive


def run(scn, args):
    count = 1000 if scn.quick else 5000
    server = Server(scn, "fault", args.port, ["--head-timeout", HEAD_TIMEOUT]).start()
    try:
        rss0, fd0 = server.settle(2)
        scn.log(f"before: RSS {mib(rss0)} MiB, {fd0} fds")
        samples = []
        outcomes, alive = asyncio.run(_hold(args.port, count, server, samples))
        peak = max(s[1] for s in samples)
        peak_fds = max(s[2] for s in samples)
        scn.log(f"held {count}: peak RSS {mib(peak)} MiB, peak fds {peak_fds}; outcomes {outcomes}")
        idle = server.idle_rss()
        scn.log(f"idle 5..25 s after: {[mib(x) for x in idle]} MiB")
        per_conn = (peak - rss0) / count
        scn.number("connections", count)
        scn.number("head_bytes_each", len(partial_head(0)))
        scn.number("rss_curve_mib", {"before": mib(rss0),
                                      "every_second_while_held": [(t, mib(r)) for t, r, _ in samples],
                                      "idle_every_5s_after": [mib(x) for x in idle]})
        scn.number("rss_per_held_head_kib", round(per_conn, 1))
        scn.check("every held head cut by the head timeout with 408",
                  outcomes.get("HTTP/1.1 408", 0) == count, str(outcomes))
        scn.check("the server answered beside them", alive is not None, str(alive)[:60])
        scn.check(f"RSS back within {ALLOWANCE_MIB} MiB of before after 25 s idle", idle[-1] <= rss0 + ALLOWANCE_MIB * 1024,
                  f"{mib(rss0)} MiB before, peak {mib(peak)} MiB ({per_conn:.0f} KiB a held head), {mib(idle[-1])} MiB after 25 s idle")
        scn.check("descriptors back to before (+-2)", abs(server.fds() - fd0) <= 2, f"{fd0} -> peak {peak_fds} -> {server.fds()}")
    finally:
        rc, _ = server.terminate()
        scn.number("exit_code", rc)
