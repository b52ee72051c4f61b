// LiveKit's ElevenLabs TTS plugin for Node (@livekit/agents-plugin-elevenlabs, pinned) against
// voxserve through its baseURL option. Its synthesize() (a ChunkedStream: POST
// text-to-speech/{voice_id}/stream?output_format=pcm_22050, then PCM into audio frames) runs
// without a LiveKit server; so does its stream() (a SynthesizeStream over the multi-stream-input
// WebSocket: a context per stream, text per sentence, then flush and close_context).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { startServer } from '../../browser/servers.mjs';

const require = createRequire(join(process.env.LIVEKIT_DEPS, 'package.json'));
const { initializeLogger } = require('@livekit/agents');
const { tts: agentsTts } = require('@livekit/agents');
const { TTS } = require('@livekit/agents-plugin-elevenlabs');

let server;
before(async () => {
  initializeLogger({ pretty: false, level: 'warn' });
  server = await startServer(process.env.VOXSERVE_BIN);
});
after(async () => { await server?.stop(); });

test('the plugin synthesizes a sentence into 22.05 kHz frames', async () => {
  const tts = new TTS({ apiKey: 'unused', voiceId: 'en-us', baseURL: `${server.url}/elevenlabs/v1` });
  let samples = 0;
  let rate = 0;
  for await (const audio of tts.synthesize('Hello from LiveKit, through voxserve.')) {
    samples += audio.frame.samplesPerChannel;
    rate = audio.frame.sampleRate;
  }
  await tts.close();
  assert.equal(rate, 22050);
  const seconds = samples / rate;
  assert.ok(seconds > 1 && seconds < 6, `${seconds} s of audio`);
});

test('the plugin streams text pieces through multi-stream-input into frames', async () => {
  const tts = new TTS({ apiKey: 'unused', voiceId: 'en-us', baseURL: `${server.url}/elevenlabs/v1` });
  const stream = tts.stream();
  for (const piece of ['Hello from LiveKit, ', 'streaming through voxserve. ', 'A second sentence.']) {
    stream.pushText(piece);
  }
  stream.flush();
  stream.endInput();
  let samples = 0;
  let rate = 0;
  let transcript = '';
  for await (const audio of stream) {
    if (audio === agentsTts.SynthesizeStream.END_OF_STREAM) break;
    samples += audio.frame.samplesPerChannel;
    rate = audio.frame.sampleRate;
    for (const word of audio.timedTranscripts ?? []) transcript += word.text ?? String(word);
    if (audio.final) break;
  }
  stream.close();
  await tts.close();
  assert.equal(rate, 22050);
  const seconds = samples / rate;
  assert.ok(seconds > 2 && seconds < 12, `${seconds} s of audio`);
  // The plugin builds its timed words from voxserve's per-sentence alignment.
  assert.equal(transcript.replace(/\s+/g, ' ').trim(),
               'Hello from LiveKit, streaming through voxserve. A second sentence.');
});
