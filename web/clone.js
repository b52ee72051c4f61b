// Voice cloning panel, loaded only when /v1/models lists a model with the "voice_cloning"
// capability (docs/voice-cloning.md): POST /v1/audio/voices multipart {audio_sample, name,
// transcript, model} → {id, name, ...}; DELETE /v1/audio/voices/{id}; GET lists {data: [...]}.
import { ApiError, apiFetch, describeError } from './api.js';

const $ = (id) => document.getElementById(id);

// Browsers record WebM/Opus, which the server's decoder (WAV, FLAC, Ogg, MP3) does not read: the
// recording is decoded here and sent as 16-bit mono WAV at its own rate.
async function recordingAsWav(blob) {
  const context = new AudioContext();
  try {
    const decoded = await context.decodeAudioData(await blob.arrayBuffer());
    const samples = decoded.getChannelData(0);
    const view = new DataView(new ArrayBuffer(44 + samples.length * 2));
    const text = (offset, s) => [...s].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
    text(0, 'RIFF'); view.setUint32(4, 36 + samples.length * 2, true); text(8, 'WAVE');
    text(12, 'fmt '); view.setUint32(16, 16, true); view.setUint16(20, 1, true);
    view.setUint16(22, 1, true); view.setUint32(24, decoded.sampleRate, true);
    view.setUint32(28, decoded.sampleRate * 2, true); view.setUint16(32, 2, true);
    view.setUint16(34, 16, true); text(36, 'data'); view.setUint32(40, samples.length * 2, true);
    samples.forEach((x, i) => view.setInt16(44 + i * 2, Math.max(-1, Math.min(1, x)) * 32767, true));
    return new Blob([view], { type: 'audio/wav' });
  } finally {
    context.close();
  }
}

export function setUpCloning(initial, { model, onUse, onError }) {
  let recorded = null;  // a Blob from the microphone, used when no file is chosen
  let recorder = null;

  function render(list) {
    const ul = $('clone-voices');
    ul.replaceChildren();
    for (const voice of list) {
      const li = document.createElement('li');
      li.append(`${voice.name || voice.id} `);
      const use = document.createElement('button');
      use.type = 'button';
      use.textContent = 'Use';
      use.setAttribute('aria-label', `Use voice ${voice.name || voice.id}`);
      use.addEventListener('click', () => onUse(voice.id));
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = 'Delete';
      remove.setAttribute('aria-label', `Delete voice ${voice.name || voice.id}`);
      remove.addEventListener('click', () => call(`/v1/audio/voices/${encodeURIComponent(voice.id)}`, { method: 'DELETE' }));
      li.append(use, ' ', remove);
      ul.append(li);
    }
  }

  async function refresh() {
    const response = await apiFetch('/v1/audio/voices');
    if (!response.ok) throw new ApiError(await describeError(response));
    render((await response.json()).data || []);
  }

  async function call(path, options) {
    try {
      const response = await apiFetch(path, options);
      if (!response.ok) throw new ApiError(await describeError(response));
      await refresh();
    } catch (error) {
      onError(error instanceof ApiError ? error.info : { status: 0, message: error.message });
    }
  }

  $('clone-record').addEventListener('click', async (event) => {
    const button = event.currentTarget;
    if (recorder) {
      recorder.stop();
      return;
    }
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      const parts = [];
      recorder = new MediaRecorder(stream);
      recorder.ondataavailable = (e) => parts.push(e.data);
      recorder.onstop = () => {
        recorded = new Blob(parts, { type: recorder.mimeType });
        stream.getTracks().forEach((t) => t.stop());
        recorder = null;
        button.textContent = 'Record again';
        button.setAttribute('aria-pressed', 'false');
      };
      recorder.start();
      button.textContent = 'Stop recording';
      button.setAttribute('aria-pressed', 'true');
    } catch (error) {
      onError({ status: 0, message: `Cannot record: ${error.message}` });
    }
  });

  $('clone-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const file = $('clone-audio').files[0];
    if (!file && !recorded) return onError({ status: 0, message: 'Choose or record a prompt first.' });
    let audio = file;
    if (!audio) {
      try {
        audio = await recordingAsWav(recorded);
      } catch (error) {
        return onError({ status: 0, message: `Cannot read the recording: ${error.message}` });
      }
    }
    const form = new FormData();
    form.append('name', $('clone-name').value);
    form.append('transcript', $('clone-transcript').value);
    form.append('model', model);
    form.append('audio_sample', audio, audio.name || 'prompt.wav');
    call('/v1/audio/voices', { method: 'POST', body: form });
  });

  render(initial);
}
