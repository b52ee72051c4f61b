// Voice cloning panel, loaded only when /v1/models lists a model with the "voice_cloning"
// capability. The contract assumed here, until the voice API lands: POST
// multipart {name, transcript, audio} → {id, ...}; DELETE /v1/audio/voices/{id}; GET lists
// {data: [{id, name}]}.
import { ApiError, apiFetch, describeError } from './api.js';

const $ = (id) => document.getElementById(id);

export function setUpCloning(initial, { onUse, onError }) {
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

  $('clone-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const audio = $('clone-audio').files[0] || recorded;
    if (!audio) return onError({ status: 0, message: 'Choose or record a prompt first.' });
    const form = new FormData();
    form.append('name', $('clone-name').value);
    form.append('transcript', $('clone-transcript').value);
    form.append('audio', audio, audio.name || 'prompt.webm');
    call('/v1/audio/voices', { method: 'POST', body: form });
  });

  render(initial);
}
