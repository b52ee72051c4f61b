"""CosyVoice3 served as CosyVoice2 is, through the real binary, on the tiny random-weight
CosyVoice3 bundle (export.py --family cosyvoice3; the CTest fixture cosyvoice3_tiny writes it,
or it is written here): check-model / verify-bundle know the family, a voice registered on it is
spoken through REST (whole and SSE), the streaming option, gRPC, a WebSocket session, the
ElevenLabs API and Wyoming with the audio REST gives, and its profiles are kept apart from
CosyVoice2's (one server runs both). Upstream's own audio for the same tokens is the unit tests'
oracle (cosyvoice3_engine_test.cc); here the APIs must agree with each other, and the audio is
whole speech tokens (960 samples each) at 24 kHz. Also: export.py --model-dir on a fake
Fun-CosyVoice3 directory. Skipped without VOXSERVE_COSYVOICE_REF.
"""
import asyncio
import base64
import json
import os
import subprocess

import pytest
import requests
import websockets

from audio_check import decode
from conftest import VoxServer
from test_onnx_cosyvoice import EXPORT, ROOT, bundle, run, tiny_bundle  # noqa: F401 (bundle)
from test_onnx_cosyvoice_modes import sentences_of, ws_session
from wyoming_support import reference, synthesize
from wyoming_support import run as run_wyoming

SAMPLES_PER_TOKEN = 960
TRANSCRIPT = "This is a short prompt recording."
TEXT = "Hi."  # random weights run the LLM to max_len: a short text keeps requests short


@pytest.fixture(scope="module")
def bundle3(voxserve_bin, tmp_path_factory):
    return tiny_bundle(voxserve_bin, tmp_path_factory, "cosyvoice3-tiny", "--family", "cosyvoice3",
                       "--llm-precisions", "fp32")


def register(server, model, bundle_dir, name):
    prompt = open(os.path.join(bundle_dir, "goldens", "prompt.wav"), "rb").read()
    created = requests.post(server.url + "/v1/audio/voices", timeout=120,
                            data={"name": name, "model": model, "transcript": TRANSCRIPT},
                            files={"audio_sample": ("prompt.wav", prompt, "audio/wav")})
    assert created.status_code == 200, created.text
    return created.json()


def config_text(root, cv2, cv3):
    return (f"voices: {{dir: {root / 'voices'}}}\nmodels:\n  - id: espeak\n"
            f"  - id: cosyvoice2\n    engine: cosyvoice\n    options: {{path: {cv2}, max_active: 2}}\n"
            f"  - id: cosyvoice3\n    engine: cosyvoice\n    options: {{path: {cv3}, max_active: 4}}\n"
            f"  - id: cosyvoice3-stream\n    engine: cosyvoice\n"
            f"    options: {{path: {cv3}, max_active: 2, streaming: true, stream_first_hop: 5,"
            f" stream_max_hop: 10}}\n")


@pytest.fixture(scope="module")
def server(voxserve_bin, bundle, bundle3, tmp_path_factory):  # noqa: F811
    reference()
    root = tmp_path_factory.mktemp("cosyvoice3")
    config = root / "voxserve.yaml"
    config.write_text(config_text(root, bundle, bundle3))
    server = VoxServer(voxserve_bin, ["--config", str(config), "--wyoming-enabled", "true",
                                      "--wyoming-port", "0"]).start()
    server.root, server.config = root, config
    server.voice3 = register(server, "cosyvoice3", bundle3, "Three")
    server.voice3_stream = register(server, "cosyvoice3-stream", bundle3, "Three Streaming")
    server.voice2 = register(server, "cosyvoice2", bundle, "Two")
    yield server
    assert server.stop() == 0, server.log()


def speech(server, voice, model="cosyvoice3", text=TEXT, **fields):
    return requests.post(server.url + "/v1/audio/speech", timeout=300, json={
        "model": model, "input": text, "voice": voice, "response_format": "pcm", **fields})


def pcm(server, voice, model="cosyvoice3", text=TEXT):
    response = speech(server, voice, model, text)
    assert response.status_code == 200, response.text
    samples = decode(response.content, "pcm").samples
    assert len(samples) > 0 and len(samples) % SAMPLES_PER_TOKEN == 0, len(samples)
    return response.content


def test_check_model_and_verify_bundle_know_the_family(voxserve_bin, bundle3):
    checked = run(voxserve_bin, "check-model", bundle3)
    assert checked.returncode == 0, checked.stderr
    assert "valid cosyvoice3 bundle" in checked.stdout
    verified = run(voxserve_bin, "verify-bundle", bundle3)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for stage in ("audio.prompt_mel", "flow.estimator_stream/0", "hift.full/0", "llm.decode/1"):
        assert stage in verified.stdout, stage
    assert " 0 failed" in verified.stdout


def test_a_registered_voice_is_a_cosyvoice3_voice_listed_with_its_family(server):
    assert server.voice3["family"] == "cosyvoice3", server.voice3
    assert server.voice2["family"] == "cosyvoice2", server.voice2
    models = requests.get(server.url + "/v1/models", timeout=30).json()["data"]
    assert {"cosyvoice2", "cosyvoice3", "cosyvoice3-stream"} <= {m["id"] for m in models}


def test_rest_whole_and_sse_give_the_same_audio_and_repeat(server):
    voice = server.voice3["id"]
    whole = pcm(server, voice)
    assert pcm(server, voice) == whole, "same request (fixed seed), same audio"
    response = speech(server, voice, stream_format="sse")
    assert response.status_code == 200, response.text
    events = [json.loads(block[len("data: "):]) for block in response.text.split("\n\n")
              if block.strip()]
    assert events[-1]["type"] == "speech.audio.done"
    deltas = [base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta"]
    assert b"".join(deltas) == whole


def test_the_streaming_option_sends_hops_that_add_up_to_the_whole(server):
    """The causal HiFT's streaming (CausalHiftStream): the chunks add up to what the same model
    gives in one piece. Random weights often stop within a few tokens (200 of CosyVoice3's 6761
    outputs are stop ids, and min_len masks only the first, llm.py:157-158, as upstream does): the
    test takes the first seed whose piece runs past two hops (5 + 10 tokens, the model's
    stream_first_hop and stream_max_hop, + 3 lookahead)."""
    voice, text = server.voice3_stream["id"], "Good morning."
    for seed in range(40):
        whole = speech(server, voice, "cosyvoice3-stream", text, seed=seed)
        assert whole.status_code == 200, whole.text
        if len(whole.content) // 2 >= 18 * SAMPLES_PER_TOKEN:
            break
    else:
        pytest.fail("no seed in 0..39 gave 18 speech tokens")
    response = speech(server, voice, "cosyvoice3-stream", text, stream_format="sse", seed=seed)
    assert response.status_code == 200, response.text
    events = [json.loads(block[len("data: "):]) for block in response.text.split("\n\n")
              if block.strip()]
    deltas = [base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta"]
    assert len(deltas) >= 3, ("two hops and the rest", seed, [len(d) for d in deltas])
    assert b"".join(deltas) == whole.content


def test_grpc_gives_the_rest_audio(server):
    from grpc_support import channel, stubs
    voice = server.voice3["id"]
    rest = decode(pcm(server, voice), "pcm")
    pb = stubs().pb
    with channel(server) as ch:
        response = stubs().rpc.TextToSpeechStub(ch).Synthesize(
            pb.SynthesizeRequest(text=TEXT, options=pb.SynthesisOptions(
                model="cosyvoice3", voice=voice)), timeout=300)
    assert response.sample_rate == 24000
    assert list(decode(response.audio, "wav").samples) == list(rest.samples)


def test_a_websocket_session_speaks_each_sentence_as_rest_does(server):
    voice = server.voice3["id"]
    config = {"model": "cosyvoice3", "voice": voice, "response_format": "pcm"}
    items, close_code = asyncio.run(ws_session(server, config, ["H", "i. Go", " on."]))
    assert close_code == 1000, items
    spoken = sentences_of(items)
    assert [text for text, _ in spoken] == ["Hi.", "Go on."]
    for text, audio in spoken:
        assert audio == pcm(server, voice, text=text), text


def test_elevenlabs_gives_the_rest_audio(server):
    voice = server.voice3["id"]
    response = requests.post(f"{server.url}/elevenlabs/v1/text-to-speech/{voice}",
                             params={"output_format": "pcm_24000"}, timeout=300,
                             json={"text": TEXT, "model_id": "cosyvoice3"})
    assert response.status_code == 200, response.text
    assert response.content == pcm(server, voice)


def test_wyoming_speaks_the_cloned_voice_as_rest_does(server):
    voice = server.voice3["id"]
    spoken = run_wyoming(synthesize(server, TEXT, name=voice), timeout=600)
    assert spoken.types[-1] == "audio-stop", spoken.types
    assert spoken.rate == 24000
    assert spoken.pcm == pcm(server, voice)


def test_profiles_stay_with_their_family(server):
    """A voice names the model it was cloned for: another family's model does not find it (404),
    and the same id with no model speaks on its own model."""
    for voice, model in ((server.voice2["id"], "cosyvoice3"), (server.voice3["id"], "cosyvoice2")):
        response = speech(server, voice, model)
        assert response.status_code == 404, (model, response.text)
        assert response.json()["error"]["param"] == "voice"
    assert pcm(server, server.voice3["id"], model="tts-1") == pcm(server, server.voice3["id"])


def test_a_model_id_moved_to_cosyvoice3_refuses_its_cosyvoice2_voices(voxserve_bin, bundle,  # noqa: F811
                                                                      bundle3, tmp_path):
    """The same voice store after `cosyvoice2` was pointed at a CosyVoice3 bundle: its stored
    CosyVoice2 profiles are not fed to CosyVoice3's graphs; the error says to register again."""
    config = tmp_path / "voxserve.yaml"
    config.write_text(f"voices: {{dir: {tmp_path / 'voices'}}}\nmodels:\n  - id: espeak\n"
                      f"  - id: cosyvoice2\n    engine: cosyvoice\n    options: {{path: {bundle}}}\n")
    first = VoxServer(voxserve_bin, ["--config", str(config)]).start()
    try:
        voice = register(first, "cosyvoice2", bundle, "Old")["id"]
    finally:
        assert first.stop() == 0, first.log()
    config.write_text(f"voices: {{dir: {tmp_path / 'voices'}}}\nmodels:\n  - id: espeak\n"
                      f"  - id: cosyvoice2\n    engine: cosyvoice\n    options: {{path: {bundle3}}}\n")
    second = VoxServer(voxserve_bin, ["--config", str(config)]).start()
    try:
        response = speech(second, voice, "cosyvoice2")
        assert response.status_code == 501, response.text  # docs/voice-cloning.md
        error = response.json()["error"]
        assert "profile family 'cosyvoice2'" in error["message"], error
        assert "speaks 'cosyvoice3' voices; register the voice again" in error["message"], error
    finally:
        assert second.stop() == 0, second.log()


def test_export_from_a_fake_fun_cosyvoice3_directory_verifies(voxserve_bin, tmp_path):
    """export.py --model-dir detects CosyVoice3 by its cosyvoice3.yaml: upstream's campplus and
    speech_tokenizer_v3 copied, the rest exported from llm.pt / flow.pt / hift.pt."""
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        pytest.skip("VOXSERVE_COSYVOICE_REF is unset: no upstream CosyVoice to export with")
    model_dir, out = tmp_path / "Fun-CosyVoice3-fake", tmp_path / "bundle"
    tools = os.path.join(ROOT, "tools", "cosyvoice_export")
    subprocess.run(["/usr/bin/python3", os.path.join(tools, "fake_model_dir.py"), str(model_dir),
                    "--family", "cosyvoice3"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["/usr/bin/python3", EXPORT, "--model-dir", str(model_dir), "--out", str(out),
                    "--llm-precisions", "fp32"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checked = run(voxserve_bin, "check-model", str(out))
    assert checked.returncode == 0, checked.stderr
    assert "valid cosyvoice3 bundle" in checked.stdout and "checkpoint" in checked.stdout
    assert "speech_tokenizer_v3.onnx (upstream)" in checked.stdout
    verified = run(voxserve_bin, "verify-bundle", str(out))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "flow.stream/3" in verified.stdout and " 0 failed" in verified.stdout
