"""An inline voice prompt (vLLM-Omni's ref_audio / ref_text) on the tiny random-weight CosyVoice
bundle with the real binary: the recording is cloned for the one request and stored nowhere, and
it speaks exactly as the same recording registered through /v1/audio/voices (same profile, same
seed, same samples) on /v1/audio/speech (whole, SSE), /v1/synthesize and gRPC Synthesize; bad
prompts are 400s naming ref_audio, and the APIs that cannot take one refuse it rather than
speaking another voice.
"""
import asyncio
import base64
import json
import os

import grpc
import pytest
import requests

from audio_check import decode
from test_onnx_cosyvoice import bundle  # noqa: F401 (the fixture)
from test_onnx_cosyvoice_modes import TEXT, pcm, server, ws_session  # noqa: F401 (fixture)
from test_onnx_cosyvoice_synthesis import TRANSCRIPT


@pytest.fixture(scope="module")
def prompt(bundle):  # noqa: F811
    with open(os.path.join(bundle, "goldens", "prompt.wav"), "rb") as f:
        return f.read()


def inline(server, prompt, route="/v1/audio/speech", **fields):  # noqa: F811
    body = {"model": "cosyvoice2", "response_format": "pcm",
            "ref_audio": base64.b64encode(prompt).decode(), **fields}
    body["input" if route == "/v1/audio/speech" else "text"] = TEXT
    return requests.post(server.url + route, json=body, timeout=300)


def stored_voices(server):  # noqa: F811
    return requests.get(server.url + "/v1/audio/voices", timeout=30).json()["data"]


def test_an_inline_prompt_speaks_as_the_same_recording_registered(server, prompt):  # noqa: F811
    before = stored_voices(server)
    with_text = inline(server, prompt, ref_text=TRANSCRIPT, seed=7)
    assert with_text.status_code == 200, with_text.text
    assert with_text.content == pcm(server, seed=7), "zero-shot: the registered voice's audio"
    without_text = inline(server, prompt, seed=7)
    assert without_text.status_code == 200, without_text.text
    assert without_text.content == pcm(server, seed=7, voice=server.bare_voice_id), \
        "cross-lingual by default without a transcript, as a voice registered without one"
    # A data: URI, the other route, and a voice named beside it (ignored) change nothing.
    uri = "data:audio/wav;base64," + base64.b64encode(prompt).decode()
    same = requests.post(server.url + "/v1/synthesize", timeout=300, json={
        "model": "cosyvoice2", "text": TEXT, "voice": "alloy", "response_format": "pcm",
        "ref_audio": uri, "ref_text": TRANSCRIPT, "seed": 7})
    assert same.status_code == 200 and same.content == with_text.content, same.text[:200]
    assert stored_voices(server) == before, "an inline prompt is never stored"


def test_an_inline_prompt_streams_over_sse(server, prompt):  # noqa: F811
    response = inline(server, prompt, ref_text=TRANSCRIPT, seed=7, stream_format="sse")
    assert response.status_code == 200, response.text
    events = [json.loads(line[len("data: "):]) for line in response.text.splitlines()
              if line.startswith("data: ")]
    assert events[-1]["type"] == "speech.audio.done", events[-1]
    audio = b"".join(base64.b64decode(e["audio"]) for e in events
                     if e["type"] == "speech.audio.delta")
    assert audio == pcm(server, seed=7)


def test_grpc_synthesize_takes_an_inline_prompt(server, prompt):  # noqa: F811
    from grpc_support import channel, stubs
    pb = stubs().pb
    with channel(server) as ch:
        answer = stubs().rpc.TextToSpeechStub(ch).Synthesize(pb.SynthesizeRequest(
            text=TEXT, options=pb.SynthesisOptions(model="cosyvoice2", ref_audio=prompt,
                                                   ref_text=TRANSCRIPT, seed=7)), timeout=300)
        assert list(decode(answer.audio, "wav").samples) == \
            list(decode(pcm(server, seed=7), "pcm").samples)
        with pytest.raises(grpc.RpcError) as raised:
            stubs().rpc.TextToSpeechStub(ch).Synthesize(pb.SynthesizeRequest(
                text=TEXT, options=pb.SynthesisOptions(model="cosyvoice2",
                                                       ref_audio=b"not audio at all" * 100)),
                timeout=300)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "ref_audio" in raised.value.details()


@pytest.mark.parametrize("fields,status,param,code", [
    ({"ref_audio": base64.b64encode(b"not audio at all" * 100).decode()}, 400, "ref_audio",
     "invalid_audio"),
    ({"ref_audio": "%%%"}, 400, "ref_audio", "invalid_audio"),
    ({"ref_audio": "PROMPT", "model": "espeak"}, 400, "model", "model_cannot_clone"),
    ({"voice": "alloy", "ref_text": TRANSCRIPT}, 400, "ref_audio", "missing_audio"),
    ({"ref_audio": "PROMPT", "voice_mode": "zero_shot"}, 400, "voice_mode", None),
], ids=["not-audio", "not-base64", "model-cannot-clone", "text-without-audio",
        "zero-shot-without-transcript"])
def test_bad_inline_prompts_are_400s_naming_the_field(server, prompt, fields, status, param,  # noqa: F811
                                                      code):
    body = {"model": "cosyvoice2", "input": TEXT, "response_format": "pcm", **fields}
    if body.get("ref_audio") == "PROMPT":
        body["ref_audio"] = base64.b64encode(prompt).decode()
    response = requests.post(server.url + "/v1/audio/speech", json=body, timeout=300)
    assert response.status_code == status, response.text[:300]
    error = response.json()["error"]
    assert error["param"] == param, error
    if code:
        assert error["code"] == code, error


def test_a_websocket_session_refuses_an_inline_prompt(server):  # noqa: F811
    # A short stand-in: a whole recording in base64 would pass the WebSocket message cap, which
    # closes the connection (1009) before the config is read.
    config = {"model": "cosyvoice2", "ref_audio": base64.b64encode(b"RIFF" * 64).decode()}
    items, close_code = asyncio.run(ws_session(server, config, ["Hi."]))
    errors = [i for i in items if isinstance(i, dict) and i["type"] == "error"]
    assert len(errors) == 1 and errors[0]["error"]["param"] == "ref_audio", items
    assert not any(isinstance(i, bytes) for i in items), "no audio in another voice"
    assert close_code == 1008
