// ElevenLabs' official JavaScript SDK (@elevenlabs/elevenlabs-js, pinned in package-lock.json)
// pointed at voxserve with its baseUrl option: what the SDK sends is what ElevenLabs' API takes,
// and what it parses (its serializers are strict about types) is what voxserve answers.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startServer } from '../browser/servers.mjs';

const require = createRequire(join(process.env.ELEVENLABS_DEPS, 'package.json'));
const { ElevenLabsClient, ElevenLabsError } = require('@elevenlabs/elevenlabs-js');

const VOICE = 'en-us';
const TEXT = 'Hello from the software development kit. This is a second sentence.';
const KEY = 'sk-sdk-0123456789abcdef';

let open;    // no keys configured
let keyed;   // with a keys file
before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'voxserve-el-'));
  const keys = join(dir, 'keys.yaml');
  writeFileSync(keys, JSON.stringify({ keys: [{ name: 'sdk', key: KEY }] }));
  [open, keyed] = await Promise.all([startServer(process.env.VOXSERVE_BIN,
                                                 ['--dictionaries-dir', join(dir, 'dictionaries')]),
                                     startServer(process.env.VOXSERVE_BIN, ['--api-keys-file', keys])]);
});
after(async () => {
  await Promise.all([open?.stop(), keyed?.stop()]);
});

const client = (server, apiKey = 'unused') =>
  new ElevenLabsClient({ baseUrl: `${server.url}/elevenlabs`, apiKey, maxRetries: 0 });

async function collect(stream) {
  const parts = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

test('convert returns pcm_16000 audio of a plausible length', async () => {
  const audio = await collect(await client(open).textToSpeech.convert(VOICE, {
    text: TEXT, modelId: 'eleven_multilingual_v2', outputFormat: 'pcm_16000',
    voiceSettings: { stability: 0.5, similarityBoost: 0.75, speed: 1.0 },
  }));
  const seconds = audio.length / 2 / 16000;
  assert.ok(seconds > 2 && seconds < 15, `${seconds} s`);
});

test('stream returns as much ulaw_8000 audio as convert', async () => {
  const request = { text: TEXT, outputFormat: 'ulaw_8000' };
  const whole = await collect(await client(open).textToSpeech.convert(VOICE, request));
  const streamed = await collect(await client(open).textToSpeech.stream(VOICE, request));
  assert.ok(whole.length > 16000, `${whole.length} bytes`);  // over 2 s at 8 kHz, 1 byte each
  // espeak-ng's output varies by a few samples from one request to the next.
  assert.ok(Math.abs(streamed.length - whole.length) < 100);
});

test('convertWithTimestamps: the alignment covers the text and ends with the audio', async () => {
  const result = await client(open).textToSpeech.convertWithTimestamps(VOICE, {
    text: TEXT, outputFormat: 'pcm_24000',
  });
  const seconds = Buffer.from(result.audioBase64, 'base64').length / 2 / 24000;
  const { characters, characterStartTimesSeconds, characterEndTimesSeconds } = result.alignment;
  assert.equal(characters.join('').replace(/ /g, ''), TEXT.replace(/ /g, ''));
  assert.equal(characterStartTimesSeconds.length, characters.length);
  assert.ok(Math.abs(characterEndTimesSeconds.at(-1) - seconds) < 1e-3);
  assert.deepEqual(result.normalizedAlignment, result.alignment);
});

test('streamWithTimestamps: one chunk per sentence, offsets in the request audio time', async () => {
  const stream = await client(open).textToSpeech.streamWithTimestamps(VOICE, {
    text: TEXT, outputFormat: 'pcm_22050',
  });
  let elapsed = 0;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    const seconds = Buffer.from(chunk.audioBase64, 'base64').length / 2 / 22050;
    const starts = chunk.alignment.characterStartTimesSeconds;
    assert.ok(Math.abs(starts[0] - elapsed) < 1e-3, `chunk ${chunks} starts at ${starts[0]}`);
    elapsed += seconds;
    assert.ok(Math.abs(chunk.alignment.characterEndTimesSeconds.at(-1) - elapsed) < 1e-3);
  }
  assert.equal(chunks, 2);
});

test('voices.getAll and models.list parse', async () => {
  const { voices } = await client(open).voices.getAll();
  assert.ok(voices.some((voice) => voice.voiceId === VOICE));
  const models = await client(open).models.list();
  assert.ok(models.some((model) => model.modelId === 'espeak' && model.canDoTextToSpeech));
});

test('an unknown voice is an ElevenLabsError 400 voice_not_found', async () => {
  await assert.rejects(client(open).textToSpeech.convert('no-such-voice', { text: 'Hi.' }),
    (error) => error instanceof ElevenLabsError && error.statusCode === 400 &&
               error.body.detail.status === 'voice_not_found');
});

test('a wrong xi-api-key gets 401 invalid_api_key; the right one is served', async () => {
  await assert.rejects(client(keyed, 'sk-wrong-0123456789abcdef').textToSpeech.convert(VOICE, { text: 'Hi.' }),
    (error) => error instanceof ElevenLabsError && error.statusCode === 401 &&
               error.body.detail.status === 'invalid_api_key');
  const audio = await collect(await client(keyed, KEY).textToSpeech.convert(VOICE, {
    text: 'Hi.', outputFormat: 'pcm_16000',
  }));
  assert.ok(audio.length > 1000);
});

// The SDK has no WebSocket helper for text-to-speech (2.73.0), but it carries ElevenLabs' message
// schemas for stream-input and multi-stream-input (serialization/types): client messages are
// built with them (jsonOrThrow gives the wire form) and every server message must parse with
// them. `ws` is the SDK's own WebSocket dependency.
const wire = require('@elevenlabs/elevenlabs-js/serialization');
const WebSocket = require('ws');

function socket(server, route, query, headers = {}) {
  const url = `${server.url.replace('http://', 'ws://')}/elevenlabs/v1/text-to-speech/${VOICE}/${route}?${query}`;
  const ws = new WebSocket(url, { headers });
  const messages = [];
  const waiters = [];
  ws.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    for (const waiter of waiters.splice(0)) waiter();
  });
  const closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  const opened = new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  const until = async (done) => {
    while (!done(messages)) await new Promise((resolve) => waiters.push(resolve));
  };
  return { ws, messages, closed, opened, until };
}

function parse(schema, message) {
  const parsed = schema.parse(message, { unrecognizedObjectKeys: 'passthrough' });
  assert.ok(parsed.ok, `${JSON.stringify(message).slice(0, 200)}: ${JSON.stringify(parsed.errors)}`);
  return parsed.value;
}

test('stream-input speaks the SDK schemas: InitializeConnection, SendText, CloseConnection', async () => {
  const s = socket(open, 'stream-input', 'model_id=eleven_flash_v2_5&output_format=pcm_24000');
  await s.opened;
  s.ws.send(JSON.stringify(wire.InitializeConnection.jsonOrThrow({
    text: ' ', voiceSettings: { stability: 0.5, speed: 1.0 },
    generationConfig: { chunkLengthSchedule: [120, 160] }, xiApiKey: 'unused' })));
  s.ws.send(JSON.stringify(wire.SendText.jsonOrThrow({ text: 'Hello from the SDK schemas. ', tryTriggerGeneration: true })));
  s.ws.send(JSON.stringify(wire.SendText.jsonOrThrow({ text: 'A second one', flush: true })));
  s.ws.send(JSON.stringify(wire.CloseConnection.jsonOrThrow({ text: '' })));
  assert.equal(await s.closed, 1000);
  const final = parse(wire.FinalOutput, s.messages.at(-1));
  assert.equal(final.isFinal, true);
  const chunks = s.messages.slice(0, -1).map((m) => parse(wire.AudioOutput, m));
  assert.equal(chunks.length, 2);
  let bytes = 0;
  for (const chunk of chunks) {
    bytes += Buffer.from(chunk.audio, 'base64').length;
    const { chars, charStartTimesMs, charDurationsMs } = chunk.alignment;
    assert.equal(chars.length, charStartTimesMs.length);
    assert.equal(chars.length, charDurationsMs.length);
    // From espeak-ng's word events, not spread evenly: words of different lengths in time give
    // their characters different durations (an even spread gives one, +-1 ms of rounding).
    assert.ok(new Set(charDurationsMs).size > 3, `durations ${charDurationsMs}`);
  }
  const last = chunks.at(-1).alignment;
  const endMs = last.charStartTimesMs.at(-1) + last.charDurationsMs.at(-1);
  // The last word ends before the sentence's trailing silence (0.2 s of pause and espeak-ng's
  // own fade), which belongs to no character.
  const audioMs = bytes / 48;
  assert.ok(endMs <= audioMs + 3 && endMs > audioMs - 400, `${endMs} ms aligned, ${audioMs} ms of audio`);
});

test('multi-stream-input speaks the SDK schemas: contexts, FlushContext, CloseContext, CloseSocket', async () => {
  const s = socket(keyed, 'multi-stream-input', 'output_format=ulaw_8000', { 'xi-api-key': KEY });
  await s.opened;
  for (const contextId of ['one', 'two']) {
    s.ws.send(JSON.stringify(wire.InitializeConnectionMulti.jsonOrThrow({ text: ' ', contextId })));
  }
  s.ws.send(JSON.stringify(wire.SendTextMulti.jsonOrThrow({ text: 'Context one speaks. ', contextId: 'one' })));
  s.ws.send(JSON.stringify(wire.SendTextMulti.jsonOrThrow({ text: 'Context two speaks. ', contextId: 'two' })));
  for (const contextId of ['one', 'two']) {
    s.ws.send(JSON.stringify(wire.FlushContext.jsonOrThrow({ contextId, flush: true })));
    s.ws.send(JSON.stringify(wire.CloseContext.jsonOrThrow({ contextId, closeContext: true })));
  }
  await s.until((messages) => messages.filter((m) => m.isFinal).length === 2);
  s.ws.send(JSON.stringify(wire.CloseSocket.jsonOrThrow({ closeSocket: true })));
  assert.equal(await s.closed, 1000);
  for (const contextId of ['one', 'two']) {
    const mine = s.messages.filter((m) => m.contextId === contextId);
    assert.equal(parse(wire.FinalOutputMulti, mine.at(-1)).isFinal, true);
    const audio = mine.slice(0, -1).map((m) => parse(wire.AudioOutputMulti, m));
    assert.equal(audio.length, 1);
    assert.equal(audio[0].alignment.chars.join(''), `Context ${contextId} speaks.`);
    assert.ok(Buffer.from(audio[0].audio, 'base64').length > 8000 / 2);  // mu-law: a byte a sample
  }
});

test('tokens.singleUse.create mints a token that opens stream-input once, without the key', async () => {
  const { token } = await client(keyed, KEY).tokens.singleUse.create('tts_websocket');
  assert.ok(token.startsWith('vxt_'));
  const query = `output_format=pcm_16000&single_use_token=${encodeURIComponent(token)}`;
  const s = socket(keyed, 'stream-input', query);  // no xi-api-key anywhere: the page's case
  await s.opened;
  s.ws.send(JSON.stringify(wire.InitializeConnection.jsonOrThrow({ text: ' ' })));
  s.ws.send(JSON.stringify(wire.SendText.jsonOrThrow({ text: 'Spoken with a token. ', flush: true })));
  s.ws.send(JSON.stringify(wire.CloseConnection.jsonOrThrow({ text: '' })));
  assert.equal(await s.closed, 1000);
  assert.equal(parse(wire.FinalOutput, s.messages.at(-1)).isFinal, true);
  const again = socket(keyed, 'stream-input', query);
  await assert.rejects(again.opened, /401/);
});

test('pronunciation dictionaries: createFromFile, get, list, rules, download, and locators on convert', async () => {
  const el = client(open);
  const pls = `<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
  <lexeme><grapheme>WWW</grapheme><alias>World Wide Web</alias></lexeme>
</lexicon>`;
  const created = await el.pronunciationDictionaries.createFromFile({
    name: 'web', file: new Blob([pls], { type: 'application/pls+xml' }), description: 'sdk',
  });
  assert.match(created.id, /^pd_/);
  assert.equal(created.versionRulesNum, 1);

  const got = await el.pronunciationDictionaries.get(created.id);
  assert.equal(got.latestVersionId, created.versionId);
  assert.deepEqual(got.rules.map((r) => [r.type, r.stringToReplace, r.alias]),
                   [['alias', 'WWW', 'World Wide Web']]);
  const listed = await el.pronunciationDictionaries.list({ pageSize: 10 });
  assert.ok(listed.pronunciationDictionaries.some((d) => d.id === created.id));
  assert.equal(listed.hasMore, false);

  const pcm = async (text, locators) => collect(await el.textToSpeech.convert(VOICE, {
    text, outputFormat: 'pcm_16000', pronunciationDictionaryLocators: locators,
  }));
  const locator = [{ pronunciationDictionaryId: created.id, versionId: created.versionId }];
  assert.deepEqual(await pcm('Visit WWW today.', locator), await pcm('Visit World Wide Web today.'));

  const added = await el.pronunciationDictionaries.rules.add(created.id, {
    rules: [{ type: 'phoneme', stringToReplace: 'tomato', phoneme: 'təˈmɑːtoʊ', alphabet: 'ipa' }],
  });
  assert.notEqual(added.versionId, created.versionId);
  assert.equal(added.versionRulesNum, 2);
  const removed = await el.pronunciationDictionaries.rules.remove(created.id, { ruleStrings: ['WWW'] });
  assert.equal(removed.versionRulesNum, 1);
  // The first version is still what its locator pins.
  assert.deepEqual(await pcm('Visit WWW today.', locator), await pcm('Visit World Wide Web today.'));

  const downloaded = await collect(await el.pronunciationDictionaries.download(created.id, added.versionId));
  assert.match(downloaded.toString('utf8'), /<grapheme>tomato<\/grapheme>/);
  const archived = await el.pronunciationDictionaries.update(created.id, { archived: true });
  assert.ok(archived.archivedTimeUnix > 0);

  await assert.rejects(el.pronunciationDictionaries.get('pd_00000000000000000000'),
                       (error) => error instanceof ElevenLabsError && error.statusCode === 404);
});
