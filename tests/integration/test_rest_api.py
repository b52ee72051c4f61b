"""The REST API end to end: formats, voices, errors and concurrency against a real voxserve."""
import concurrent.futures
import hashlib
import http.client
import json

import pytest
import requests

from audio_check import decode

OPENAI_VOICES = ["alloy", "ash", "ballad", "cedar", "coral", "echo", "fable", "marin", "nova",
                 "onyx", "sage", "shimmer", "verse"]
FORMATS = {
    # format: (content type, sample rate of the output)
    "mp3": ("audio/mpeg", 22050),
    "opus": ("audio/opus", 48000),
    "aac": ("audio/aac", 22050),
    "flac": ("audio/flac", 22050),
    "wav": ("audio/wav", 22050),
    "pcm": ("audio/pcm", 24000),
}


def speech(server, **fields):
    body = {"model": "tts-1", "input": "Hello world.", "voice": "alloy"}
    body.update(fields)
    return requests.post(server.url + "/v1/audio/speech", json=body, timeout=30)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_format_decodes_to_plausible_speech(server, fmt):
    response = speech(server, response_format=fmt)
    assert response.status_code == 200, response.text
    content_type, rate = FORMATS[fmt]
    assert response.headers["Content-Type"] == content_type
    assert response.headers["X-Sample-Rate"] == str(rate)
    audio = decode(response.content, fmt)
    assert audio.sample_rate == rate
    assert 0.4 <= audio.duration <= 3.0
    if fmt == "aac":
        assert sum(audio.frame_sizes) / len(audio.frame_sizes) > 40, "AAC frames look silent"
    else:
        assert audio.rms > 0.02, "audio is (nearly) silent"


def test_mp3_is_the_default_format(server):
    response = speech(server)
    assert response.headers["Content-Type"] == "audio/mpeg"
    assert decode(response.content, "mp3").duration > 0.4


def test_openai_voice_names_give_different_audio(server):
    digests = {}
    for voice in OPENAI_VOICES:
        response = speech(server, voice=voice, response_format="pcm")
        assert response.status_code == 200, (voice, response.text)
        digests[voice] = hashlib.sha256(response.content).hexdigest()
    assert len(set(digests.values())) == len(OPENAI_VOICES), digests


@pytest.mark.parametrize("model", ["tts-1", "tts-1-hd", "gpt-4o-mini-tts", "espeak"])
def test_openai_model_names_are_aliases_of_the_default(server, model):
    assert speech(server, model=model, response_format="wav").status_code == 200


def test_voice_as_custom_voice_object(server):
    assert speech(server, voice={"id": "en-gb"}, response_format="wav").status_code == 200


def test_instructions_are_accepted(server):
    response = speech(server, instructions="Speak cheerfully.", response_format="wav")
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/v1/synthesize", "/tts"])
def test_synthesize_returns_wav(server, path):
    response = requests.post(server.url + path, json={"text": "Good morning.", "voice": "en-us",
                                                      "speed": 1.2}, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "audio/wav"
    audio = decode(response.content, "wav")
    assert audio.sample_rate == 22050 and audio.rms > 0.02


def test_speed_changes_duration(server):
    durations = {}
    for speed in (0.25, 0.5, 1.0, 2.0, 4.0):
        response = speech(server, input="The quick brown fox jumps over the lazy dog.",
                          speed=speed, response_format="wav")
        assert response.status_code == 200, response.text
        durations[speed] = decode(response.content, "wav").duration
    for slower, faster in [(0.25, 0.5), (0.5, 1.0), (1.0, 2.0), (2.0, 4.0)]:
        assert durations[slower] > durations[faster] * 1.4, durations
    assert durations[0.25] / durations[1.0] == pytest.approx(4.0, rel=0.25)


def test_mandarin_voice_and_config_alias(server):
    for voice in ("cmn", "zh_female"):
        response = requests.post(server.url + "/v1/synthesize",
                                 json={"text": "你好。今天天气很好！", "voice": voice}, timeout=30)
        assert response.status_code == 200, response.text
        assert decode(response.content, "wav").duration > 0.5


def test_voices_lists_engine_voices_aliases_and_openai_names(server):
    voices = requests.get(server.url + "/v1/voices", timeout=10).json()["data"]
    by_id = {voice["id"]: voice for voice in voices}
    assert by_id["cmn"]["language"] == "cmn"
    assert by_id["en-us"] == {**by_id["en-us"], "engine": "espeak", "model": "espeak",
                              "sample_rate": 22050}
    assert by_id["zh_female"]["alias_of"] == "cmn+f3"
    assert by_id["narrator"]["alias_of"] == "en-gb+m3"
    assert by_id["alloy"]["alias_of"] == "en-us+f2"
    assert len(voices) > 100
    chinese = requests.get(server.url + "/v1/voices?language=cmn", timeout=10).json()["data"]
    assert chinese and all(voice["language"].startswith("cmn") for voice in chinese)


def test_models_lists_espeak_and_openai_aliases(server):
    models = {m["id"]: m for m in requests.get(server.url + "/v1/models", timeout=10).json()["data"]}
    assert models["espeak"]["engine"] == "espeak" and models["espeak"]["state"] == "ready"
    assert models["tts-1"]["alias_of"] == "espeak"


def test_health_endpoints(server):
    assert requests.get(server.url + "/health/live", timeout=10).status_code == 200
    assert requests.get(server.url + "/health/ready", timeout=10).status_code == 200
    health = requests.get(server.url + "/health", timeout=10).json()
    assert health["status"] == "ready"
    assert health["models"][0]["id"] == "espeak" and health["models"][0]["state"] == "ready"


def test_metrics_count_requests_latency_and_audio(server):
    speech(server, response_format="wav")
    text = requests.get(server.url + "/metrics", timeout=10).text
    assert 'voxserve_http_requests_total{route="/v1/audio/speech",code="200"}' in text
    assert 'voxserve_http_request_duration_seconds_bucket{route="/v1/audio/speech",le="+Inf"}' in text
    audio_line = next(line for line in text.splitlines()
                      if line.startswith('voxserve_audio_seconds_total{model="espeak"}'))
    assert float(audio_line.split()[-1]) > 0


def test_request_id_is_honoured_or_generated(server):
    given = speech(server, response_format="wav")
    assert len(given.headers["X-Request-Id"]) >= 8
    response = requests.post(server.url + "/v1/audio/speech", timeout=30,
                             headers={"X-Request-Id": "trace-123"},
                             json={"model": "tts-1", "input": "Hi.", "voice": "alloy"})
    assert response.headers["X-Request-Id"] == "trace-123"


def error_of(response):
    body = response.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}, body
    assert body["error"]["message"]
    return body["error"]


VALID = {"model": "tts-1", "input": "Hello.", "voice": "alloy"}


@pytest.mark.parametrize("body,status,param", [
    (dict(VALID, voice="nobody"), 404, "voice"),
    (dict(VALID, model="no-such-model"), 404, "model"),
    ({k: v for k, v in VALID.items() if k != "input"}, 400, "input"),
    ({k: v for k, v in VALID.items() if k != "voice"}, 400, "voice"),
    (dict(VALID, input=""), 400, "input"),
    (dict(VALID, input="   \n "), 400, "input"),
    (dict(VALID, speed=0.1), 400, "speed"),
    (dict(VALID, speed=4.5), 400, "speed"),
    (dict(VALID, speed="fast"), 400, "speed"),
    (dict(VALID, response_format="ogg"), 400, "response_format"),
    (dict(VALID, stream_format="video"), 400, "stream_format"),
    (dict(VALID, input="x" * 4097), 413, "input"),
])
def test_invalid_fields_get_status_and_param(server, body, status, param):
    response = requests.post(server.url + "/v1/audio/speech", json=body, timeout=30)
    assert response.status_code == status, response.text
    assert error_of(response)["param"] == param


def test_input_limit_counts_characters_not_bytes(make_server):
    small = make_server("--max-input-chars", "10")
    assert speech(small, input="你好" * 5, voice="cmn", response_format="pcm").status_code == 200
    response = speech(small, input="你好" * 5 + "啊", voice="cmn", response_format="pcm")
    assert response.status_code == 413 and "11" in error_of(response)["message"]


def post_raw(server, body, content_type="application/json"):
    return requests.post(server.url + "/v1/audio/speech", data=body,
                         headers={"Content-Type": content_type}, timeout=30)


def test_malformed_json_is_400(server):
    response = post_raw(server, b'{"model": "tts-1", "input": ')
    assert response.status_code == 400 and error_of(response)["code"] == "invalid_json"


def test_json_that_is_not_an_object_is_400(server):
    assert post_raw(server, b'["Hello"]').status_code == 400


def test_invalid_utf8_is_400(server):
    response = post_raw(server, b'{"model":"tts-1","input":"caf\xc3\x28","voice":"alloy"}')
    assert response.status_code == 400 and error_of(response)["code"] == "invalid_utf8"


def test_non_json_content_type_is_415(server):
    response = post_raw(server, b"input=hello", "application/x-www-form-urlencoded")
    assert response.status_code == 415 and error_of(response)["type"] == "invalid_request_error"


def test_oversized_body_is_413(server):
    response = post_raw(server, b"{" + b" " * (2 << 20) + b"}")
    assert response.status_code == 413, response.text
    error_of(response)


def test_wrong_method_is_405_with_allow(server):
    response = requests.get(server.url + "/v1/audio/speech", timeout=10)
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    error_of(response)
    # HEAD is served wherever GET is, so Allow names it beside GET (RFC 9110 §10.2.1).
    response = requests.post(server.url + "/health/live", timeout=10)
    assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD"
    assert requests.head(server.url + "/health/live", timeout=10).status_code == 200


def test_an_empty_voice_is_required_on_the_openai_route_and_the_default_elsewhere(server):
    # /v1/audio/speech follows OpenAI, where voice is required (README, "Accepted voice values").
    response = requests.post(server.url + "/v1/audio/speech", json=dict(VALID, voice=""),
                             timeout=30)
    assert response.status_code == 400 and error_of(response)["code"] == "empty_voice"
    assert requests.post(server.url + "/v1/audio/speech", json=dict(VALID, voice="default"),
                         timeout=30).status_code == 200
    # voxserve's own route takes "" (or no voice) as the model's default voice.
    for body in ({"text": "Hello.", "voice": ""}, {"text": "Hello."}):
        assert requests.post(server.url + "/v1/synthesize", json=body,
                             timeout=30).status_code == 200


def test_unknown_route_is_404(server):
    response = requests.get(server.url + "/v1/nothing-here", timeout=10)
    assert response.status_code == 404
    error_of(response)


def test_expect_100_continue_is_answered(server):
    body = json.dumps(dict(VALID, input="Expect continue. " * 100)).encode()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.putrequest("POST", "/v1/audio/speech")
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Content-Length", str(len(body)))
    connection.putheader("Expect", "100-continue")
    connection.endheaders()
    interim = connection.sock.recv(64)
    assert interim.startswith(b"HTTP/1.1 100 Continue"), interim
    connection.sock.sendall(body)
    # The final response follows on the same socket.
    reply = http.client.HTTPResponse(connection.sock)
    reply.begin()
    assert reply.status == 200 and len(reply.read()) > 1000


def test_fifty_concurrent_clients_with_keep_alive(server):
    body = json.dumps(dict(VALID, response_format="wav", input="Concurrent request test."))

    def client(index):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        sizes = []
        for _ in range(3):  # three requests on one connection: keep-alive must hold
            connection.request("POST", "/v1/audio/speech", body=body,
                               headers={"Content-Type": "application/json"})
            reply = connection.getresponse()
            data = reply.read()
            assert reply.status == 200, data
            assert decode(data, "wav").rms > 0.02
            sizes.append(len(data))
        connection.close()
        return sizes

    with concurrent.futures.ThreadPoolExecutor(50) as pool:
        results = list(pool.map(client, range(50)))
    assert len(results) == 50
    assert len({size for sizes in results for size in sizes}) == 1, "same text, same audio"
