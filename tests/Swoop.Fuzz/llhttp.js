// Runs Node's own HTTP parser (llhttp, through node:_http_common's HTTPParser) on requests
// sent by the differential fuzzer (Llhttp.fs), strict: no lenient flag, as Node's server
// runs without --insecure-http-parser.
//
// stdin: batches, each a u32 (little-endian) count, then per request a u32 length and the bytes.
// stdout: per request, one JSON line about the first message only:
//   k   "accept" (the head was complete), "reject" (an error before the head was complete)
//       or "incomplete"
//   e, r, at   llhttp's error code, reason and byte offset (reject, or an error in the body)
//   m, u, v, h, ka, up   method, target, "1.1", [name, value, ...], keep-alive, upgrade
//   b   "done", "incomplete" or "error" for the body; d its bytes (latin1); t the trailers
'use strict';

const { HTTPParser, methods } = require('_http_common');

const maxHeaderSize = 1 << 20; // far past Swoop's limits, so that size limits show as disagreements
const parser = new HTTPParser();
let msg;

function fresh() {
  return {
    k: 'incomplete', e: null, r: null, at: -1, m: null, u: '', v: null, h: [], ka: false, up: false,
    b: null, d: '', t: [], complete: false, headersDone: false,
  };
}

parser[HTTPParser.kOnMessageBegin] = () => {};
parser[HTTPParser.kOnHeaders] = (headers, url) => {
  if (msg.complete) return;
  // Before the head is complete: headers flushed early (over 32 of them); after it: trailers.
  if (msg.headersDone) msg.t.push(...headers);
  else {
    msg.h.push(...headers);
    if (url) msg.u += url;
  }
};
parser[HTTPParser.kOnHeadersComplete] = (major, minor, headers, method, url, _s, _m, upgrade, keepAlive) => {
  if (msg.complete) return 0;
  msg.headersDone = true;
  msg.k = 'accept';
  msg.m = methodName(method);
  if (url) msg.u += url;
  if (headers) msg.h.push(...headers);
  msg.v = `${major}.${minor}`;
  msg.ka = !!keepAlive;
  msg.up = !!upgrade;
  msg.b = 'incomplete';
  return 0;
};
parser[HTTPParser.kOnBody] = (chunk) => {
  if (!msg.complete) msg.d += chunk.toString('latin1');
};
parser[HTTPParser.kOnMessageComplete] = () => {
  if (!msg.complete) {
    msg.complete = true;
    msg.b = 'done';
  }
};
parser[HTTPParser.kOnExecute] = () => {};

// Node's method table is not llhttp's for every method (QUERY): the name is read from the
// bytes, which llhttp has just matched.
let current;
function methodName(index) {
  let i = 0;
  while (i < current.length && (current[i] === 13 || current[i] === 10)) i++;
  const sp = current.indexOf(32, i);
  return sp < 0 ? methods[index] : current.toString('latin1', i, sp);
}

function run(input) {
  msg = fresh();
  current = input;
  parser.initialize(HTTPParser.REQUEST, {}, maxHeaderSize, HTTPParser.kLenientNone);
  const r = parser.execute(input);
  if (r instanceof Error && !msg.complete) {
    msg.e = r.code;
    msg.r = r.reason;
    msg.at = r.bytesParsed;
    if (msg.headersDone) msg.b = 'error';
    else msg.k = 'reject';
  }
  delete msg.complete;
  delete msg.headersDone;
  return JSON.stringify(msg);
}

let pending = Buffer.alloc(0);

process.stdin.on('data', (data) => {
  pending = pending.length ? Buffer.concat([pending, data]) : data;
  for (;;) {
    // A whole batch, or wait for more.
    if (pending.length < 4) return;
    const count = pending.readUInt32LE(0);
    let pos = 4;
    for (let i = 0; i < count; i++) {
      if (pending.length < pos + 4) return;
      pos += 4 + pending.readUInt32LE(pos);
    }
    if (pending.length < pos) return;
    const out = new Array(count);
    pos = 4;
    for (let i = 0; i < count; i++) {
      const n = pending.readUInt32LE(pos);
      out[i] = run(pending.subarray(pos + 4, pos + 4 + n));
      pos += 4 + n;
    }
    pending = pending.subarray(pos);
    process.stdout.write(out.join('\n') + '\n');
  }
});
process.stdin.on('end', () => process.exit(0));
