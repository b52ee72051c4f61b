"""Every error a client can meet has a machine-readable `code` (issue 29 item 11), on every
API's error shape, and no error repeats unbounded client input back (item 6): a 900 KB voice
is quoted in a few dozen characters, not returned whole."""
import asyncio
import io
import json
import math
import struct
import wave

import grpc
import pytest
import requests
import websockets
from websockets.exceptions import ConnectionClosed

from grpc_support import channel, stubs, trailer

TIMEOUT = 60
LONG_TEXT = " ".join(f"Sentence number {i} is here to make the text long enough." for i in range(40))
HUGE = "v" * 900_000


def wav(seconds=1.0, rate=16000, amplitude=0.5):
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(
            struct.pack("<h", int(amplitude * 32767 * math.sin(2 * math.pi * 220 * i / rate)))
            for i in range(int(seconds * rate))))
    return out.getvalue()


def speech(server, **fields):
    body = {"model": "tts-1", "input": "Hello.", "voice": "alloy", **fields}
    return requests.post(server.url + "/v1/audio/speech", json=body, timeout=TIMEOUT)


def register(server, name, audio):
    return requests.post(server.url + "/v1/audio/voices", data={"name": name},
                         files={"audio_sample": ("a.wav", audio, "audio/wav")}, timeout=TIMEOUT)


def assert_coded(response, status, code=None):
    assert response.status_code == status, response.text[:300]
    body = response.json()
    error = body["error"] if "error" in body else body["detail"]
    assert isinstance(error["code"], str) and error["code"], body
    if code:
        assert error["code"] == code, body
    return error


@pytest.fixture(scope="module")
def cloning_server(voxserve_bin, tmp_path_factory):
    from conftest import VoxServer
    voices = tmp_path_factory.mktemp("voices")
    instance = VoxServer(voxserve_bin, ["--voices-dir", str(voices), "--voices-test-cloner",
                                        "true"]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


# --- every error has a code ------------------------------------------------------------------------

@pytest.mark.parametrize("name,send,status,code", [
    ("bad json", lambda s: requests.post(s.url + "/v1/audio/speech", data="{x",
                                         headers={"Content-Type": "application/json"}, timeout=9),
     400, "invalid_json"),
    ("not json", lambda s: requests.post(s.url + "/v1/audio/speech", data="x", timeout=9), 415,
     "unsupported_media_type"),
    ("unknown voice", lambda s: speech(s, voice="klingon"), 404, "voice_not_found"),
    ("unknown model", lambda s: speech(s, model="nope"), 404, "model_not_found"),
    ("speed", lambda s: speech(s, speed=9), 400, "invalid_speed"),
    ("empty input", lambda s: speech(s, input="  "), 400, "empty_input"),
    ("format", lambda s: speech(s, response_format="ogg"), 400, "unsupported_response_format"),
    ("seed", lambda s: speech(s, seed=-1), 400, "invalid_seed"),
    ("timeout option", lambda s: speech(s, timeout_ms=0), 400, "invalid_timeout"),
    ("route", lambda s: requests.get(s.url + "/nope", timeout=9), 404, "route_not_found"),
    ("method", lambda s: requests.get(s.url + "/v1/audio/speech", timeout=9), 405,
     "method_not_allowed"),
    # The deadline passes while the long text is synthesized: 504 with a code, not null.
    ("deadline", lambda s: speech(s, input=LONG_TEXT, timeout_ms=1), 504, "timeout"),
    ("cloning off", lambda s: register(s, "a", wav()), 501, "voice_cloning_off"),
    ("no such cloned voice", lambda s: requests.get(s.url + "/v1/audio/voices/voice_nope",
                                                    timeout=9), None, None),
    ("elevenlabs empty text", lambda s: requests.post(
        s.url + "/elevenlabs/v1/text-to-speech/en-us", json={"text": ""}, timeout=9), 400,
     "empty_input"),
    ("elevenlabs seed", lambda s: requests.post(
        s.url + "/elevenlabs/v1/text-to-speech/en-us", json={"text": "Hi.", "seed": -1},
        timeout=9), 400, "invalid_seed"),
    ("elevenlabs method", lambda s: requests.get(s.url + "/elevenlabs/v1/text-to-speech/en-us",
                                                 timeout=9), 405, "method_not_allowed"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_every_rest_error_has_a_code(server, name, send, status, code):
    response = send(server)
    if status is None:  # whatever status the route gives, it is an error with a code
        assert response.status_code >= 400
        status = response.status_code
    assert_coded(response, status, code)


def test_voice_registration_errors_have_codes(cloning_server):
    assert register(cloning_server, "taken", wav()).status_code == 200
    duplicate = assert_coded(register(cloning_server, "taken", wav()), 409, "voice_name_taken")
    assert duplicate["param"] == "name"
    assert_coded(register(cloning_server, "b", b"x" * 2000), 400, "invalid_audio")
    assert_coded(register(cloning_server, "c", wav(amplitude=0.0)), 400, "silent_audio")
    too_long = register(cloning_server, "d", wav(31.0, rate=2000))
    assert_coded(too_long, 400, "audio_too_long")


def test_every_grpc_error_carries_voxserve_error_code(server):
    pb = stubs().pb
    cases = [
        pb.SynthesizeRequest(text="Hi.", options=pb.SynthesisOptions(voice="klingon")),
        pb.SynthesizeRequest(text="  ", options=pb.SynthesisOptions()),
        pb.SynthesizeRequest(text="Hi.", options=pb.SynthesisOptions(speed=9)),
        pb.SynthesizeRequest(text=LONG_TEXT, options=pb.SynthesisOptions(timeout_ms=1)),
    ]
    with channel(server) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)
        for request in cases:
            with pytest.raises(grpc.RpcError) as raised:
                stub.Synthesize(request, timeout=TIMEOUT)
            assert trailer(raised.value, "voxserve-error-code"), raised.value


def test_websocket_error_events_have_codes(server):
    async def talk(messages):
        async with websockets.connect(f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream",
                                      max_size=None, ping_interval=None,
                                      open_timeout=TIMEOUT) as ws:
            for message in messages:
                await ws.send(json.dumps(message))
            events = []
            try:
                while True:
                    message = await asyncio.wait_for(ws.recv(), TIMEOUT)
                    if isinstance(message, str):
                        events.append(json.loads(message))
            except ConnectionClosed:
                return events

    for messages in ([{"voice": "klingon"}], [{"voice": "alloy", "timeout_ms": 1},
                                              {"text": LONG_TEXT, "close": True}]):
        events = asyncio.run(asyncio.wait_for(talk(messages), 2 * TIMEOUT))
        errors = [e for e in events if e["type"] == "error"]
        assert errors and errors[0]["error"]["code"], events


# --- echoed client input is bounded ----------------------------------------------------------------

@pytest.mark.parametrize("field", ["voice", "model", "response_format"])
def test_a_huge_field_is_not_echoed_back_whole(server, field):
    response = speech(server, **{field: HUGE})
    assert 400 <= response.status_code < 500
    assert len(response.content) < 2000, len(response.content)
    message = response.json()["error"]["message"]
    assert "v" * 64 in message and "v" * 65 not in message and "900000 bytes" in message


def test_elevenlabs_bounds_a_huge_voice_and_output_format(server):
    voice = requests.post(server.url + "/elevenlabs/v1/text-to-speech/" + "v" * 10_000,
                          json={"text": "Hi."}, timeout=TIMEOUT)
    assert voice.status_code == 400 and len(voice.content) < 2000
    fmt = requests.post(server.url + "/elevenlabs/v1/text-to-speech/en-us",
                        params={"output_format": HUGE[:10_000]}, json={"text": "Hi."},
                        timeout=TIMEOUT)
    assert fmt.status_code == 422 and len(fmt.content) < 2000


def test_grpc_bounds_a_huge_voice_in_its_details(server):
    pb = stubs().pb
    with channel(server) as ch, pytest.raises(grpc.RpcError) as raised:
        stubs().rpc.TextToSpeechStub(ch).Synthesize(
            pb.SynthesizeRequest(text="Hi.", options=pb.SynthesisOptions(voice=HUGE)),
            timeout=TIMEOUT)
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert len(raised.value.details()) < 1000
