'use strict';
// Node.js core `http` module, one process (the server gets one core), no framework.
// Node sends no Server header by default. Run with NODE_ENV=production.
const http = require('node:http');

function option(name, envName, fallback) {
  const i = process.argv.indexOf(name);
  if (i > 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[envName] || fallback;
}

const host = option('--host', 'HOST', '127.0.0.1');
const port = Number(option('--port', 'PORT', '8080'));

const plaintext = Buffer.from('Hello, World!');

function send(res, contentType, body) {
  res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length });
  res.end(body);
}

const server = http.createServer((req, res) => {
  switch (req.url) {
    case '/plaintext':
      return send(res, 'text/plain', plaintext);
    case '/json':
      return send(res, 'application/json', Buffer.from(JSON.stringify({ message: 'Hello, World!' })));
    case '/time':
      return send(res, 'application/json', Buffer.from(JSON.stringify({ time: new Date().toISOString() })));
    default:
      res.writeHead(404, { 'Content-Length': 0 });
      return res.end();
  }
});

server.listen(port, host, () => console.log(`node http listening on http://${host}:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
