'use strict';
// The routing tier of samples/Api on Node.js core `http`, no framework: a Map for the exact
// paths and a small split-based matcher for the templates, with the same paths, answers,
// status codes and content types as samples/Api. One process (the server gets one core);
// Node sends no Server header by default. Run with NODE_ENV=production.
const http = require('node:http');

function option(name, envName, fallback) {
  const i = process.argv.indexOf(name);
  if (i > 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[envName] || fallback;
}

const host = option('--host', 'HOST', '127.0.0.1');
const port = Number(option('--port', 'PORT', '8080'));

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

function send(res, status, contentType, body) {
  const headers = { 'Content-Length': body.length };
  if (contentType) headers['Content-Type'] = contentType;
  res.writeHead(status, headers);
  res.end(body);
}

const notFound = Buffer.alloc(0);
const text = (res, s) => send(res, 200, TEXT, Buffer.from(s));
const json = (res, v) => send(res, 200, JSON_TYPE, Buffer.from(JSON.stringify(v)));

// Exact paths: handler per path. Bodies that never change are encoded once.
const exact = new Map();
const helloWorld = Buffer.from('Hello, World!');
exact.set('/plaintext', (req, res) => send(res, 200, TEXT, helloWorld));
exact.set('/json', (req, res) => json(res, { message: 'Hello, World!' }));
exact.set('/time', (req, res) => json(res, { now: new Date().toISOString() }));
for (let i = 0; i < 100; i++) {
  const body = Buffer.from(`r${i}`);
  exact.set(`/r/${i}`, (req, res) => send(res, 200, TEXT, body));
}

// %i as samples/Api reads it: an optional '-', digits, within a 32-bit int.
function int32(s) {
  if (!/^-?[0-9]+$/.test(s)) return null;
  const n = Number(s);
  return n >= -2147483648 && n <= 2147483647 ? n : null;
}

function decode(s) {
  try { return decodeURIComponent(s); } catch { return null; }
}

// Templates: /r/%i/items/%s, /r/%i/users/%i, /hello/%s. Returns the handler, or null.
function matchTemplate(path) {
  const parts = path.split('/'); // ['', 'r', i, 'items', s]
  if (parts.length === 5 && parts[1] === 'r' && parts[4] !== '') {
    const i = int32(parts[2]);
    if (i === null) return null;
    if (parts[3] === 'items') {
      const s = decode(parts[4]);
      return s === null ? null : (req, res) => text(res, `item ${i} ${s}`);
    }
    if (parts[3] === 'users') {
      const j = int32(parts[4]);
      return j === null ? null : (req, res) => text(res, `user ${i} ${j}`);
    }
    return null;
  }
  if (parts.length === 3 && parts[1] === 'hello' && parts[2] !== '') {
    const name = decode(parts[2]);
    return name === null ? null : (req, res) => text(res, `Hello, ${name}!`);
  }
  return null;
}

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const handler = exact.get(path) || matchTemplate(path);
  if (handler === null || handler === undefined) return send(res, 404, null, notFound);
  // Every route is GET (HEAD answered as GET without the body by node:http).
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'Allow': 'GET, HEAD', 'Content-Length': 0 });
    return res.end();
  }
  handler(req, res);
});

server.listen(port, host, () => console.log(`node http (routes) listening on http://${host}:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
