// LiveKit's ElevenLabs TTS plugin for Node (@livekit/agents-plugin-elevenlabs, pinned) against
// voxserve through its baseURL option. Its synthesize() (a ChunkedStream: POST
// text-to-speech/{voice_id}/stream?output_format=pcm_22050, then PCM into audio frames) runs
// without a LiveKit server; its stream() needs the multi-stream-input WebSocket, which voxserve
// does not offer yet (docs/elevenlabs.md).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { startServer } from '../../browser/servers.mjs';

const require = createRequire(join(process.env.LIVEKIT_DEPS, 'package.json'));
const { initializeLogger } = require('@livekit/agents');
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
