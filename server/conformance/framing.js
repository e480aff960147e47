// Drives `faultline serve` with Microsoft's LSP client library
// (vscode-languageserver-protocol, pinned in package.json): initialize over
// the client, then one frame with broken framing written to the server's
// stdin between the client's messages, then a request from the client.
// The server must close the connection at once (the client sees close, the
// request is not answered) and exit non-zero, naming the framing error.
//
//   node framing.js FAULTLINE_BINARY 'RAW BAD FRAME (JSON string)'
'use strict';

const { spawn } = require('node:child_process');
const rpc = require('vscode-languageserver-protocol/node');

const [bin, badJSON] = process.argv.slice(2);
if (!bin || !badJSON) {
  console.error("usage: node framing.js FAULTLINE_BINARY '\"Content-Length: abc\\r\\n\\r\\n\"'");
  process.exit(2);
}
const bad = JSON.parse(badJSON);

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) fail(msg);
  console.log('ok   ' + msg);
}

// The client library's writer rejects with EPIPE, or ERR_STREAM_DESTROYED
// when node has already closed the pipe, once the server is gone: that is
// the expected end here, anything else fails the test.
const serverGone = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);
process.on('unhandledRejection', (e) => { if (!e || !serverGone.has(e.code)) fail(e && e.stack || String(e)); });

const overall = setTimeout(() => fail('timed out after 20 s: the server did not exit'), 20000);

async function main() {
  const server = spawn(bin, ['serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr += d; });
  server.stdin.on('error', () => {}); // EPIPE once the server is gone
  const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  const conn = rpc.createProtocolConnection(
    new rpc.StreamMessageReader(server.stdout),
    new rpc.StreamMessageWriter(server.stdin));
  const closed = new Promise((resolve) => conn.onClose(resolve));
  conn.onError(() => {});
  conn.listen();

  const init = await conn.sendRequest(rpc.InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {} });
  check(init.capabilities.hoverProvider, 'initialize answered');
  await conn.sendNotification(rpc.InitializedNotification.type, {});

  server.stdin.write(bad);
  const start = Date.now();
  let answered = false;
  conn.sendRequest(rpc.ShutdownRequest.type).then(() => { answered = true; }, () => {});
  const code = await exited;
  const ms = Date.now() - start;
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
  check(code !== 0 && code !== null, `server exited non-zero (${code}) ${ms} ms after the bad frame, stdin still open`);
  check(ms < 5000, 'within 5 s');
  check(!answered, 'the request after the bad frame was not answered');
  check(/LSP framing error/.test(stderr), 'stderr names the framing error');
  clearTimeout(overall);
  conn.dispose();
}

main().catch((e) => fail(e && e.stack || String(e)));
