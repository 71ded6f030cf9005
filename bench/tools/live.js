#!/usr/bin/env node
// The client of the suite's `live` group (bench/lib/live.py drives it; one JSON object per
// line on stdout).
//
//   node live.js sse --port P --streams N [--inflight K]
//     Opens N Server-Sent Event streams (GET /sse on raw sockets, at most K connecting at
//     once), prints {"event":"open",...} once every stream's response head (200) arrived, then
//     follows commands on stdin, one per line:
//       broadcast SEQ SIZE  GET /broadcast?size=SIZE&seq=SEQ on a new connection; prints
//                           {"event":"broadcast",...} when every open stream has the event
//                           (its data ends in "#SEQ"), or after 30 s with how many had it
//       close               closes every stream; prints {"event":"closed"}
//       exit                exits (so does the end of stdin)
//
//   node live.js ws --port P --connections C --size B --warmup W --seconds D
//     Opens C WebSockets to /ws (npm `ws`, no compression); each sends a B-byte binary message
//     and sends the next when the echo is back (closed loop per connection). After W seconds
//     prints {"event":"start",...}; D seconds later {"event":"end","messages":M,...}, the
//     echoes received in between.
'use strict';
const net = require('net');
const http = require('http');
const readline = require('readline');

function args(argv) {
  const out = { host: '127.0.0.1', port: 18080, streams: 10000, inflight: 200, connections: 256,
                size: 32, warmup: 2, seconds: 5 };
  for (let i = 1; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['port', 'streams', 'inflight', 'connections', 'size', 'warmup', 'seconds']) out[k] = Number(out[k]);
  out.mode = argv[0];
  return out;
}

const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const now = () => Number(process.hrtime.bigint()) / 1e6; // milliseconds

function sse(o) {
  const streams = [];
  let connecting = 0, opened = 0, failed = 0, started = 0, announced = false;
  let pending = null; // the broadcast awaited: { seq, marker, t0, got, times, timer }
  const t0 = now();

  function settle() {
    if (!announced && opened + failed === o.streams) {
      announced = true;
      emit({ event: 'open', streams: opened, failed, ms: now() - t0 });
    }
  }

  function finishBroadcast() {
    const p = pending;
    pending = null;
    clearTimeout(p.timer);
    const times = p.times.sort((a, b) => a - b);
    const live = streams.filter((s) => s.open).length;
    emit({ event: 'broadcast', seq: p.seq, received: p.got, of: live,
           ms: times.length ? times[times.length - 1] : null,
           p50_ms: times.length ? times[Math.floor(times.length / 2)] : null });
  }

  function onData(s, chunk) {
    let text = s.tail + chunk.toString('latin1');
    if (!s.head) {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) { s.tail = text; return; }
      const ok = text.startsWith('HTTP/1.1 200');
      s.head = true;
      connecting--;
      if (ok) { s.open = true; opened++; } else { failed++; s.sock.destroy(); }
      settle();
      connectMore();
      text = text.slice(end + 4);
    }
    if (pending && !s.seen && text.includes(pending.marker)) {
      s.seen = true;
      pending.got++;
      pending.times.push(now() - pending.t0);
      if (pending.got === pending.target) finishBroadcast();
    }
    s.tail = text.slice(-32);
  }

  function connectMore() {
    while (connecting < o.inflight && started < o.streams) {
      started++;
      connecting++;
      const s = { sock: null, head: false, open: false, seen: false, tail: '' };
      s.sock = net.connect({ host: o.host, port: o.port }, () => {
        s.sock.write(`GET /sse HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\nAccept: text/event-stream\r\n\r\n`);
      });
      s.sock.setNoDelay(true);
      s.sock.on('data', (c) => onData(s, c));
      s.sock.on('error', () => {});
      s.sock.on('close', () => {
        if (!s.head) { s.head = true; connecting--; failed++; settle(); connectMore(); }
        s.open = false;
      });
      streams.push(s);
    }
  }
  connectMore();

  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    const [cmd, a, b] = line.trim().split(/\s+/);
    if (cmd === 'broadcast') {
      const seq = Number(a), size = Number(b);
      for (const s of streams) s.seen = false;
      pending = { seq, marker: `#${seq}\n`, t0: now(), got: 0, times: [],
                  target: streams.filter((s) => s.open).length };
      pending.timer = setTimeout(finishBroadcast, 30000);
      http.get({ host: o.host, port: o.port, path: `/broadcast?size=${size}&seq=${seq}`, agent: false }, (res) => res.resume())
        .on('error', (e) => emit({ event: 'error', message: String(e) }));
    } else if (cmd === 'close') {
      for (const s of streams) s.sock.destroy();
      emit({ event: 'closed' });
    } else if (cmd === 'exit') {
      process.exit(0);
    }
  });
  rl.on('close', () => process.exit(0));
}

function ws(o) {
  const WebSocket = require('ws');
  const payload = Buffer.alloc(o.size, 0x61);
  let count = 0, openCount = 0, errors = 0, startCount = 0, startAt = 0;
  const sockets = [];
  for (let i = 0; i < o.connections; i++) {
    const sock = new WebSocket(`ws://${o.host}:${o.port}/ws`, { perMessageDeflate: false });
    sock.on('open', () => {
      openCount++;
      sock.send(payload);
      if (openCount === o.connections) begin();
    });
    sock.on('message', () => {
      count++;
      sock.send(payload);
    });
    sock.on('error', () => { errors++; });
    sockets.push(sock);
  }
  function begin() {
    emit({ event: 'open', connections: openCount });
    setTimeout(() => {
      startCount = count;
      startAt = now();
      emit({ event: 'start', messages: count });
      setTimeout(() => {
        const messages = count - startCount, seconds = (now() - startAt) / 1000;
        emit({ event: 'end', messages, seconds, errors });
        for (const s of sockets) s.terminate();
        process.exit(0);
      }, o.seconds * 1000);
    }, o.warmup * 1000);
  }
}

const o = args(process.argv.slice(2));
if (o.mode === 'sse') sse(o);
else if (o.mode === 'ws') ws(o);
else { console.error('usage: live.js sse|ws --port P ...'); process.exit(2); }
