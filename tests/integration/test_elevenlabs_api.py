"""The ElevenLabs-compatible REST API (/elevenlabs/v1/...) against the real binary: output
formats and their durations (mu-law decoded with Python's audioop, the peer G.711 decoder),
with-timestamps alignment, streaming, voices, models and ElevenLabs' error shapes; plus the
telephony formats voxserve's own API gained (response_format "ulaw", sample_rate)."""
import audioop
import base64
import json

import numpy as np
import pytest
import requests

from audio_check import decode

BASE = "/elevenlabs/v1"
VOICE = "en-us"
TEXT = "Hello from the telephone line."
TWO_SENTENCES = "The first sentence is here. And this is the second one."


def tts(server, text=TEXT, voice=VOICE, route="", output_format=None, **body):
    params = {"output_format": output_format} if output_format else {}
    return requests.post(f"{server.url}{BASE}/text-to-speech/{voice}{route}", params=params,
                         json={"text": text, "model_id": "eleven_multilingual_v2", **body},
                         timeout=60)


def pcm_seconds(data, rate):
    assert len(data) % 2 == 0
    return len(data) / 2 / rate


@pytest.fixture(scope="module")
def reference_seconds(server):
    """The sentence's length as voxserve's own API gives it (24 kHz pcm)."""
    response = requests.post(server.url + "/v1/audio/speech",
                             json={"model": "tts-1", "input": TEXT, "voice": VOICE,
                                   "response_format": "pcm"}, timeout=60)
    assert response.status_code == 200, response.text
    return pcm_seconds(response.content, 24000)


@pytest.mark.parametrize("rate", [8000, 16000, 22050, 24000, 44100, 48000])
def test_pcm_rates_have_the_sentence_duration(server, reference_seconds, rate):
    response = tts(server, output_format=f"pcm_{rate}")
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "audio/pcm"
    assert response.headers["X-Sample-Rate"] == str(rate)
    # Resampling keeps the length to within a few milliseconds.
    assert pcm_seconds(response.content, rate) == pytest.approx(reference_seconds, abs=0.02)


def test_ulaw_8000_decodes_with_audioop_to_the_pcm_8000_audio(server, reference_seconds):
    ulaw = tts(server, output_format="ulaw_8000")
    pcm = tts(server, output_format="pcm_8000")
    assert ulaw.status_code == 200 and pcm.status_code == 200
    assert ulaw.headers["Content-Type"] == "audio/basic"
    assert len(ulaw.content) / 8000 == pytest.approx(reference_seconds, abs=0.02)
    decoded = np.frombuffer(audioop.ulaw2lin(ulaw.content, 2), dtype="<i2").astype(np.int64)
    linear = np.frombuffer(pcm.content, dtype="<i2").astype(np.int64)
    # espeak-ng's output varies by a few samples from one request to the next, so the two are
    # compared by their loudness envelope (20 ms frames), not sample by sample; the unit test
    # checks the encoder exactly.
    assert abs(len(decoded) - len(linear)) <= 40
    assert np.abs(linear).max() > 1000  # speech, not silence

    def envelope(samples):
        frames = len(samples) // 160
        return np.sqrt(np.mean(samples[:frames * 160].reshape(frames, 160) ** 2, axis=1))

    a, b = envelope(decoded), envelope(linear)
    n = min(len(a), len(b))
    assert np.corrcoef(a[:n], b[:n])[0, 1] > 0.95
    assert np.sqrt(np.mean(decoded ** 2)) == pytest.approx(np.sqrt(np.mean(linear ** 2)), rel=0.1)


def test_default_format_is_mp3_at_44100(server, reference_seconds):
    response = tts(server)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "audio/mpeg"
    audio = decode(response.content, "mp3")
    assert audio.sample_rate == 44100
    assert audio.duration == pytest.approx(reference_seconds, abs=0.15)  # encoder padding


def test_opus_format_is_ogg_opus(server):
    response = tts(server, output_format="opus_48000_64")
    assert response.status_code == 200, response.text
    assert response.content[:4] == b"OggS"
    assert decode(response.content, "opus").sample_rate == 48000


def test_stream_delivers_the_same_audio_in_chunks(server):
    whole = tts(server, text=TWO_SENTENCES, output_format="pcm_16000")
    with requests.post(f"{server.url}{BASE}/text-to-speech/{VOICE}/stream",
                       params={"output_format": "pcm_16000"}, json={"text": TWO_SENTENCES},
                       stream=True, timeout=60) as streamed:
        assert streamed.status_code == 200
        assert streamed.headers.get("Transfer-Encoding") == "chunked"
        data = b"".join(streamed.iter_content(None))
    # The same sentences; espeak-ng's output varies by a few samples (see the ulaw test).
    assert abs(len(data) - len(whole.content)) <= 100 and len(data) > 16000


def check_alignment(alignment, text, start, seconds):
    chars = alignment["characters"]
    starts = alignment["character_start_times_seconds"]
    ends = alignment["character_end_times_seconds"]
    assert "".join(chars) == text
    assert len(starts) == len(ends) == len(chars)
    # Timings are the engine's audio seconds; the resampled bytes differ by a sample or so.
    assert starts[0] == pytest.approx(start, abs=1e-3)
    assert ends[-1] == pytest.approx(start + seconds, abs=1e-3)
    assert all(a <= b for a, b in zip(starts, ends))
    assert all(b == pytest.approx(a) for a, b in zip(ends, starts[1:]))


def test_with_timestamps_alignment_spans_the_audio(server):
    response = tts(server, text=TWO_SENTENCES, route="/with-timestamps",
                   output_format="pcm_22050")
    assert response.status_code == 200, response.text
    body = response.json()
    seconds = pcm_seconds(base64.b64decode(body["audio_base64"]), 22050)
    alignment = body["alignment"]
    assert "".join(alignment["characters"]).replace(" ", "") == TWO_SENTENCES.replace(" ", "")
    assert alignment["character_start_times_seconds"][0] == 0
    assert alignment["character_end_times_seconds"][-1] == pytest.approx(seconds, abs=1e-3)
    assert body["normalized_alignment"] == alignment


def test_stream_with_timestamps_sends_one_json_line_per_sentence(server):
    with requests.post(f"{server.url}{BASE}/text-to-speech/{VOICE}/stream/with-timestamps",
                       params={"output_format": "pcm_24000"}, json={"text": TWO_SENTENCES},
                       stream=True, timeout=60) as response:
        assert response.status_code == 200
        lines = [line for line in response.iter_lines() if line]
    chunks = [json.loads(line) for line in lines]
    assert len(chunks) == 2
    start = 0.0
    for chunk, sentence in zip(chunks, ["The first sentence is here.", "And this is the second one."]):
        seconds = pcm_seconds(base64.b64decode(chunk["audio_base64"]), 24000)
        # Offsets are in the request's audio time: the second sentence starts after the first.
        check_alignment(chunk["alignment"], sentence, start, seconds)
        start += seconds


def test_voice_settings_speed_is_honoured(server):
    normal = tts(server, output_format="pcm_16000")
    fast = tts(server, output_format="pcm_16000", voice_settings={"speed": 2.0, "stability": 0.5,
                                                                   "similarity_boost": 0.7})
    assert fast.status_code == 200, fast.text
    assert len(fast.content) < 0.8 * len(normal.content)


def test_voices_and_models_list(server):
    voices = requests.get(f"{server.url}{BASE}/voices", timeout=10).json()["voices"]
    ids = {voice["voice_id"] for voice in voices}
    assert VOICE in ids and "narrator" in ids
    models = requests.get(f"{server.url}{BASE}/models", timeout=10).json()
    assert any(model["model_id"] == "espeak" and model["can_do_text_to_speech"] for model in models)


def test_alias_voice_ids_work(server):
    assert tts(server, voice="narrator", output_format="pcm_16000").status_code == 200


def test_unknown_voice_is_voice_not_found(server):
    response = tts(server, voice="no-such-voice")
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert detail["status"] == "voice_not_found" and detail["code"] == "voice_not_found"
    assert "no-such-voice" in detail["message"]


def test_missing_text_is_a_422_validation_error(server):
    response = requests.post(f"{server.url}{BASE}/text-to-speech/{VOICE}", json={}, timeout=10)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "text"]


def test_unknown_output_format_is_a_422_naming_the_query(server):
    response = tts(server, output_format="mp3_1_2")
    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["query", "output_format"] and "ulaw_8000" in detail["msg"]


def test_unknown_route_and_method_get_elevenlabs_errors(server):
    response = requests.get(f"{server.url}{BASE}/history", timeout=10)
    assert response.status_code == 404 and "detail" in response.json()
    response = requests.get(f"{server.url}{BASE}/text-to-speech/{VOICE}", timeout=10)
    assert response.status_code == 405 and "detail" in response.json()
    assert response.headers["Allow"] == "POST"
    response = requests.post(f"{server.url}{BASE}/voices", timeout=10)
    assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("text", ["...", "", "   "])
@pytest.mark.parametrize("route", ["", "/stream", "/with-timestamps", "/stream/with-timestamps"])
def test_nothing_speakable_is_a_400_empty_input_on_every_route(server, text, route):
    response = tts(server, text=text, route=route)
    assert response.status_code == 400, response.text
    assert response.json()["detail"]["code"] == "empty_input"
    assert response.json()["detail"]["param"] == "text"


@pytest.mark.parametrize("seed,status,code", [
    (-1, 400, "invalid_seed"),
    (2 ** 64, 400, "invalid_seed"),  # a whole number out of range, not "not an integer"
    (1.5, 422, "invalid_type"),
])
def test_seeds_out_of_range_are_refused_as_on_v1(server, seed, status, code):
    response = tts(server, seed=seed)
    assert response.status_code == status, response.text
    body = response.json()["detail"]
    found = body["code"] if status == 400 else body[0]["type"]
    assert found == code
    v1 = requests.post(server.url + "/v1/audio/speech", json={"model": "tts-1", "input": TEXT,
                                                              "voice": VOICE, "seed": seed},
                       timeout=60)
    assert v1.status_code == 400 and v1.json()["error"]["code"] == code


def test_a_seed_in_range_is_accepted(server):
    assert tts(server, seed=2 ** 64 - 1, output_format="pcm_16000").status_code == 200


def test_voxserve_api_offers_ulaw_and_pcm_rates(server, reference_seconds):
    ulaw = requests.post(server.url + "/v1/audio/speech",
                         json={"model": "tts-1", "input": TEXT, "voice": VOICE,
                               "response_format": "ulaw"}, timeout=60)
    assert ulaw.status_code == 200, ulaw.text
    assert ulaw.headers["X-Sample-Rate"] == "8000"
    assert len(ulaw.content) / 8000 == pytest.approx(reference_seconds, abs=0.02)
    pcm = requests.post(server.url + "/v1/synthesize",
                        json={"text": TEXT, "voice": VOICE, "response_format": "pcm",
                              "sample_rate": 16000}, timeout=60)
    assert pcm.status_code == 200, pcm.text
    assert pcm_seconds(pcm.content, 16000) == pytest.approx(reference_seconds, abs=0.02)
    refused = requests.post(server.url + "/v1/synthesize",
                            json={"text": TEXT, "response_format": "ulaw", "sample_rate": 16000},
                            timeout=60)
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "sample_rate"
