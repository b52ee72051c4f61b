// OpenAI's official JavaScript SDK (openai, pinned in package-lock.json) pointed at voxserve with its
// baseURL option, as an application changes its base URL: speech read as a stream (what voice
// agents do) gets its first bytes while the later sentences are still to be synthesized, because
// /v1/audio/speech streams unless the request says "stream": false, as OpenAI's does. Structural
// checks (in flight, paused, cancelled), never timings: CI machines are shared and slow.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { join } from 'node:path';

import { startServer } from '../browser/servers.mjs';

const require = createRequire(join(process.env.OPENAI_DEPS, 'package.json'));
const { default: OpenAI, APIError } = require('openai');

// 200 sentences: over 30 MB of 24 kHz PCM, more than the kernel's socket buffers and voxserve's
// stream buffer hold, so a client that stops reading must hold synthesis back.
const SENTENCES = Array.from({ length: 200 },
  (_, i) => `Sentence number ${i} is here to make the text long enough to stream.`);
const TEXT = SENTENCES.join(' ');

let server;
// Longer inputs than OpenAI's 4096 characters, so one request outgrows every buffer on the way.
before(async () => {
  server = await startServer(process.env.VOXSERVE_BIN, ['--max-input-chars', '20000']);
});
after(async () => { await server?.stop(); });

const client = () => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });

async function inFlight() {
  return (await (await fetch(`${server.url}/health`)).json()).in_flight;
}

async function gauge(name) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line.split(' ')[1]);
}

// Polls a server-side condition (no fixed sleeps): true as soon as it holds, false after 30 s.
async function eventually(condition) {
  for (const deadline = performance.now() + 30_000; performance.now() < deadline;) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

test('a speech response read as a stream is synthesized as the SDK reads it', async () => {
  const response = await client().audio.speech.create({
    model: 'tts-1', voice: 'alloy', input: TEXT, response_format: 'pcm',
  });
  assert.equal(response.headers.get('transfer-encoding'), 'chunked');
  assert.equal(response.headers.get('content-length'), null);
  const reader = response.body.getReader();
  const first = await reader.read();
  assert.ok(!first.done && first.value.length > 0);
  // The first bytes are in the SDK's hands while the request is still being spoken, and an SDK
  // that reads no further holds synthesis back (voxserve pauses the request) instead of having
  // the whole speech synthesized into a buffer.
  assert.equal(await inFlight(), 1);
  assert.ok(await eventually(async () => (await gauge('voxserve_requests_paused')) === 1),
            'the request never paused for its reader');
  // Cancelling the SDK's stream ends the request on the server.
  await reader.cancel();
  assert.ok(await eventually(async () => (await inFlight()) === 0), 'the request outlived its reader');
  assert.equal(await gauge('voxserve_requests_paused'), 0);
});

test('a streamed speech has the bytes of the whole file ("stream": false)', async () => {
  const input = SENTENCES.slice(0, 12).join(' ');
  const streamed = await client().audio.speech.create({
    model: 'tts-1', voice: 'alloy', input, response_format: 'pcm',
  });
  assert.equal(streamed.headers.get('transfer-encoding'), 'chunked');
  const bytes = Buffer.from(await streamed.arrayBuffer()).length;
  const seconds = bytes / 2 / 24000;  // pcm: 16-bit mono at 24 kHz, as OpenAI's
  assert.ok(seconds > 20, `${seconds} s of audio`);
  // voxserve's own field; the SDK passes extra fields on.
  const whole = await client().audio.speech.create({
    model: 'tts-1', voice: 'alloy', input, response_format: 'pcm', stream: false,
  });
  assert.equal(Number(whole.headers.get('content-length')), bytes);
});

test('the SDK reads a streamed WAV whole with arrayBuffer()', async () => {
  const response = await client().audio.speech.create({
    model: 'gpt-4o-mini-tts', voice: 'nova', input: SENTENCES.slice(0, 2).join(' '),
    response_format: 'wav',
  });
  const wav = Buffer.from(await response.arrayBuffer());
  assert.equal(wav.subarray(0, 4).toString(), 'RIFF');
  assert.equal(wav.readUInt32LE(4), 0xFFFFFFFF);  // a streamed WAV's "unknown length"
  assert.ok(wav.length > 44 + 22050 * 2 * 2, `${wav.length} bytes`);  // over 2 s at 22050 Hz
});

test('sse stream_format gives speech.audio.delta events and a done event with usage', async () => {
  const response = await client().audio.speech.create({
    model: 'tts-1', voice: 'echo', input: 'Hello there. Second sentence.', stream_format: 'sse',
    response_format: 'pcm',
  });
  assert.equal(response.headers.get('content-type'), 'text/event-stream');
  const events = (await response.text()).split('\n\n').filter(Boolean)
    .map((block) => JSON.parse(block.replace(/^data: /, '')));
  assert.ok(events.filter((e) => e.type === 'speech.audio.delta').length >= 2);
  const done = events.at(-1);
  assert.equal(done.type, 'speech.audio.done');
  assert.ok(done.usage.input_tokens > 0 && done.usage.total_tokens > done.usage.input_tokens);
});

test('a refused request is the SDK\'s APIError with voxserve\'s status and code', async () => {
  await assert.rejects(
    client().audio.speech.create({ model: 'tts-1', voice: 'no-such-voice', input: 'Hi.' }),
    (error) => error instanceof APIError && error.status === 404 &&
               error.code === 'voice_not_found');
});
