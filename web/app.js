// The playground page: voice and model pickers, Speak/Stop/Download, the figures of each run and
// a live view of /health. State the browser test reads is on window.voxPlayground (see `probe`).
import { ApiError, apiFetch, describeError, getJson, hasApiKey, setApiKey } from './api.js';
import { PcmPlayer } from './pcm-player.js';
import { wavBlob } from './wav.js';

const $ = (id) => document.getElementById(id);
const HEALTH_POLL_MS = 3000;  // live enough for a person watching, negligible load on the server

// What a test (or a curious developer in the console) can read. `run` is the current or last run:
// times are performance.now() milliseconds.
const probe = {
  ready: false,            // voices and models loaded
  voices: 0,
  state: 'idle',           // idle | requesting | playing | done | stopped | error
  error: null,             // {status, code, message, retryAfter} of the last failure
  run: null,
  health: null,            // the last /health body
  cloning: false,          // the voice cloning panel is shown
  download: null,          // the Blob the Download link saves
};
window.voxPlayground = probe;

let voices = [];
let current = null;        // {controller, player, context} of the run in progress
let downloadUrl = null;

function setStatus(text) { $('status').textContent = text; }

function showError(info) {
  probe.error = info;
  const box = $('error');
  box.textContent = info.message;
  box.hidden = false;
  if (info.status === 401) askForKey();
}

function clearError() {
  probe.error = null;
  $('error').hidden = true;
  $('error').textContent = '';
}

function askForKey() {
  $('auth').hidden = false;
  $('api-key').focus();
}

function setState(state) {
  probe.state = state;
  document.body.dataset.state = state;
  $('speak').disabled = state === 'requesting' || state === 'playing';
  $('stop').disabled = !(state === 'requesting' || state === 'playing');
}

// ---- voices and models ----

function voiceGroup(voice) {
  return voice.alias_of ? 'Aliases' : `${voice.engine} · ${voice.language}`;
}

function voiceLabel(voice) {
  if (voice.alias_of) return `${voice.id} → ${voice.alias_of}`;
  return voice.description && voice.description !== voice.id ? `${voice.id} — ${voice.description}` : voice.id;
}

function renderVoices() {
  const select = $('voice');
  const previous = select.value;
  const filter = $('voice-filter').value.trim().toLowerCase();
  const model = selectedModel();
  const groups = new Map();
  for (const voice of voices) {
    if (model && voice.model && voice.model !== model && !voice.alias_of) continue;
    const haystack = `${voice.id} ${voice.language} ${voice.engine} ${voice.description || ''}`.toLowerCase();
    if (filter && !haystack.includes(filter)) continue;
    const group = voiceGroup(voice);
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(voice);
  }
  select.replaceChildren();
  for (const [name, members] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const optgroup = document.createElement('optgroup');
    optgroup.label = name;
    for (const voice of members) optgroup.append(new Option(voiceLabel(voice), voice.id));
    select.append(optgroup);
  }
  const ids = [...select.options].map((o) => o.value);
  select.value = ids.includes(previous) ? previous : (ids.includes('en-us') ? 'en-us' : ids[0] || '');
  probe.voices = select.options.length;
}

// The real model a selection names (OpenAI aliases resolve to the default model).
let modelAliases = new Map();
function selectedModel() {
  const id = $('model').value;
  return modelAliases.get(id) || id;
}

async function loadCatalog() {
  try {
    const [voiceList, modelList] = await Promise.all([getJson('/v1/voices'), getJson('/v1/models')]);
    voices = voiceList.data;
    const select = $('model');
    select.replaceChildren();
    modelAliases = new Map();
    for (const model of modelList.data) {
      if (model.alias_of) {
        modelAliases.set(model.id, model.alias_of);
        select.append(new Option(`${model.id} (OpenAI name for ${model.alias_of})`, model.id));
      } else {
        select.append(new Option(`${model.id} (${model.engine}, ${model.state})`, model.id));
      }
    }
    renderVoices();
    probe.ready = true;
    clearError();
    $('auth').hidden = true;
    setStatus(`${voices.length} voices ready.`);
    detectCloning(modelList.data);
  } catch (error) {
    setStatus('Could not load the voices.');
    showError(error instanceof ApiError ? error.info : { status: 0, message: `Network error: ${error.message}` });
  }
}

// Voice cloning needs a model that can clone (CosyVoice). Such a model says so in /v1/models
// (`"capabilities": ["voice_cloning"]`); only then is the panel shown and the voice API called,
// so other servers see no probing 404s. Voices are registered for the first such model.
async function detectCloning(models) {
  const cloner = models.find((m) => (m.capabilities || []).includes('voice_cloning'));
  if (!cloner) return;
  try {
    const body = await getJson('/v1/audio/voices');
    const { setUpCloning } = await import('./clone.js');
    setUpCloning(body.data || [], { model: cloner.id, onUse: useClonedVoice, onError: showError });
    $('clone').hidden = false;
    probe.cloning = true;
  } catch (error) {
    if (error instanceof ApiError) showError(error.info);
  }
}

function useClonedVoice(id) {
  if (![...$('voice').options].some((o) => o.value === id)) $('voice').append(new Option(`${id} (cloned)`, id));
  $('voice').value = id;
}

// ---- a run ----

function formatSeconds(seconds) { return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`; }

function showFigures(run) {
  const ms = (v) => (v === null ? '–' : `${Math.round(v)} ms`);
  $('fig-first-audio').textContent = ms(run.firstAudioAt === null ? null : run.firstAudioAt - run.startedAt);
  $('fig-total').textContent = ms(run.responseCompleteAt === null ? null : run.responseCompleteAt - run.startedAt);
  $('fig-audio').textContent = run.audioSeconds ? formatSeconds(run.audioSeconds) : '–';
  $('fig-rtf').textContent = run.rtf === null ? '–' : run.rtf.toFixed(3);
}

function setDownload(blob, name) {
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  probe.download = blob;
  const link = $('download');
  if (!blob) {
    downloadUrl = null;
    link.removeAttribute('href');
    link.setAttribute('aria-disabled', 'true');
    link.tabIndex = -1;
    return;
  }
  downloadUrl = URL.createObjectURL(blob);
  link.href = downloadUrl;
  link.download = name;
  link.setAttribute('aria-disabled', 'false');
  link.tabIndex = 0;
}

async function speak() {
  stop('replaced');
  clearError();
  setDownload(null);
  const format = $('format').value;
  const body = {
    model: $('model').value,
    voice: $('voice').value,
    input: $('text').value,
    speed: Number($('speed').value),
    response_format: format,
  };
  // PCM plays as it streams; other formats are decoded whole, so they come whole (exact sizes).
  if (format === 'pcm') body.stream_format = 'audio'; else body.stream = false;
  // Created on the click (a user gesture), so browsers let it play.
  const context = new AudioContext();
  const controller = new AbortController();
  const run = {
    format, startedAt: performance.now(), firstAudioAt: null, responseCompleteAt: null,
    endedAt: null, bytes: 0, chunks: 0, scheduledBuffers: 0, audioSeconds: 0, rtf: null,
    contextState: context.state, playedSecondsAtResponseComplete: null, sampleRate: null,
  };
  probe.run = run;
  current = { controller, context, player: null };
  setState('requesting');
  setStatus('Synthesizing…');
  showFigures(run);
  try {
    const response = await apiFetch('/v1/audio/speech', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) throw new ApiError(await describeError(response));
    // The server says its rate; PCM is 24 kHz unless it says otherwise.
    const sampleRate = Number(response.headers.get('X-Sample-Rate')) || 24000;
    run.sampleRate = sampleRate;
    const player = new PcmPlayer(context, sampleRate);
    current.player = player;
    const pcm = [];
    if (format === 'pcm') {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          responseComplete(run, player);  // the last byte is here: the moment the test compares
          break;
        }
        pcm.push(value);
        run.bytes += value.length;
        run.chunks++;
        player.push(value);
        if (run.firstAudioAt === null && player.scheduled > 0) firstAudio(run, context);
        run.scheduledBuffers = player.scheduled;
      }
    } else {
      const file = await response.blob();
      responseComplete(run, player);
      run.bytes = file.size;
      player.schedule(await context.decodeAudioData(await file.arrayBuffer()));
      firstAudio(run, context);
      run.scheduledBuffers = player.scheduled;
      pcm.push(file);
    }
    run.audioSeconds = format === 'pcm' ? player.samples / sampleRate : player.nextStart - player.firstStart;
    run.rtf = run.audioSeconds > 0 ? (run.responseCompleteAt - run.startedAt) / 1000 / run.audioSeconds : null;
    showFigures(run);
    const name = `voxserve-${body.voice}.${format === 'pcm' ? 'wav' : format}`;
    setDownload(format === 'pcm' ? wavBlob(pcm, sampleRate) : pcm[0], name);
    if (player.sources.size === 0) return finished(run);
    player.onIdle = () => finished(run);
    setStatus(`Received all audio (${formatSeconds(run.audioSeconds)}); playing…`);
  } catch (error) {
    if (error.name === 'AbortError') return;  // Stop (or a new Speak) ended this run
    stop('error');
    setState('error');
    setStatus('The request failed.');
    // fetch and the stream fail with TypeError; decodeAudioData with EncodingError.
    const what = error.name === 'TypeError' ? 'Network error' : 'Could not play the audio';
    showError(error instanceof ApiError ? error.info : { status: 0, message: `${what}: ${error.message}` });
  }
}

function responseComplete(run, player) {
  run.responseCompleteAt = performance.now();
  run.playedSecondsAtResponseComplete = player.playedSeconds();
}

function firstAudio(run, context) {
  run.firstAudioAt = performance.now();
  run.contextState = context.state;
  setState('playing');
  setStatus('Playing while the rest is synthesized…');
  showFigures(run);
}

function finished(run) {
  run.endedAt = performance.now();
  current?.context.close();
  current = null;
  setState('done');
  setStatus(`Done: ${formatSeconds(run.audioSeconds)} of audio.`);
}

// Aborting the fetch closes the connection, so the server cancels the rest of the synthesis.
function stop(reason = 'stopped') {
  if (!current) return;
  const { controller, player, context } = current;
  current = null;
  controller.abort();
  player?.stop();
  context.close();
  if (probe.run) {
    probe.run.stoppedAt = performance.now();
    probe.run.sourcesAfterStop = player ? player.sources.size : 0;
  }
  if (reason === 'stopped') {
    setState('stopped');
    setStatus('Stopped.');
  }
}

// ---- health ----

async function pollHealth() {
  try {
    const response = await apiFetch('/health');
    const pill = $('health-status');
    if (response.status === 401 || response.status === 403) {
      pill.textContent = 'health needs a key';
      pill.className = 'pill';
    } else {
      const health = await response.json();
      probe.health = health;
      pill.textContent = health.status;
      pill.className = `pill ${health.status}`;
      $('health-in-flight').textContent = health.in_flight;
      $('health-queue').textContent = (health.models || []).reduce((n, m) => n + (m.queue_depth || 0), 0);
      $('health-queue').title = (health.models || []).map((m) => `${m.id}: ${m.queue_depth}`).join(', ');
    }
  } catch {
    $('health-status').textContent = 'unreachable';
    $('health-status').className = 'pill down';
  }
  setTimeout(pollHealth, HEALTH_POLL_MS);
}

// ---- wiring ----

$('speak').addEventListener('click', speak);
$('stop').addEventListener('click', () => stop());
$('text').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) speak();  // Ctrl+Enter speaks
});
// A link dressed as a button answers Space as a button does.
$('download').addEventListener('keydown', (event) => {
  if (event.key === ' ') {
    event.preventDefault();
    event.currentTarget.click();
  }
});
$('voice-filter').addEventListener('input', renderVoices);
$('model').addEventListener('change', renderVoices);
$('speed').addEventListener('input', () => { $('speed-value').textContent = `${Number($('speed').value).toFixed(2)}×`; });
$('auth-form').addEventListener('submit', (event) => {
  event.preventDefault();
  setApiKey($('api-key').value);
  if (hasApiKey()) loadCatalog();
});

setState('idle');
loadCatalog();
pollHealth();
