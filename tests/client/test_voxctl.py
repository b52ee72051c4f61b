"""voxctl end to end: the files it writes decode as audio, and failures give the documented
non-zero exit codes."""
import json
import subprocess

import pytest
import requests

from audio_check import decode
from conftest import VoxServer


def voxctl(binary, server_url, *args, stdin=None, timeout=60):
    return subprocess.run([binary, "--url", server_url, *args], input=stdin,
                          capture_output=True, timeout=timeout)


@pytest.fixture
def faults(server):
    def set_faults(**plan):
        requests.post(server.url + "/testing/faults", json=plan, timeout=5).raise_for_status()
    yield set_faults
    requests.delete(server.url + "/testing/faults", timeout=5)


@pytest.mark.parametrize("fmt", ["wav", "mp3", "flac", "opus", "pcm"])
def test_say_writes_a_file_that_decodes(voxctl_bin, server, tmp_path, fmt):
    out = tmp_path / f"hello.{fmt}"
    result = voxctl(voxctl_bin, server.url, "say", "Hello there. How are you today?", "-o", str(out))
    assert result.returncode == 0, result.stderr
    audio = decode(out.read_bytes(), fmt)
    assert 0.8 < audio.duration < 5, audio.duration
    assert b"wrote" in result.stderr
    assert not (tmp_path / f"hello.{fmt}.part").exists()


def test_say_reads_stdin_and_writes_stdout(voxctl_bin, server):
    result = voxctl(voxctl_bin, server.url, "say", "-v", "cmn", "-f", "wav", "-o", "-", "-q",
                    stdin="你好。今天天气很好！".encode())
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    assert decode(result.stdout, "wav").duration > 0.5


@pytest.mark.parametrize("mode", ["--stream", "--sse"])
def test_say_streams_to_a_file(voxctl_bin, server, tmp_path, mode):
    out = tmp_path / "stream.pcm"
    result = voxctl(voxctl_bin, server.url, "say", mode, "-f", "pcm", "-o", str(out),
                    "One sentence. Another sentence. A third.")
    assert result.returncode == 0, result.stderr
    audio = decode(out.read_bytes(), "pcm")
    assert audio.duration > 1 and audio.rms > 0.01


def test_voices_models_and_health(voxctl_bin, server):
    voices = voxctl(voxctl_bin, server.url, "voices", "--language", "cmn", "--json")
    assert voices.returncode == 0, voices.stderr
    listed = json.loads(voices.stdout)
    assert listed and all(v["language"].startswith("cmn") for v in listed)
    models = voxctl(voxctl_bin, server.url, "models")
    assert models.returncode == 0 and b"espeak" in models.stdout
    health = voxctl(voxctl_bin, server.url, "health")
    assert health.returncode == 0, health.stderr
    assert json.loads(health.stdout)["status"]
    assert voxctl(voxctl_bin, server.url, "health", "--ready").returncode == 0


@pytest.mark.parametrize("args, stdin, code, message", [
    (["say", "Hi.", "-v", "no-such-voice", "-o", "-"], None, 4, b"voice"),
    (["say", "Hi.", "--speed", "9", "-o", "-"], None, 4, b"speed"),
    (["say", "-o", "-"], b"   \n", 2, b"no text"),
    (["say", "Hi.", "-f", "ogg"], None, 2, b"ogg"),
    (["dance"], None, 2, b""),
])
def test_bad_requests_exit_non_zero(voxctl_bin, server, args, stdin, code, message):
    result = voxctl(voxctl_bin, server.url, *args, stdin=stdin)
    assert result.returncode == code, result.stderr
    assert message in result.stderr


def test_unreachable_server_exits_3(voxctl_bin):
    result = subprocess.run([voxctl_bin, "--url", "http://127.0.0.1:9", "--retries", "0",
                             "models"], capture_output=True, timeout=30)
    assert result.returncode == 3
    assert b"cannot connect" in result.stderr


@pytest.mark.parametrize("plan, args, code", [
    ({"fail_next": 5, "status": 503}, ["--retries", "1"], 3),
    ({"fail_next": 5, "status": 429}, ["--retries", "0"], 6),
    ({"fail_next": 5, "status": 500}, [], 8),
    ({"delay_next": 1, "delay_ms": 2000}, ["--timeout", "0.3"], 7),
])
def test_server_faults_map_to_exit_codes(voxctl_bin, server, faults, tmp_path, plan, args, code):
    faults(**plan)
    out = tmp_path / "x.wav"
    result = voxctl(voxctl_bin, server.url, *args, "say", "Hi.", "-o", str(out))
    assert result.returncode == code, result.stderr
    assert not out.exists() and not (tmp_path / "x.wav.part").exists()


def test_retries_are_visible_with_verbose(voxctl_bin, server, faults):
    faults(fail_next=1, status=503)
    result = voxctl(voxctl_bin, server.url, "--verbose", "say", "Hi.", "-f", "wav", "-o", "-")
    assert result.returncode == 0, result.stderr
    assert b"attempt 1" in result.stderr and b"HTTP 503" in result.stderr
    assert b"attempt 2" in result.stderr


def test_unwritable_output_exits_9(voxctl_bin, server):
    result = voxctl(voxctl_bin, server.url, "say", "Hi.", "-o", "/nonexistent-dir/x.wav")
    assert result.returncode == 9


def test_say_over_grpc(voxctl_bin, server, tmp_path):
    out = tmp_path / "grpc.wav"
    result = voxctl(voxctl_bin, "grpc://" + server.grpc_target, "say", "Hello over gRPC.", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert decode(out.read_bytes(), "wav").duration > 0.5


def ws_url(server):
    return "ws" + server.url[len("http"):]


@pytest.mark.parametrize("mode", [[], ["--stream"]])
def test_say_over_websocket(voxctl_bin, server, tmp_path, mode):
    out = tmp_path / "ws.pcm"
    result = voxctl(voxctl_bin, ws_url(server), "say", *mode, "-f", "pcm", "-o", str(out),
                    "One sentence. Another sentence. A third.")
    assert result.returncode == 0, result.stderr
    audio = decode(out.read_bytes(), "pcm")
    assert audio.duration > 1 and audio.rms > 0.01
    assert b"wrote" in result.stderr


@pytest.mark.parametrize("fmt", ["wav", "flac"])
def test_say_over_websocket_to_a_file_writes_one_playable_file(voxctl_bin, server, tmp_path, fmt):
    """Not one container per sentence: the whole text plays, as long as REST's file."""
    text = "One sentence. Another sentence. A third one, a little longer than the others."
    over_ws, over_rest = tmp_path / f"ws.{fmt}", tmp_path / f"rest.{fmt}"
    result = voxctl(voxctl_bin, ws_url(server), "say", "-f", fmt, "-o", str(over_ws), text)
    assert result.returncode == 0, result.stderr
    assert voxctl(voxctl_bin, server.url, "say", "-f", fmt, "-o", str(over_rest),
                  text).returncode == 0
    data = over_ws.read_bytes()
    assert data.count(b"RIFF" if fmt == "wav" else b"fLaC") == 1
    ws_audio, rest_audio = decode(data, fmt), decode(over_rest.read_bytes(), fmt)
    assert ws_audio.duration == pytest.approx(rest_audio.duration, rel=0.1), \
        (ws_audio.duration, rest_audio.duration)


@pytest.mark.parametrize("args, message", [
    (["-v", "no-such-voice"], b"voice"),
    (["--speed", "9"], b"speed"),
])
def test_websocket_refusals_exit_4_like_rest(voxctl_bin, server, args, message):
    result = voxctl(voxctl_bin, ws_url(server), "--verbose", "say", "Hi.", *args, "-o", "-")
    assert result.returncode == 4, result.stderr
    assert message in result.stderr
    assert b"attempt 2" not in result.stderr  # a 4xx is never retried


def test_say_over_wyoming_writes_the_wav_rest_gives(voxctl_bin, pytestconfig, tmp_path):
    server = VoxServer(pytestconfig.getoption("--voxserve-bin"),
                       ["--wyoming-enabled", "true", "--wyoming-port", "0"]).start()
    try:
        url = f"wyoming://127.0.0.1:{server.wyoming_port}"
        text = "Hello over Wyoming. Two sentences."
        out = tmp_path / "hello.wav"
        result = voxctl(voxctl_bin, url, "say", "-v", "en-us", text, "-o", str(out))
        assert result.returncode == 0, result.stderr
        rest = requests.post(server.url + "/v1/audio/speech", timeout=60, json={
            "model": "tts-1", "input": text, "voice": "en-us", "response_format": "wav"})
        written = out.read_bytes()
        assert int.from_bytes(written[40:44], "little") == len(written) - 44, "exact sizes"
        audio, expected = decode(written, "wav"), decode(rest.content, "wav")
        assert audio.sample_rate == expected.sample_rate == 22050, "espeak-ng's own rate"
        # espeak-ng's length varies by a few milliseconds from call to call.
        assert audio.duration == pytest.approx(expected.duration, abs=0.1)
        assert audio.rms > 0.01
        streamed = voxctl(voxctl_bin, url, "say", "--stream", "-v", "en-us", "-f", "pcm", text,
                          "-o", "-", "-q")
        assert streamed.returncode == 0, streamed.stderr
        assert len(streamed.stdout) / 2 / 22050 == pytest.approx(expected.duration, abs=0.1)
        unknown = voxctl(voxctl_bin, url, "say", "-v", "nobody", "Hi.", "-o", str(out))
        assert unknown.returncode == 4, unknown.stderr  # rejected: voice_not_found
        assert b"voice_not_found" in unknown.stderr
        mp3 = voxctl(voxctl_bin, url, "say", "Hi.", "-o", str(tmp_path / "x.mp3"))
        assert mp3.returncode == 2 and b"pcm or wav" in mp3.stderr, mp3.stderr
    finally:
        assert server.stop() == 0, server.log()
