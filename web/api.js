// The voxserve HTTP API as the page uses it: same-origin requests with the API key (when the
// user gave one) and server errors turned into sentences a person can act on.

let apiKey = '';

export function setApiKey(key) { apiKey = key.trim(); }
export function hasApiKey() { return apiKey !== ''; }

export function apiFetch(path, options = {}) {
  const headers = new Headers(options.headers || {});
  if (apiKey) headers.set('Authorization', `Bearer ${apiKey}`);
  return fetch(path, { ...options, headers });
}

// A failed response as {status, code, message, retryAfter}. The body is voxserve's (OpenAI's)
// error shape {"error": {"message", "type", "param", "code"}}; anything else is reported as is.
export async function describeError(response) {
  let code = '';
  let detail = '';
  try {
    const body = await response.json();
    code = body?.error?.code || '';
    detail = body?.error?.message || '';
  } catch {
    detail = response.statusText;
  }
  const retryAfter = Number(response.headers.get('Retry-After')) || 0;
  let message;
  if (response.status === 401) {
    message = hasApiKey() ? `The server refused this API key: ${detail}` : 'This server needs an API key.';
  } else if (response.status === 403) {
    message = `This API key may not do that: ${detail}`;
  } else if (response.status === 429) {
    message = `The server is busy (${detail || 'too many requests'}).` +
              (retryAfter ? ` Retry after ${retryAfter} s.` : ' Try again shortly.');
  } else if (code === 'voice_not_found') {
    message = `Unknown voice: ${detail}`;
  } else if (response.status === 503) {
    message = `The server is not ready: ${detail}`;
  } else {
    message = `Error ${response.status}${code ? ` (${code})` : ''}: ${detail}`;
  }
  return { status: response.status, code, message, retryAfter };
}

export class ApiError extends Error {
  constructor(info) { super(info.message); this.info = info; }
}

export async function getJson(path) {
  const response = await apiFetch(path);
  if (!response.ok) throw new ApiError(await describeError(response));
  return response.json();
}
