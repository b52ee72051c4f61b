// OpenAI's official JavaScript SDK (openai, pinned in package-lock.json) pointed at voxserve with its
// baseURL option, as an application changes its base URL: speech read as a stream (what voice
// agents do) gets its first bytes while the later sentences are still being synthesized, because
// /v1/audio/speech streams unless the request says "stream": false, as OpenAI's does.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { join } from 'node:path';

import { startServer } from '../browser/servers.mjs';

const require = createRequire(join(process.env.OPENAI_DEPS, 'package.json'));
const { default: OpenAI, APIError } = require('openai');

// 40 sentences: seconds of synthesis, so "first bytes long before the end" means something.
const SENTENCES = Array.from({ length: 40 },
  (_, i) => `Sentence number ${i} is here to make the text long enough to stream.`);
const TEXT = SENTENCES.join(' ');

let server;
before(async () => { server = await startServer(process.env.VOXSERVE_BIN); });
after(async () => { await server?.stop(); });

const client = () => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });

async function inFlight() {
  return (await (await fetch(`${server.url}/health`)).json()).in_flight;
}

test('a speech response read as a stream starts while later sentences are synthesized', async () => {
  const started = performance.now();
  const response = await client().audio.speech.create({
    model: 'tts-1', voice: 'alloy', input: TEXT, response_format: 'pcm',
  });
  assert.equal(response.headers.get('transfer-encoding'), 'chunked');
  assert.equal(response.headers.get('content-length'), null);
  const reader = response.body.getReader();
  const first = await reader.read();
  const firstAt = performance.now() - started;
  assert.ok(!first.done && first.value.length > 0);
  // The request is still being spoken when its first bytes are in the SDK's hands.
  assert.equal(await inFlight(), 1);
  let bytes = first.value.length;
  for (let part = await reader.read(); !part.done; part = await reader.read()) {
    bytes += part.value.length;
  }
  const total = performance.now() - started;
  assert.ok(firstAt < total / 4, `first bytes at ${firstAt.toFixed(0)} ms of ${total.toFixed(0)} ms`);
  const seconds = bytes / 2 / 24000;  // pcm: 16-bit mono at 24 kHz, as OpenAI's
  assert.ok(seconds > 60, `${seconds} s of audio`);

  // The same speech as a whole file ("stream": false, voxserve's; the SDK passes extra fields on).
  const whole = await client().audio.speech.create({
    model: 'tts-1', voice: 'alloy', input: TEXT, response_format: 'pcm', stream: false,
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
