"""Voice cloning end to end through the real binary (docs/voice-cloning.md): REST and gRPC
register, list, get and delete; voices survive a restart; concurrent registrations leave a
consistent store; bad uploads get a clear 4xx and store nothing.

No cloning engine is configured here (CosyVoice arrives separately): the servers run with
`voices.test_cloner: true`, the documented TEST ONLY switch that gives models without a cloner a
deterministic stand-in (profile family "test"). Everything but the profile's contents is the
production path."""
import concurrent.futures
import io
import json
import math
import pathlib
import struct
import wave
import zlib

import grpc
import pytest
import requests

from grpc_support import channel, stubs

VOICES = "/v1/audio/voices"


def wav_bytes(seconds, rate=16000, amplitude=0.5):
    frames = int(seconds * rate)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(
            struct.pack("<h", int(amplitude * 32767 * math.sin(2 * math.pi * 220 * i / rate)))
            for i in range(frames)))
    return out.getvalue()


SAMPLE = wav_bytes(1.0)
# The same file under a header saying 7 bits per sample (offset 34 of the 44-byte header):
# libsndfile alone read it as twice as many 8-bit samples (issue 29).
SEVEN_BIT = SAMPLE[:34] + struct.pack("<H", 7) + SAMPLE[36:]


def register(server, name, audio=SAMPLE, field="audio_sample", **fields):
    data = {"name": name, "transcript": "hello world", **fields}
    return requests.post(server.url + VOICES, data=data,
                         files={field: ("sample.wav", audio, "audio/wav")}, timeout=30)


def voice_files(directory):
    return sorted(p.name for p in pathlib.Path(directory).iterdir())


def start(make_server, voices_dir, *extra):
    return make_server("--voices-dir", str(voices_dir), "--voices-test-cloner", "true", *extra)


def test_register_list_get_delete_and_survive_restarts(make_server, tmp_path):
    voices_dir = tmp_path / "voices"
    server = start(make_server, voices_dir)
    created = register(server, "Alice Clone", field="audio")  # "audio" is accepted as an alias
    assert created.status_code == 200, created.text
    voice = created.json()
    assert voice["id"].startswith("voice_") and len(voice["id"]) == 30
    assert voice["object"] == "audio.voice"
    assert voice["name"] == "Alice Clone"
    assert isinstance(voice["created_at"], int)
    assert voice["model"] == "espeak" and voice["family"] == "test"
    assert voice["transcript"] == "hello world"
    assert voice["prompt_seconds"] == pytest.approx(1.0, abs=1e-3)
    assert voice_files(voices_dir) == [voice["id"] + ".voice"]

    # The file is the documented layout: magic, version, lengths, zlib's CRC-32, JSON, data.
    raw = (voices_dir / (voice["id"] + ".voice")).read_bytes()
    magic, version, meta_len, data_len, crc = struct.unpack("<8sIIQI", raw[:28])
    assert (magic, version) == (b"VXVOICE\n", 1)
    assert len(raw) == 28 + meta_len + data_len and zlib.crc32(raw[28:]) == crc
    meta = json.loads(raw[28:28 + meta_len])
    assert meta["id"] == voice["id"] and meta["name"] == "Alice Clone"
    assert {t["name"] for t in meta["tensors"]} == {"speaker_embedding", "prompt_speech_tokens"}

    listed = requests.get(server.url + VOICES, timeout=10).json()
    assert listed["object"] == "list" and [v["id"] for v in listed["data"]] == [voice["id"]]
    assert requests.get(server.url + VOICES + "?model=espeak", timeout=10).json()["data"]
    assert requests.get(server.url + VOICES + "?model=other", timeout=10).json()["data"] == []
    got = requests.get(server.url + VOICES + "/" + voice["id"], timeout=10)
    assert got.status_code == 200 and got.json() == voice
    catalog = requests.get(server.url + "/v1/voices?model=espeak", timeout=10).json()["data"]
    cloned = [v for v in catalog if v["id"] == voice["id"]]
    assert cloned and cloned[0]["type"] == "cloned" and cloned[0]["name"] == "Alice Clone"

    # Synthesis finds the clone by id (OpenAI's {"id": ...}) and by name; espeak takes no
    # profile, so it says so clearly rather than speaking with another voice.
    for voice_field in ({"id": voice["id"]}, "alice clone"):
        speech = requests.post(server.url + "/v1/audio/speech", timeout=30, json={
            "model": "espeak", "input": "Hello.", "voice": voice_field})
        assert speech.status_code == 501, speech.text
        assert voice["id"] in speech.json()["error"]["message"]

    assert server.stop() == 0
    server = start(make_server, voices_dir)
    assert requests.get(server.url + VOICES + "/" + voice["id"], timeout=10).json() == voice
    duplicate = register(server, "ALICE CLONE")
    assert duplicate.status_code == 409, duplicate.text

    deleted = requests.delete(server.url + VOICES + "/" + voice["id"], timeout=10)
    assert deleted.status_code == 200
    assert deleted.json() == {"id": voice["id"], "object": "audio.voice.deleted", "deleted": True}
    assert requests.get(server.url + VOICES + "/" + voice["id"], timeout=10).status_code == 404
    assert requests.delete(server.url + VOICES + "/" + voice["id"], timeout=10).status_code == 404
    assert voice_files(voices_dir) == []
    catalog = requests.get(server.url + "/v1/voices", timeout=10).json()["data"]
    assert not [v for v in catalog if v.get("type") == "cloned"]
    assert server.stop() == 0
    server = start(make_server, voices_dir)
    assert requests.get(server.url + VOICES, timeout=10).json()["data"] == []


def test_bad_uploads_get_a_clear_4xx_and_store_nothing(make_server, tmp_path):
    voices_dir = tmp_path / "voices"
    server = start(make_server, voices_dir, "--voices-max-upload-bytes", "200000")
    cases = [
        ("not audio", register(server, "a", b"x" * 2000), 400, "audio_sample"),
        ("truncated audio", register(server, "a", SAMPLE[:44]), 400, "audio_sample"),
        ("silent", register(server, "a", wav_bytes(1.0, amplitude=0.0)), 400, "silent"),
        ("too long", register(server, "a", wav_bytes(31.0, rate=2000)), 400, "30 s"),
        ("too large", register(server, "a", wav_bytes(7.0)), 413, "200000"),
        ("path in name", register(server, "../../etc/passwd"), 400, "name"),
        ("slash in name", register(server, "a/b"), 400, "name"),
        ("7-bit WAV header", register(server, "a", SEVEN_BIT), 400, "7-bit PCM"),
        # Look-alike names: a right-to-left override, a zero-width space.
        ("override in name", register(server, "\u202eecila"), 400, "invisible"),
        ("zero-width space in name", register(server, "Ali\u200bce"), 400, "invisible"),
        ("unknown model", register(server, "a", model="nope"), 404, "nope"),
        ("no audio", requests.post(server.url + VOICES, files={"name": (None, "a")}, timeout=10),
         400, "audio_sample"),
        ("urlencoded", requests.post(server.url + VOICES, data={"name": "a"}, timeout=10), 415,
         "multipart/form-data"),
        ("no name", requests.post(server.url + VOICES, files={"audio_sample": SAMPLE},
                                  timeout=10), 400, "name"),
        ("json body", requests.post(server.url + VOICES, json={"name": "a"}, timeout=10), 415,
         "multipart/form-data"),
        ("truncated form", requests.post(
            server.url + VOICES, data=b"--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx",
            headers={"Content-Type": "multipart/form-data; boundary=B"}, timeout=10), 400,
         "truncated"),
        # Over the route's body limit (upload limit + 64 KiB for the form): refused by the
        # HTTP layer before the body is read.
        ("body over the limit", requests.post(
            server.url + VOICES, data=b"x" * 400_000,
            headers={"Content-Type": "multipart/form-data; boundary=B"}, timeout=10), 413,
         "exceeds"),
    ]
    for what, response, status, needle in cases:
        assert response.status_code == status, (what, response.status_code, response.text)
        error = response.json()["error"]
        assert needle in error["message"] + str(error.get("param")), (what, error)
    assert requests.get(server.url + VOICES, timeout=10).json()["data"] == []
    assert voice_files(voices_dir) == []
    # Other routes keep the ordinary 1 MiB body limit.
    big = requests.post(server.url + "/v1/audio/speech", data=b"x" * (2 << 20),
                        headers={"Content-Type": "application/json"}, timeout=10)
    assert big.status_code == 413


def test_a_model_that_cannot_clone_and_a_full_store_are_refused(make_server, tmp_path):
    plain = make_server("--voices-dir", str(tmp_path / "plain"))
    refused = register(plain, "a")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "model_cannot_clone"
    off = make_server()
    assert register(off, "a").status_code == 501

    full = start(make_server, tmp_path / "full", "--voices-max-count", "2")
    assert register(full, "one").status_code == 200
    assert register(full, "two").status_code == 200
    third = register(full, "three")
    assert third.status_code == 507 and third.json()["error"]["code"] == "voice_limit_reached"
    assert len(voice_files(tmp_path / "full")) == 2


def test_concurrent_registrations_keep_the_store_consistent(make_server, tmp_path):
    voices_dir = tmp_path / "voices"
    server = start(make_server, voices_dir, "--voices-max-pending", "64")
    names = [f"voice {i % 12}" for i in range(36)]  # every name three times
    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        responses = list(pool.map(lambda name: register(server, name), names))
    codes = [r.status_code for r in responses]
    assert set(codes) <= {200, 409}, [r.text for r in responses if r.status_code not in (200, 409)]
    assert codes.count(200) == 12
    stored = {r.json()["id"] for r in responses if r.status_code == 200}
    assert voice_files(voices_dir) == sorted(i + ".voice" for i in stored)
    assert server.stop() == 0
    server = start(make_server, voices_dir)
    listed = requests.get(server.url + VOICES, timeout=10).json()["data"]
    assert {v["id"] for v in listed} == stored
    assert sorted(v["name"] for v in listed) == sorted(set(names))


def test_grpc_register_list_get_delete(make_server, tmp_path):
    voices_dir = tmp_path / "voices"
    server = start(make_server, voices_dir)
    s = stubs()
    client = s.rpc.TextToSpeechStub(channel(server))
    voice = client.RegisterVoice(s.pb.RegisterVoiceRequest(
        audio_sample=SAMPLE, name="Grpc Voice", transcript="hi", model="espeak"), timeout=30)
    assert voice.id.startswith("voice_") and voice.name == "Grpc Voice"
    assert voice.family == "test" and voice.bytes > 0 and voice.created_at > 0
    listed = client.ListClonedVoices(s.pb.ListClonedVoicesRequest(), timeout=10)
    assert [v.id for v in listed.voices] == [voice.id]
    assert client.GetVoice(s.pb.GetVoiceRequest(id=voice.id), timeout=10) == voice
    catalog = client.ListVoices(s.pb.ListVoicesRequest(model="espeak"), timeout=10)
    assert [(v.name, v.cloned) for v in catalog.voices if v.id == voice.id] == [("Grpc Voice", True)]
    # REST sees the same store.
    assert requests.get(server.url + VOICES + "/" + voice.id, timeout=10).status_code == 200

    for request, code in [
        (s.pb.RegisterVoiceRequest(audio_sample=b"junk" * 100, name="x"),
         grpc.StatusCode.INVALID_ARGUMENT),
        (s.pb.RegisterVoiceRequest(audio_sample=SAMPLE, name="grpc voice"),
         grpc.StatusCode.ALREADY_EXISTS),
        (s.pb.RegisterVoiceRequest(audio_sample=SAMPLE, name="x", model="nope"),
         grpc.StatusCode.NOT_FOUND),
        (s.pb.RegisterVoiceRequest(audio_sample=SAMPLE, name="a/b"),
         grpc.StatusCode.INVALID_ARGUMENT),
        (s.pb.RegisterVoiceRequest(audio_sample=wav_bytes(31.0, rate=2000), name="x"),
         grpc.StatusCode.OUT_OF_RANGE),
    ]:
        with pytest.raises(grpc.RpcError) as error:
            client.RegisterVoice(request, timeout=30)
        assert error.value.code() == code, (request.name, error.value.details())
    assert voice_files(voices_dir) == [voice.id + ".voice"]

    deleted = client.DeleteVoice(s.pb.DeleteVoiceRequest(id=voice.id), timeout=10)
    assert deleted.deleted and deleted.id == voice.id
    with pytest.raises(grpc.RpcError) as error:
        client.GetVoice(s.pb.GetVoiceRequest(id=voice.id), timeout=10)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND
    assert voice_files(voices_dir) == []


def test_voice_routes_follow_the_api_key_rules(make_server, tmp_path):
    from security_support import write_keys
    alice, bob = "sk-alice-0123456789abcdef", "sk-bob-0123456789abcdef"
    keys = write_keys(tmp_path / "keys.yaml", [
        {"name": "alice", "key": alice},
        {"name": "bob", "key": bob, "models": ["kokoro"]},  # may not use espeak
    ])
    voices_dir = tmp_path / "voices"
    server = start(make_server, voices_dir, "--api-keys-file", keys)

    def call(method, path, key=None, **kwargs):
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return requests.request(method, server.url + path, headers=headers, timeout=30, **kwargs)

    form = {"data": {"name": "Keyed"}, "files": {"audio_sample": ("a.wav", SAMPLE, "audio/wav")}}
    for method, path in [("POST", VOICES), ("GET", VOICES), ("GET", VOICES + "/voice_x"),
                         ("DELETE", VOICES + "/voice_x")]:
        assert call(method, path, **(form if method == "POST" else {})).status_code == 401, path
    forbidden = call("POST", VOICES, bob, **form)
    assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == "model_not_allowed"
    assert voice_files(voices_dir) == []
    created = call("POST", VOICES, alice, **form)
    assert created.status_code == 200, created.text
    assert call("GET", VOICES, alice).json()["data"][0]["id"] == created.json()["id"]
    assert call("DELETE", VOICES + "/" + created.json()["id"], alice).status_code == 200
