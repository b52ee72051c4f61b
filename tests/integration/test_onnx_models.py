"""Piper and Kokoro models through the real server: discovery (--models), /v1/voices, REST
synthesis whose length follows the test graphs, speakers, batching, broken files.

The graphs are built at test time by tests/onnx_models/make_test_models.py; the expected sample
counts are recomputed here independently of the server, from the espeak-ng command line and the
graphs' rules (see that script's docstring).
"""
import concurrent.futures
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata
import wave

import numpy as np
import pytest
import requests

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "onnx_models"))
import make_test_models as tm  # noqa: E402

SILENCE = tm.PIPER_RATE // 5  # Piper's 0.2 s after each sentence


@pytest.fixture(scope="session")
def models_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("onnx_models")
    subprocess.run([sys.executable, tm.__file__, "--out", str(root)], check=True,
                   stdout=subprocess.DEVNULL)
    return root


@pytest.fixture(scope="session")
def onnx_server(voxserve_bin, models_root):
    from conftest import VoxServer
    instance = VoxServer(voxserve_bin, ["--models", str(models_root / "models")]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def espeak_ipa(text, voice="en-us"):
    """One clause's IPA as the espeak-ng command line prints it."""
    out = subprocess.run(["espeak-ng", "-q", "--ipa", "-v", voice, text], check=True,
                         capture_output=True, text=True).stdout
    return " ".join(line.strip() for line in out.splitlines() if line.strip())


def piper_samples(text, length_scale=1.0, sid=0):
    """Expected samples of the tiny Piper graph for a one-clause sentence ending in '.'."""
    phonemes = unicodedata.normalize("NFD", espeak_ipa(text)) + "."
    ids = [1, 0]  # BOS, PAD
    for p in phonemes:
        if p in tm.PIPER_ID_MAP:
            ids += tm.PIPER_ID_MAP[p] + [0]
    ids.append(2)  # EOS
    frames = sum(math.ceil(length_scale * (1 + i % 3)) for i in ids) + sid
    return frames * tm.HOP + SILENCE


def kokoro_tokens(text):
    phonemes = espeak_ipa(text) + "."
    return [tm.KOKORO_VOCAB[p] for p in phonemes if p in tm.KOKORO_VOCAB]


def speak(server, voice, text="Hello world.", model="tts-1", **fields):
    body = {"model": model, "input": text, "voice": voice, "response_format": "wav"}
    body.update(fields)
    return requests.post(server.url + "/v1/audio/speech", json=body, timeout=30)


def wav(response):
    assert response.status_code == 200, response.text
    with wave.open(io.BytesIO(response.content)) as w:
        frames = w.readframes(w.getnframes())
        return w.getframerate(), np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768


def test_every_discovered_voice_is_listed_with_engine_language_and_rate(onnx_server):
    voices = {v["id"]: v for v in requests.get(onnx_server.url + "/v1/voices").json()["data"]}
    expected = {
        "en_US-test-medium": ("en_US-test-medium", "piper", "en-us", 16000),
        "de_DE-test-medium": ("de_DE-test-medium", "piper", "de-de", 16000),
        "en_US-multi-medium:alice": ("en_US-multi-medium", "piper", "en-us", 16000),
        "en_US-multi-medium:bob": ("en_US-multi-medium", "piper", "en-us", 16000),
        "en_US-multi-medium:carol": ("en_US-multi-medium", "piper", "en-us", 16000),
        "af_test": ("kokoro-v1.0", "kokoro", "en-us", 24000),
        "bm_test": ("kokoro-v1.0", "kokoro", "en-gb", 24000),
        "ff_test": ("kokoro-v1.0", "kokoro", "fr-fr", 24000),
    }
    for voice_id, (model, engine, language, rate) in expected.items():
        assert voice_id in voices, sorted(voices)
        v = voices[voice_id]
        assert (v["model"], v["engine"], v["language"], v["sample_rate"]) == \
            (model, engine, language, rate), v
    models = {m["id"]: m for m in requests.get(onnx_server.url + "/v1/models").json()["data"]}
    assert models["kokoro-v1.0"]["state"] == "ready"


def test_piper_length_follows_the_graph(onnx_server):
    rate, samples = wav(speak(onnx_server, "en_US-test-medium"))
    assert rate == tm.PIPER_RATE
    assert len(samples) == piper_samples("Hello world.")
    assert np.max(np.abs(samples)) > 0.99  # Piper's peak normalization


def test_piper_speed_maps_to_length_scale(onnx_server):
    _, slow = wav(speak(onnx_server, "en_US-test-medium", speed=0.5))
    _, fast = wav(speak(onnx_server, "en_US-test-medium", speed=2.0))
    assert len(slow) == piper_samples("Hello world.", length_scale=2.0)
    assert len(fast) == piper_samples("Hello world.", length_scale=0.5)


def test_speaker_selection_changes_the_sid_fed(onnx_server):
    lengths = {}
    for sid, speaker in enumerate(["alice", "bob", "carol"]):
        voice = "en_US-multi-medium:" + speaker
        _, samples = wav(speak(onnx_server, voice, model="en_US-multi-medium"))
        assert len(samples) == piper_samples("Hello world.", sid=sid), speaker
        lengths[speaker] = len(samples)
    assert lengths["carol"] - lengths["alice"] == 2 * tm.HOP


def test_openai_voice_names_speak_voices_of_a_piper_or_kokoro_default_model(make_server,
                                                                           models_root):
    """With Piper or Kokoro as the default model, OpenAI's names stand for voices of it (not
    espeak-ng's, which it lacks): "alloy" its default voice, the others spread over its voices
    (service/openai_voices.h). Before issue 41 they answered 404 voice_not_found."""
    piper = make_server("--models", str(models_root / "models"),
                        "--default-model", "en_US-multi-medium")
    for name, speaker in (("alloy", "alice"), ("ash", "bob"), ("ballad", "carol")):
        spoken = speak(piper, name)
        assert spoken.status_code == 200, spoken.text
        direct = speak(piper, "en_US-multi-medium:" + speaker, model="en_US-multi-medium")
        assert spoken.content == direct.content, (name, speaker)
    listed = {v["id"]: v for v in requests.get(piper.url + "/v1/voices").json()["data"]
              if v["model"] == "en_US-multi-medium"}
    assert listed["ash"]["alias_of"] == "en_US-multi-medium:bob", listed["ash"]

    kokoro = make_server("--models", str(models_root / "models"), "--default-model", "kokoro-v1.0")
    for name in ("alloy", "nova", "onyx", "verse"):
        spoken = speak(kokoro, name)
        assert spoken.status_code == 200, spoken.text
        assert spoken.headers["X-Sample-Rate"] == str(tm.KOKORO_RATE)
    # Its English voices only: the test model's one American voice serves every name.
    assert speak(kokoro, "shimmer").content == speak(kokoro, "af_test", model="kokoro-v1.0").content


def test_kokoro_rate_length_and_style_row(onnx_server):
    tokens = kokoro_tokens("Hello world")
    rate, samples = wav(speak(onnx_server, "bm_test"))
    assert rate == tm.KOKORO_RATE
    frames = sum(max(1, round((1 + t % 2) / 1.0)) for t in tokens)
    assert len(samples) == frames * 600
    # The graph's amplitude is the style row's first value: voice 1, row = token count.
    assert abs(np.max(np.abs(samples)) - (0.2 + 0.001 * len(tokens))) < 2e-4


def test_same_input_twice_gives_identical_audio(onnx_server):
    for voice in ["en_US-test-medium", "af_test"]:
        first = speak(onnx_server, voice, text="Twice the same, please.")
        second = speak(onnx_server, voice, text="Twice the same, please.")
        assert first.content == second.content, voice


def test_unknown_speaker_is_a_voice_not_found_error(onnx_server):
    response = speak(onnx_server, "en_US-multi-medium:dave", model="en_US-multi-medium")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "voice_not_found"


def batch_sizes(server, model):
    text = requests.get(server.url + "/metrics").text
    total = re.search(r'voxserve_batch_size_sum\{model="%s"\} ([0-9.e+]+)' % re.escape(model), text)
    count = re.search(r'voxserve_batch_size_count\{model="%s"\} ([0-9.e+]+)' % re.escape(model),
                      text)
    return float(total.group(1)), float(count.group(1))


def test_batched_requests_give_the_same_audio_as_single_ones(voxserve_bin, models_root, tmp_path,
                                                            make_server):
    config = tmp_path / "batch.yaml"
    config.write_text(json.dumps({"models": [
        {"id": "espeak", "engine": "espeak"},
        {"id": "batched", "engine": "piper",
         "options": {"model": str(models_root / "batch" / "en_US-batch-medium.onnx"),
                     "max_batch_size": "4"},
         "scheduling": {"instances": 1, "max_batch_size": 4, "max_queue_delay_ms": 200}}]}))
    server = make_server("--config", str(config))
    texts = ["Hi.", "A much longer sentence than the first one.", "Medium length here.", "Ok!"]
    alone = [speak(server, "batched", text, model="batched").content for text in texts]
    with concurrent.futures.ThreadPoolExecutor(len(texts)) as pool:
        together = list(pool.map(lambda t: speak(server, "batched", t, model="batched").content,
                                 texts))
    assert together == alone
    total, count = batch_sizes(server, "batched")
    assert total > count, "no batch of more than one segment was formed"


def wait_for_state(server, model_id, state, timeout=30):
    """The model's /health entry once it reaches `state` (or the last one seen)."""
    deadline = time.monotonic() + timeout
    while True:
        models = {m["id"]: m for m in requests.get(server.url + "/health").json()["models"]}
        if models[model_id]["state"] == state or time.monotonic() > deadline:
            return models[model_id]
        time.sleep(0.05)


def test_broken_model_file_is_a_startup_error_naming_it(models_root, tmp_path, make_server):
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(models_root / "models" / "en_US-test-medium.onnx.json",
                folder / "en_US-broken-medium.onnx.json")
    (folder / "en_US-broken-medium.onnx").write_bytes(b"\x08\x07not a model")
    server = make_server("--models", str(folder), wait_ready=False)
    broken = str(folder / "en_US-broken-medium.onnx")
    model = wait_for_state(server, "en_US-broken-medium", "failed")
    assert model["state"] == "failed"
    assert "cannot load model " + broken in model["error"]
    assert requests.get(server.url + "/health/ready").status_code == 503
    assert any(broken in line for line in server.log_lines)
    assert server.process.poll() is None, "a broken model must not crash the server"


def test_broken_model_is_skipped_with_a_warning_when_configured(models_root, tmp_path, make_server):
    folder = tmp_path / "models"
    shutil.copytree(models_root / "models", folder)
    (folder / "en_US-test-medium.onnx").write_bytes(b"garbage")
    server = make_server("--models", str(folder), "--skip-broken-models", "true")
    broken = str(folder / "en_US-test-medium.onnx")
    assert any("skipped" in line and broken in line for line in server.log_lines), server.log()
    voices = {v["id"] for v in requests.get(server.url + "/v1/voices").json()["data"]}
    assert "en_US-test-medium" not in voices
    assert "de_DE-test-medium" in voices and "af_test" in voices


def test_missing_model_file_is_an_error_naming_it(tmp_path, make_server):
    config = tmp_path / "missing.yaml"
    missing = str(tmp_path / "nowhere" / "en_US-lessac-medium.onnx")
    config.write_text(json.dumps({"models": [
        {"id": "espeak", "engine": "espeak"},
        {"id": "lessac", "engine": "piper", "options": {"model": missing}}]}))
    server = make_server("--config", str(config), wait_ready=False)
    model = wait_for_state(server, "lessac", "failed")
    assert model["state"] == "failed"
    assert "model file " + missing + " does not exist" in model["error"]


def test_missing_models_folder_stops_the_server_at_once(voxserve_bin, tmp_path):
    result = subprocess.run([voxserve_bin, "--models", str(tmp_path / "absent")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert str(tmp_path / "absent") in result.stderr


# --- word timings (docs/timings.md) ---------------------------------------------------------------

@pytest.fixture(scope="module")
def timings_server(models_root, tmp_path_factory, voxserve_bin):
    """Piper and Kokoro graphs with and without duration outputs, side by side."""
    from conftest import VoxServer
    config = tmp_path_factory.mktemp("timings") / "timings.yaml"
    config.write_text(json.dumps({"models": [
        {"id": "espeak", "engine": "espeak"},
        {"id": "piper-plain", "engine": "piper",
         "options": {"model": str(models_root / "models" / "en_US-test-medium.onnx")}},
        {"id": "piper-durations", "engine": "piper",
         "options": {"model": str(models_root / "batch" / "en_US-batch-medium.onnx")}},
        {"id": "kokoro-durations", "engine": "kokoro",
         "options": {"model": str(models_root / "models" / "kokoro-v1.0.onnx"),
                     "voices": str(models_root / "models" / "voices-v1.0.bin")}},
        {"id": "kokoro-plain", "engine": "kokoro",
         "options": {"model": str(models_root / "kokoro_alt" / "model.onnx"),
                     "voices": str(models_root / "kokoro_alt" / "voices")}}]}))
    instance = VoxServer(voxserve_bin, ["--config", str(config)]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


TIMED_TEXT = "Hello brave world. Another sentence here."


@pytest.mark.parametrize("model,voice,kind", [
    ("piper-durations", "piper-durations", "exact"),
    ("piper-plain", "piper-plain", "estimated"),
    ("kokoro-durations", "af_test", "exact"),
    ("kokoro-plain", "af_test", "estimated"),
])
def test_onnx_word_timings_are_exact_with_duration_outputs_and_estimated_without(
        timings_server, model, voice, kind):
    response = speak(timings_server, voice, TIMED_TEXT, model=model, timestamps="word")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["timestamps_kind"] == kind
    words = body["timestamps"]
    assert [w["word"] for w in words] == TIMED_TEXT.replace(".", "").split()
    starts = [w["start_time"] for w in words]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    for word in words:
        assert 0 <= word["start_time"] < word["end_time"] <= body["audio_seconds"] + 0.001, word
    # The second sentence is shifted by the first one's audio.
    first = speak(timings_server, voice, "Hello brave world.", model=model, timestamps="word")
    first_seconds = first.json()["audio_seconds"]
    assert words[3]["start_time"] >= first_seconds - 0.001
