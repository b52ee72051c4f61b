"""Word and character timings through the real binary (docs/timings.md): espeak-ng's exact word
events on every transport (REST JSON and SSE, /v1/synthesize, WebSocket, gRPC)."""
import asyncio
import base64
import json

import numpy as np
import requests
import websockets

from audio_check import decode
from grpc_support import channel, stubs

TWO_SENTENCES = "The quick brown fox jumps over the lazy dog. A second sentence follows it here."
FIRST_WORDS = 9  # "The quick brown fox jumps over the lazy dog"
ALL_WORDS = FIRST_WORDS + 6


def speech(server, route="/v1/audio/speech", **fields):
    body = {"model": "tts-1", "input": TWO_SENTENCES, "voice": "alloy", "response_format": "wav",
            "timestamps": "word"}
    body.update(fields)
    return requests.post(server.url + route, json=body, timeout=60)


def rms(samples, rate, start, end):
    part = samples[int(start * rate):int(end * rate)]
    return float(np.sqrt(np.mean(np.square(part)))) if len(part) else 0.0


def captioned(server, **fields):
    response = speech(server, **fields)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    audio = decode(base64.b64decode(body["audio"]), body["audio_format"])
    return body, audio


def test_espeak_words_are_exact_increasing_inside_the_audio_and_one_per_word(server):
    body, audio = captioned(server)
    assert body["timestamps_kind"] == "exact"
    words = body["timestamps"]
    assert [w["word"] for w in words] == TWO_SENTENCES.replace(".", "").split()
    assert len(words) == ALL_WORDS
    starts = [w["start_time"] for w in words]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    for word in words:
        assert 0 <= word["start_time"] < word["end_time"] <= audio.duration + 0.001, word
    assert abs(body["audio_seconds"] - audio.duration) < 0.01


def test_words_sound_and_the_gap_between_sentences_is_silent(server):
    body, audio = captioned(server)
    words = body["timestamps"]
    for word in words:
        level = rms(audio.samples, audio.sample_rate, word["start_time"], word["end_time"])
        assert level > 0.02, (word, level)
    last_of_first, first_of_second = words[FIRST_WORDS - 1], words[FIRST_WORDS]
    gap = (last_of_first["end_time"], first_of_second["start_time"])
    assert gap[1] - gap[0] > 0.0, gap
    assert rms(audio.samples, audio.sample_rate, *gap) < 0.01, gap


def test_later_sentences_are_shifted_by_the_audio_before_them(server):
    whole, _ = captioned(server)
    second, _ = captioned(server, input="A second sentence follows it here.")
    first_alone, first_audio = captioned(server, input="The quick brown fox jumps over the lazy dog.")
    offset = first_audio.duration
    assert offset > 2.0  # the shift below is far larger than espeak's own jitter
    for shifted, alone in zip(whole["timestamps"][FIRST_WORDS:], second["timestamps"]):
        assert shifted["word"] == alone["word"]
        assert shifted["start_time"] >= offset - 0.001  # times are rounded to the ms
        # espeak-ng's word times move by a few ms from one call to the next (measured: 5 ms).
        assert abs(shifted["start_time"] - (alone["start_time"] + offset)) < 0.02
    for early, alone in zip(whole["timestamps"][:FIRST_WORDS], first_alone["timestamps"]):
        assert early["word"] == alone["word"]
        assert abs(early["start_time"] - alone["start_time"]) < 0.02


def test_speed_and_output_rate_keep_the_words_on_the_audio(server):
    normal, _ = captioned(server)
    slow, slow_audio = captioned(server, speed=0.5, response_format="pcm", sample_rate=8000)
    slow_seconds = len(slow_audio.samples) / 8000  # decode() takes pcm to be 24 kHz
    assert len(slow["timestamps"]) == ALL_WORDS
    assert slow["timestamps"][-1]["end_time"] <= slow_seconds + 0.001
    assert abs(slow["audio_seconds"] - slow_seconds) < 0.01
    assert slow["timestamps"][-1]["start_time"] > 1.5 * normal["timestamps"][-1]["start_time"]
    assert slow["sample_rate"] == 8000


def test_char_timestamps_cover_every_character_in_order(server):
    body, audio = captioned(server, timestamps="char")
    chars = body["timestamps"]
    assert "".join(c["char"] for c in chars) == TWO_SENTENCES.replace(". A", ".A")
    starts = [c["start_time"] for c in chars]
    assert starts == sorted(starts)
    assert chars[-1]["end_time"] <= audio.duration + 0.001


def test_without_timestamps_the_file_is_returned_as_before(server):
    response = speech(server, timestamps=None)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "audio/wav"


def test_bad_timestamps_values_are_clear_errors(server):
    response = speech(server, timestamps="syllable")
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "timestamps"
    response = speech(server, stream_format="audio")
    assert response.status_code == 400
    assert "sse" in response.json()["error"]["message"]


def sse_events(response):
    for line in response.iter_lines():
        if line.startswith(b"data: "):
            yield json.loads(line[len(b"data: "):])


def test_sse_sends_each_sentences_words_after_its_audio(server):
    response = speech(server, stream_format="sse", response_format="pcm")
    assert response.status_code == 200
    events = list(sse_events(response))
    kinds = [e["type"] for e in events]
    stamps = [e for e in events if e["type"] == "speech.audio.timestamps"]
    assert len(stamps) == 2
    assert kinds.index("speech.audio.delta") < kinds.index("speech.audio.timestamps")
    assert kinds[-1] == "speech.audio.done"
    first_stamp = kinds.index("speech.audio.timestamps")
    audio_before = b"".join(base64.b64decode(e["audio"]) for e in events[:first_stamp]
                            if e["type"] == "speech.audio.delta")
    first_seconds = len(audio_before) / 2 / 24000
    assert [e["segment"] for e in stamps] == [0, 1]
    assert all(e["timestamps_kind"] == "exact" for e in stamps)
    assert len(stamps[0]["timestamps"]) == FIRST_WORDS
    assert stamps[0]["timestamps"][-1]["end_time"] <= first_seconds + 0.002
    assert stamps[1]["timestamps"][0]["start_time"] >= first_seconds - 0.002


def test_synthesize_route_takes_timestamps_and_streams_them_as_sse(server):
    body = {"text": TWO_SENTENCES, "timestamps": "word"}
    whole = requests.post(server.url + "/v1/synthesize", json=body, timeout=60)
    assert whole.status_code == 200, whole.text
    assert len(whole.json()["timestamps"]) == ALL_WORDS
    streamed = requests.post(server.url + "/v1/synthesize", json=dict(body, stream=True),
                             timeout=60)
    assert streamed.headers["Content-Type"] == "text/event-stream"
    stamps = [e for e in sse_events(streamed) if e["type"] == "speech.audio.timestamps"]
    assert sum(len(e["timestamps"]) for e in stamps) == ALL_WORDS


def test_websocket_segment_done_carries_the_sentences_words_in_stream_time(server):
    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream",
                                      max_size=None, ping_interval=None,
                                      compression=None) as ws:
            await ws.send(json.dumps({"voice": "alloy", "timestamps": "word"}))
            await ws.send(json.dumps({"text": TWO_SENTENCES, "close": True}))
            events, audio = [], b""
            async for message in ws:
                if isinstance(message, bytes):
                    audio += message
                else:
                    events.append((len(audio), json.loads(message)))
            return events, audio

    events, audio = asyncio.run(asyncio.wait_for(talk(), 120))
    done = [(at, e) for at, e in events if e["type"] == "segment_done"]
    assert len(done) == 2
    (first_at, first), (_, second) = done
    assert first["timestamps_kind"] == "exact"
    assert [w["word"] for w in first["timestamps"]] == TWO_SENTENCES.split(".")[0].split()
    first_seconds = first_at / 2 / 24000  # pcm, 24 kHz, 16-bit
    assert first["timestamps"][-1]["end_time"] <= first_seconds + 0.002
    assert second["timestamps"][0]["start_time"] >= first_seconds - 0.002
    assert second["timestamps"][-1]["end_time"] <= len(audio) / 2 / 24000 + 0.002


def test_grpc_returns_segment_timestamps_on_unary_and_stream_calls(server):
    pb = stubs().pb
    with channel(server) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)
        options = pb.SynthesisOptions(timestamps=pb.TIMESTAMPS_MODE_WORD)
        response = stub.Synthesize(pb.SynthesizeRequest(text=TWO_SENTENCES, options=options),
                                   timeout=60)
        assert len(response.timestamps) == 2
        assert response.timestamps[0].kind == pb.TIMINGS_KIND_EXACT
        words = [e.text for s in response.timestamps for e in s.entries]
        assert words == TWO_SENTENCES.replace(".", "").split()
        assert response.timestamps[1].start_seconds == response.timestamps[0].end_seconds
        kinds = [r.WhichOneof("event") for r in stub.SynthesizeStream(
            pb.SynthesizeRequest(text=TWO_SENTENCES, options=options), timeout=60)]
        assert kinds.count("timestamps") == 2
        assert kinds.index("audio") < kinds.index("timestamps")
        assert kinds[-1] == "done"


def test_worker_processes_carry_the_timings(make_server, tmp_path):
    config = tmp_path / "workers.yaml"
    config.write_text("models:\n  - id: espeak\n    engine: espeak\n"
                      "    scheduling:\n      isolation: process\n      instances: 1\n")
    workers = make_server("--config", str(config))
    body, _ = captioned(workers)
    assert body["timestamps_kind"] == "exact"
    assert [w["word"] for w in body["timestamps"]] == TWO_SENTENCES.replace(".", "").split()
