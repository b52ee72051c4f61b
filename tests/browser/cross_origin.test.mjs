// A web app on another origin speaking through voxserve from Debian's headless Chromium, as
// docs/operations.md#access-tokens describes it: the app's backend (this test) mints an access
// token with the API key; the page, which never sees the key, streams speech over REST (a CORS
// request with a preflight) and over the WebSocket (?token= in the URL). A page from an origin
// not in http.cors.allowed_origins gets neither. Run by CTest with VOXSERVE_BIN and BROWSER_DEPS.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startServer } from './servers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.resolve(process.env.BROWSER_DEPS || here, 'package.json'));
const { chromium } = require('playwright-core');

const API_KEY = 'sk-app-backend-0123456789';
const TEXT = 'The first sentence comes from another origin. The second one follows it.';

// What the app's page runs: speech over REST read as a stream, and over the WebSocket.
const PAGE = `<!doctype html><meta charset="utf-8"><title>app</title><script>
window.speakRest = async (base, token, text) => {
  try {
    const response = await fetch(base + '/v1/audio/speech', {
      method: 'POST',
      headers: { 'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input: text, response_format: 'pcm' }),
    });
    const reader = response.body.getReader();
    let chunks = 0, bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks += 1;
      bytes += value.length;
    }
    return { status: response.status, chunks, bytes,
             contentLength: response.headers.get('Content-Length'),
             sampleRate: response.headers.get('X-Sample-Rate'),
             requestId: response.headers.get('X-Request-Id') };
  } catch (error) {
    return { error: String(error) };
  }
};
window.speakWebSocket = (base, token, text) => new Promise((resolve) => {
  const ws = new WebSocket(base.replace('http', 'ws') + '/v1/audio/speech/stream?token=' +
                           encodeURIComponent(token));
  ws.binaryType = 'arraybuffer';
  let opened = false, bytes = 0, last = null;
  ws.onopen = () => {
    opened = true;
    ws.send(JSON.stringify({ model: 'tts-1', voice: 'alloy', response_format: 'pcm' }));
    ws.send(JSON.stringify({ text }));
    ws.send(JSON.stringify({ close: true }));
  };
  ws.onmessage = (message) => {
    if (typeof message.data !== 'string') { bytes += message.data.byteLength; return; }
    const event = JSON.parse(message.data);
    if (event.type === 'audio') bytes += atob(event.audio).length;
    last = event.type;
  };
  ws.onclose = (close) => resolve({ opened, bytes, last, code: close.code });
});
</script>`;

// A page server of its own: its origin is http://127.0.0.1:<its port>.
async function pageServer() {
  const server = createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(PAGE);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

let browser, voxserve, app, stranger;

before(async () => {
  [app, stranger] = await Promise.all([pageServer(), pageServer()]);
  const keys = path.join(mkdtempSync(path.join(tmpdir(), 'voxserve-cross-origin-')), 'keys.yaml');
  writeFileSync(keys, `keys:\n  - name: app\n    key: "${API_KEY}"\n`);
  voxserve = await startServer(process.env.VOXSERVE_BIN,
                               ['--api-keys-file', keys, '--cors-allowed-origins', app.origin]);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  await voxserve?.stop();
  app?.close();
  stranger?.close();
});

// The app's backend: mints with the key, hands the page only the token.
async function mintToken() {
  const response = await fetch(`${voxserve.url}/v1/tokens`, {
    method: 'POST',
    headers: { 'Authorization': `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ expires_in: 120 }),
  });
  assert.equal(response.status, 200);
  return (await response.json()).token;
}

async function pageAt(origin) {
  const page = await (await browser.newContext()).newPage();
  await page.goto(origin + '/');
  return page;
}

test('a page from an allowed origin streams over REST and the WebSocket with a token', async () => {
  const page = await pageAt(app.origin);
  const token = await mintToken();
  const rest = await page.evaluate(([base, t, text]) => window.speakRest(base, t, text),
                                   [voxserve.url, token, TEXT]);
  assert.equal(rest.error, undefined);
  assert.equal(rest.status, 200);
  assert.ok(rest.bytes > 2 * 24000, `${rest.bytes} bytes`);  // over a second of 24 kHz PCM
  // Streamed (the route's default): no Content-Length, a header a CORS page may read. How many
  // reads the page needed depends on its pace, not the server's.
  assert.equal(rest.contentLength, null);
  // Exposed by CORS, so the page can read them.
  assert.equal(rest.sampleRate, '24000');
  assert.ok(rest.requestId);
  const ws = await page.evaluate(([base, t, text]) => window.speakWebSocket(base, t, text),
                                 [voxserve.url, token, TEXT]);
  assert.deepEqual([ws.opened, ws.last], [true, 'done']);
  assert.ok(ws.bytes > 2 * 24000, `${ws.bytes} bytes`);
});

test('a page from another origin gets neither, even with a valid token', async () => {
  const page = await pageAt(stranger.origin);
  const token = await mintToken();
  const rest = await page.evaluate(([base, t, text]) => window.speakRest(base, t, text),
                                   [voxserve.url, token, TEXT]);
  assert.match(rest.error ?? '', /TypeError/);  // the preflight was refused: no request sent
  const ws = await page.evaluate(([base, t, text]) => window.speakWebSocket(base, t, text),
                                 [voxserve.url, token, TEXT]);
  assert.equal(ws.opened, false);
  assert.equal(ws.code, 1006);
  // The same token still works for the allowed origin: the refusals did not spend it.
  const allowed = await pageAt(app.origin);
  const again = await allowed.evaluate(([base, t, text]) => window.speakRest(base, t, text),
                                       [voxserve.url, token, 'Still mine.']);
  assert.equal(again.status, 200);
});

test('a page with no token is refused by the server, not just by the browser', async () => {
  const page = await pageAt(app.origin);
  const rest = await page.evaluate(([base, text]) => window.speakRest(base, 'vxt_forged.x', text),
                                   [voxserve.url, TEXT]);
  assert.equal(rest.status, 401);  // readable: the 401 carries the allowed origin too
  const ws = await page.evaluate(([base, text]) => window.speakWebSocket(base, 'nothing', text),
                                 [voxserve.url, TEXT]);
  assert.equal(ws.opened, false);
});
