// The web playground in a real browser: Debian's Chromium, headless, driven by playwright-core
// (no browser download). Run by CTest (tests/browser/CMakeLists.txt) with
//   VOXSERVE_BIN   the server binary
//   BROWSER_DEPS   the folder where `npm ci` installed package.json's dependencies
//   ARTIFACT_DIR   where screenshots go (the build folder)
//   UPDATE_DOCS_SCREENSHOT=1  also refresh docs/playground.png (the README's picture)
// Headless Chromium has no audio device: playback is checked through the page's AudioContext
// (state, buffers scheduled, time played), which the page exposes as window.voxPlayground.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startServer } from './servers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.resolve(process.env.BROWSER_DEPS || here, 'package.json'));
const { chromium } = require('playwright-core');
const bin = process.env.VOXSERVE_BIN;
const artifacts = process.env.ARTIFACT_DIR || tmpdir();
assert.ok(bin, 'set VOXSERVE_BIN to the voxserve binary');

const WAIT_MS = 30_000;  // bound for every wait on the page (synthesis of a long text included)
const API_KEY = 'sk-browser-test-0123456789';
// 45 sentences (~3,500 characters, under the default 4,096 limit), several minutes of speech:
// synthesis takes long enough that playback must have begun before the response ends.
const LONG_TEXT = Array.from({ length: 45 }, (_, i) =>
  `Sentence number ${i + 1} is here so that the response takes a while to finish.`).join(' ');

let browser;
let plain;      // an ordinary server
let faulty;     // --fault-injection: answers 429 on request
let keyed;      // needs an API key

before(async () => {
  const keys = path.join(mkdtempSync(path.join(tmpdir(), 'voxserve-browser-')), 'keys.yaml');
  writeFileSync(keys, `keys:\n  - name: browser\n    key: "${API_KEY}"\n`);
  [plain, faulty, keyed] = await Promise.all([
    startServer(bin),
    startServer(bin, ['--fault-injection', 'true']),
    startServer(bin, ['--api-keys-file', keys]),
  ]);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,  // playwright-core also gives each launch a fresh, temporary --user-data-dir
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           '--autoplay-policy=no-user-gesture-required'],
  });
});

after(async () => {
  await browser?.close();
  await Promise.all([plain, faulty, keyed].map((server) => server?.stop()));
});

// A page at `url` that records console errors, uncaught exceptions and failed requests.
async function openPage(url, viewport = { width: 1024, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error') page.problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => page.problems.push(`exception: ${error.message}`));
  await page.goto(url);
  return page;
}

async function openReady(url, viewport) {
  const page = await openPage(url, viewport);
  await page.waitForFunction(() => window.voxPlayground?.ready, null, { timeout: WAIT_MS });
  return page;
}

// Polls /health from the test until the server has no request in flight. Not with
// page.waitForFunction: it takes an async predicate's Promise as truthy and returns at once.
async function waitForIdle(url) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const health = await (await fetch(`${url}/health`)).json();
    if (health.in_flight === 0) return;
    assert.ok(Date.now() < deadline, `still ${health.in_flight} request(s) in flight after ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const probe = (page) => page.evaluate(() => JSON.parse(JSON.stringify(window.voxPlayground)));
const waitForState = (page, states) => page.waitForFunction(
  (wanted) => wanted.includes(window.voxPlayground.state), states, { timeout: WAIT_MS });

describe('playground', () => {
  it('loads without console errors, with the voices from the server', async () => {
    const page = await openReady(plain.url);
    const voices = await (await fetch(`${plain.url}/v1/voices`)).json();
    const shown = await page.$$eval('#voice option', (options) => options.map((o) => o.value));
    assert.equal(shown.length, voices.data.length, 'every voice of /v1/voices is offered');
    assert.ok(shown.includes('en-us') && shown.includes('alloy'));
    const groups = await page.$$eval('#voice optgroup', (g) => g.map((x) => x.label));
    assert.ok(groups.includes('espeak · en-us'), `grouped by engine and language: ${groups.slice(0, 5)}`);
    await page.fill('#voice-filter', 'cmn');
    const filtered = await page.$$eval('#voice option', (options) => options.map((o) => o.value));
    // Searching matches ids and languages: the built-in zh_* names speak cmn too.
    const language = new Map(voices.data.map((v) => [v.id, String(v.language).toLowerCase()]));
    assert.ok(filtered.length > 0 && filtered.includes('cmn') &&
              filtered.every((id) => id.includes('cmn') || language.get(id)?.includes('cmn')),
              `search: ${filtered}`);
    await page.fill('#voice-filter', '');
    assert.ok((await page.$$eval('#model option', (o) => o.length)) >= 1);
    await page.waitForFunction(() => window.voxPlayground.health?.status === 'ready', null, { timeout: WAIT_MS });
    assert.equal(await page.textContent('#health-status'), 'ready');
    assert.equal(await page.isHidden('#clone'), true, 'no model can clone voices: no cloning panel');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  it('plays a long text before the response is complete, shows the figures and a WAV to download', async () => {
    const page = await openReady(plain.url);
    await page.fill('#text', LONG_TEXT);
    await page.click('#speak');
    await page.waitForFunction(() => window.voxPlayground.run?.responseCompleteAt, null, { timeout: WAIT_MS });
    const { run } = await probe(page);
    console.log(`long text: first audio ${Math.round(run.firstAudioAt - run.startedAt)} ms, ` +
                `response complete ${Math.round(run.responseCompleteAt - run.startedAt)} ms, ` +
                `${run.audioSeconds.toFixed(1)} s of audio, ${run.playedSecondsAtResponseComplete.toFixed(2)} s ` +
                `played by then, ${run.scheduledBuffers} buffers`);
    assert.equal(run.contextState, 'running', 'the AudioContext plays');
    assert.ok(run.firstAudioAt < run.responseCompleteAt,
              `first audio (${run.firstAudioAt}) before the response ended (${run.responseCompleteAt})`);
    assert.ok(run.playedSecondsAtResponseComplete > 0,
              'audio had been playing for a while when the last byte arrived');
    assert.ok(run.scheduledBuffers > 1, `buffers scheduled as chunks came: ${run.scheduledBuffers}`);
    assert.ok(run.audioSeconds > 30, `a long text is long audio: ${run.audioSeconds} s`);
    assert.equal(run.sampleRate, 24000);
    assert.match(await page.textContent('#fig-first-audio'), /^\d+ ms$/);
    assert.match(await page.textContent('#fig-total'), /^\d+ ms$/);
    assert.match(await page.textContent('#fig-audio'), /^\d+(\.\d+)? s$/);
    assert.match(await page.textContent('#fig-rtf'), /^\d+\.\d{3}$/);
    const wav = await page.evaluate(async () => {
      // The Blob behind the link (the page's CSP rightly keeps even the test from fetching blob:).
      const blob = window.voxPlayground.download;
      const head = new Uint8Array(await blob.slice(0, 4).arrayBuffer());
      return { size: blob.size, riff: String.fromCharCode(...head) };
    });
    assert.equal(wav.riff, 'RIFF');
    assert.equal(wav.size, 44 + run.bytes, 'the download is the streamed audio with a WAV header');
    assert.match(await page.getAttribute('#download', 'download'), /\.wav$/);
    await page.screenshot({ path: path.join(artifacts, 'playground.png'), fullPage: true });
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1') {
      copyFileSync(path.join(artifacts, 'playground.png'), path.join(here, '../../docs/playground.png'));
    }
    await page.click('#stop');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  it('Stop silences playback and the server drops the request', async () => {
    // Requests the server ended, cancelled or completed: espeak-ng with a worker per core may
    // have synthesized all of a long text before Stop (the browser reads as fast as loopback
    // allows), so which of the two it was depends on the machine; that it ended exactly once
    // does not.
    const ended = async () => {
      const text = await (await fetch(`${plain.url}/metrics`)).text();
      const sum = (pattern) => [...text.matchAll(pattern)].reduce((n, m) => n + Number(m[1]), 0);
      return sum(/^voxserve_requests_failed_total\{[^}]*code="cancelled"[^}]*\} (\d+)/gm) +
             sum(/^voxserve_synthesis_duration_seconds_count\{[^}]*\} (\d+)/gm);
    };
    const endedBefore = await ended();
    const page = await openReady(plain.url);
    await page.fill('#text', LONG_TEXT);
    // A quarter of the speed is four times the audio: the response is still running at Stop.
    await page.$eval('#speed', (range) => {
      range.value = '0.25';
      range.dispatchEvent(new Event('input'));
    });
    await page.click('#speak');
    await waitForState(page, ['playing']);
    await page.click('#stop');
    await waitForState(page, ['stopped']);
    const { run } = await probe(page);
    assert.equal(run.sourcesAfterStop, 0, 'no buffer left scheduled');
    assert.equal(run.responseCompleteAt, null, 'the response was broken off, not read to its end');
    assert.equal(await page.textContent('#status'), 'Stopped.');
    assert.equal(await page.isEnabled('#speak'), true);
    assert.equal(await page.isDisabled('#stop'), true);
    // Aborting the fetch closed the connection: the server dropped what it had not synthesized
    // yet, and nothing of the request is left running.
    await waitForIdle(plain.url);
    assert.equal(await ended(), endedBefore + 1, 'the server ended the request exactly once');
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  it('plays the other formats as whole files and offers them for download', async () => {
    const page = await openReady(plain.url);
    for (const format of ['wav', 'mp3', 'opus', 'flac']) {
      await page.selectOption('#format', format);
      await page.click('#speak');
      await waitForState(page, ['playing', 'done', 'error']);
      const { run, error, download } = await probe(page);
      assert.equal(error, null, `${format}: ${JSON.stringify(error)}`);
      assert.ok(run.audioSeconds > 1, `${format} decoded: ${run.audioSeconds} s`);
      assert.ok(download !== null, format);
      assert.match(await page.getAttribute('#download', 'download'), new RegExp(`\\.${format}$`));
      await page.click('#stop');
    }
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  it('shows an unknown voice as the server explains it', async () => {
    const page = await openReady(plain.url);
    await page.evaluate(() => {
      const select = document.getElementById('voice');
      select.append(new Option('no-such-voice', 'no-such-voice'));
      select.value = 'no-such-voice';
    });
    await page.click('#speak');
    await waitForState(page, ['error']);
    assert.equal(await page.isVisible('#error'), true);
    assert.match(await page.textContent('#error'), /^Unknown voice: .*no-such-voice/);
    assert.equal((await probe(page)).error.code, 'voice_not_found');
    await page.context().close();
  });

  it('shows a 429 with its Retry-After', async () => {
    const faults = await fetch(`${faulty.url}/testing/faults`, {
      method: 'POST',
      body: JSON.stringify({ fail_next: 1, status: 429, retry_after: 7, path: '/v1/audio/speech' }),
    });
    assert.equal(faults.status, 200);
    const page = await openReady(faulty.url);
    await page.click('#speak');
    await waitForState(page, ['error']);
    const message = await page.textContent('#error');
    assert.match(message, /busy/);
    assert.match(message, /Retry after 7 s\./);
    // The next try goes through.
    await page.click('#speak');
    await waitForState(page, ['playing', 'done']);
    assert.equal(await page.isHidden('#error'), true);
    await page.context().close();
  });

  it('works 375 px wide, with labels, keyboard and visible focus', async () => {
    const page = await openReady(plain.url, { width: 375, height: 812 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(overflow <= 375, `no horizontal scrolling: ${overflow} px wide`);
    for (const id of ['#text', '#voice', '#model', '#format', '#speed', '#speak', '#stop']) {
      const box = await page.locator(id).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `${id} fits: ${JSON.stringify(box)}`);
    }
    const unlabeled = await page.$$eval('input, select, textarea', (fields) =>
      fields.filter((f) => f.labels.length === 0 && !f.getAttribute('aria-label')).map((f) => f.id));
    assert.deepEqual(unlabeled, [], 'every field has a label');
    // Keyboard only: Tab from the text box reaches Speak, which shows its focus and speaks on Enter.
    await page.focus('#text');
    for (let i = 0; i < 12 && (await page.evaluate(() => document.activeElement.id)) !== 'speak'; i++) {
      await page.keyboard.press('Tab');
    }
    assert.equal(await page.evaluate(() => document.activeElement.id), 'speak');
    const outline = await page.$eval('#speak', (b) => getComputedStyle(b).outlineStyle);
    assert.notEqual(outline, 'none', 'focus is visible');
    await page.keyboard.press('Enter');
    await waitForState(page, ['playing', 'done']);
    await page.screenshot({ path: path.join(artifacts, 'playground-375.png'), fullPage: true });
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  it('asks for an API key when the server needs one, then works', async () => {
    const page = await openPage(keyed.url);
    await page.waitForSelector('#auth:not([hidden])', { timeout: WAIT_MS });
    assert.match(await page.textContent('#error'), /needs an API key/);
    assert.equal(await page.evaluate(() => document.activeElement.id), 'api-key');
    await page.fill('#api-key', 'sk-wrong');
    await page.click('#api-key-use');
    await page.waitForFunction(() => /refused this API key/.test(document.getElementById('error').textContent),
                               null, { timeout: WAIT_MS });
    await page.fill('#api-key', API_KEY);
    await page.click('#api-key-use');
    await page.waitForFunction(() => window.voxPlayground.ready, null, { timeout: WAIT_MS });
    assert.equal(await page.isHidden('#auth'), true);
    assert.ok((await probe(page)).voices > 10);
    await page.click('#speak');
    await waitForState(page, ['playing', 'done']);
    assert.equal(await page.isHidden('#error'), true);
    // The browser's own 401s for the first tries are all the console may hold.
    assert.deepEqual(page.problems.filter((p) => !/status of 401/.test(p)), []);
    await page.context().close();
  });

  it('is served with its content types, validators and a strict CSP; unknown files are JSON 404s', async () => {
    for (const [file, type] of [['/', 'text/html; charset=utf-8'],
                                ['/playground/app.js', 'text/javascript; charset=utf-8'],
                                ['/playground/style.css', 'text/css; charset=utf-8'],
                                ['/playground/favicon.svg', 'image/svg+xml']]) {
      const response = await fetch(`${plain.url}${file}`);
      assert.equal(response.status, 200, file);
      assert.equal(response.headers.get('content-type'), type, file);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', file);
      assert.equal(response.headers.get('cache-control'), 'no-cache', file);
      const csp = response.headers.get('content-security-policy');
      assert.match(csp, /default-src 'self'/, file);
      assert.match(csp, /script-src 'self';/, file);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, file);
      const etag = response.headers.get('etag');
      assert.match(etag, /^"[0-9a-f]{20}"$/, file);
      const again = await fetch(`${plain.url}${file}`, { headers: { 'If-None-Match': etag } });
      assert.equal(again.status, 304, `${file} revalidates`);
    }
    const html = await (await fetch(`${plain.url}/`)).text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    const missing = await fetch(`${plain.url}/playground/nope.js`);
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).error.code, 'route_not_found');
    // With API keys on, the page loads keyless (it asks for the key); the API does not.
    assert.equal((await fetch(`${keyed.url}/playground/app.js`)).status, 200);
    assert.equal((await fetch(`${keyed.url}/v1/voices`)).status, 401);
  });

  it('is not served when turned off', async () => {
    const off = await startServer(bin, ['--playground', 'false']);
    try {
      const response = await fetch(`${off.url}/`);
      assert.equal(response.status, 404);
      assert.equal((await response.json()).error.code, 'route_not_found');
      assert.equal((await fetch(`${off.url}/health/live`)).status, 200);
    } finally {
      await off.stop();
    }
  });
});
