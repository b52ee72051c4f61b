"""The service's limits on every transport (issue 29 items 1 and 4): a request's text
(limits.max_input_chars), an incremental stream's text (limits.max_stream_input_chars) and the
audio one request or stream may make (limits.max_audio_seconds for a whole file,
limits.max_stream_audio_seconds for a stream). REST, SSE, gRPC (unary, server stream, bidi), the
WebSocket stream and ElevenLabs' REST routes and stream-input must give the same answer, because
the service applies them, once.

The tone engine makes every word one 0.5 s chunk, so durations are exact: with a 2 s whole-file
bound and a 3 s stream bound, 8 words are too long for a file and the 7th word ends a stream."""
import asyncio
import base64
import json

import grpc
import pytest
import requests
import websockets
from websockets.exceptions import ConnectionClosed

from conftest import VoxServer
from grpc_support import channel, stubs, trailer

TIMEOUT = 60  # generous: sanitizer builds on a loaded two-core machine
MAX_INPUT = 40
MAX_STREAM_INPUT = 60
OVER_INPUT = "x" * (MAX_INPUT + 1)
EIGHT_WORDS = "a b c d e f g h."  # 4 s: past the whole-file bound (2 s)
TEN_WORDS = "a b c d e f g h i j."  # 5 s: past the stream bound (3 s) at the 7th word
# 1 s each: the 4th passes 3 s. Capitals: ICU ends no sentence before a lowercase word.
FOUR_SENTENCES = ["One two. ", "Three four. ", "Five six. ", "Seven eight."]
PCM_RATE = 24000
EL = "/elevenlabs/v1/text-to-speech/a4"


@pytest.fixture(scope="module")
def server(voxserve_bin, tmp_path_factory):
    config = tmp_path_factory.mktemp("limits") / "limits.yaml"
    config.write_text("default_model: tone\n"
                      "limits:\n"
                      f"  max_input_chars: {MAX_INPUT}\n"
                      f"  max_stream_input_chars: {MAX_STREAM_INPUT}\n"
                      "  max_audio_seconds: 2\n"
                      "  max_stream_audio_seconds: 3\n"
                      "models:\n"
                      "  - id: tone\n"
                      "    engine: tone\n"
                      "    default_voice: a4\n"
                      "    options: {step_ms: 1, chunk_ms: 500, sample_rate: 24000}\n")
    instance = VoxServer(voxserve_bin, ["--config", str(config)]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def speech(server, text, **fields):
    return requests.post(server.url + "/v1/audio/speech",
                         json={"model": "tts-1", "voice": "a4", "input": text,
                               "response_format": "pcm", **fields}, timeout=TIMEOUT, stream=True)


def el_tts(server, text, route=""):
    return requests.post(f"{server.url}{EL}{route}", params={"output_format": "pcm_24000"},
                         json={"text": text}, timeout=TIMEOUT, stream=True)


def seconds(pcm_bytes):
    return len(pcm_bytes) / 2 / PCM_RATE


def read_cut_stream(response):
    """The bytes of a chunked response, and whether it ended without its last chunk (cut)."""
    body = b""
    try:
        for chunk in response.iter_content(chunk_size=None):
            body += chunk
    except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError):
        return body, True
    return body, False


def grpc_request(text, **options):
    pb = stubs().pb
    return pb.SynthesizeRequest(text=text, options=pb.SynthesisOptions(
        voice="a4", format=pb.AUDIO_FORMAT_PCM, **options))


def grpc_failure(call):
    with pytest.raises(grpc.RpcError) as raised:
        result = call()
        if hasattr(result, "__iter__"):
            for _ in result:
                pass
    return raised.value


def bidi(server, pieces):
    """StreamingSynthesize with `pieces` of text: (audio seconds received, sentences done, error)."""
    pb = stubs().pb

    def script():
        yield pb.StreamingSynthesizeRequest(config=pb.SynthesisOptions(
            voice="a4", format=pb.AUDIO_FORMAT_PCM))
        for piece in pieces:
            yield pb.StreamingSynthesizeRequest(text=piece)
        yield pb.StreamingSynthesizeRequest(end=True)

    audio, done = b"", 0
    with channel(server) as ch:
        try:
            for event in stubs().rpc.TextToSpeechStub(ch).StreamingSynthesize(script(),
                                                                               timeout=TIMEOUT):
                if event.HasField("audio"):
                    audio += event.audio.audio
                elif event.HasField("sentence_done"):
                    done += 1
        except grpc.RpcError as error:
            return seconds(audio), done, error
    return seconds(audio), done, None


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 3 * TIMEOUT))


async def ws_session(server, pieces):
    """/v1/audio/speech/stream: (events, audio seconds, close code)."""
    events, audio = [], b""
    async with websockets.connect(f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream",
                                  max_size=None, ping_interval=None, open_timeout=TIMEOUT,
                                  close_timeout=TIMEOUT, compression=None) as ws:
        try:
            await ws.send(json.dumps({"voice": "a4", "response_format": "pcm"}))
            for piece in pieces:
                await ws.send(json.dumps({"text": piece}))
            await ws.send(json.dumps({"close": True}))
        except ConnectionClosed:
            pass
        try:
            while True:
                message = await asyncio.wait_for(ws.recv(), TIMEOUT)
                if isinstance(message, bytes):
                    audio += message
                else:
                    events.append(json.loads(message))
        except ConnectionClosed:
            pass
        await ws.wait_closed()
        return events, seconds(audio), ws.close_code


async def el_stream_input(server, pieces):
    """ElevenLabs' stream-input: (messages, audio seconds, close code)."""
    messages, audio = [], b""
    async with websockets.connect(f"ws://127.0.0.1:{server.port}{EL}/stream-input"
                                  "?output_format=pcm_24000", max_size=None, ping_interval=None,
                                  open_timeout=TIMEOUT, close_timeout=TIMEOUT,
                                  compression=None) as ws:
        try:
            await ws.send(json.dumps({"text": " "}))
            for piece in pieces:
                await ws.send(json.dumps({"text": piece}))
            await ws.send(json.dumps({"text": ""}))
        except ConnectionClosed:
            pass
        try:
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                messages.append(message)
                if message.get("audio"):
                    audio += base64.b64decode(message["audio"])
        except ConnectionClosed:
            pass
        await ws.wait_closed()
        return messages, seconds(audio), ws.close_code


# --- the text of one request: limits.max_input_chars ---------------------------------------------

@pytest.mark.parametrize("fields", [{}, {"stream_format": "audio"}, {"stream_format": "sse"}],
                         ids=["file", "chunked", "sse"])
def test_rest_refuses_text_over_max_input_chars_with_413(server, fields):
    assert speech(server, "x" * MAX_INPUT, **fields).status_code == 200
    response = speech(server, OVER_INPUT, **fields)
    assert response.status_code == 413, response.text
    assert response.json()["error"]["code"] == "payload_too_large"


@pytest.mark.parametrize("route", ["", "/stream", "/with-timestamps", "/stream/with-timestamps"])
def test_elevenlabs_routes_refuse_text_over_max_input_chars_as_v1_does(server, route):
    assert el_tts(server, "x" * MAX_INPUT, route).status_code == 200
    response = el_tts(server, OVER_INPUT, route)
    assert response.status_code == 413, response.text
    detail = response.json()["detail"]
    assert detail["code"] == "payload_too_large" and detail["param"] == "text"
    assert str(MAX_INPUT) in detail["message"]


def test_elevenlabs_refuses_990_kb_of_text_at_once(server):
    response = el_tts(server, "word " * 198_000)
    assert response.status_code == 413, response.text[:300]
    assert len(response.content) < 2000  # and the text is not echoed back


@pytest.mark.parametrize("call", ["Synthesize", "SynthesizeStream"])
def test_grpc_refuses_text_over_max_input_chars(server, call):
    with channel(server) as ch:
        method = getattr(stubs().rpc.TextToSpeechStub(ch), call)
        error = grpc_failure(lambda: method(grpc_request(OVER_INPUT), timeout=TIMEOUT))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert trailer(error, "voxserve-error-code") == "payload_too_large"


# --- the text of one incremental stream: limits.max_stream_input_chars ----------------------------

def stream_pieces(total):
    """Pieces of text totalling `total` characters: words of 10 (0.5 s each), then the rest."""
    pieces = ["abcdefghi "] * (total // 10)
    return pieces + (["y" * (total % 10)] if total % 10 else [])


WITHIN = MAX_STREAM_INPUT - 10  # 5 words: 2.5 s, within the audio bound too


def test_grpc_bidi_refuses_a_stream_past_max_stream_input_chars(server):
    _, _, error = bidi(server, stream_pieces(WITHIN))
    assert error is None
    _, _, error = bidi(server, stream_pieces(MAX_STREAM_INPUT + 1))
    assert error is not None and error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert trailer(error, "voxserve-error-code") == "payload_too_large"


def test_websocket_refuses_a_stream_past_max_stream_input_chars(server):
    events, _, code = run(ws_session(server, stream_pieces(WITHIN)))
    assert code == 1000, events
    events, _, code = run(ws_session(server, stream_pieces(MAX_STREAM_INPUT + 1)))
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[0]["status"] == 413, events
    assert errors[0]["error"]["code"] == "payload_too_large"
    assert code == 1009


def test_elevenlabs_stream_input_refuses_a_stream_past_max_stream_input_chars(server):
    messages, _, code = run(el_stream_input(server, stream_pieces(WITHIN)))
    assert code == 1000 and messages[-1] == {"isFinal": True}, messages
    messages, _, code = run(el_stream_input(server, stream_pieces(MAX_STREAM_INPUT + 1)))
    errors = [m for m in messages if "error" in m]
    assert errors and errors[0]["error"] == "payload_too_large", messages
    assert code == 1009


# --- the audio: limits.max_audio_seconds (whole file) and max_stream_audio_seconds ---------------

def test_a_whole_file_past_max_audio_seconds_is_413_output_too_long(server):
    assert speech(server, "a b c.", stream=False).status_code == 200  # 1.5 s
    response = speech(server, EIGHT_WORDS, stream=False)
    assert response.status_code == 413, response.text
    error = response.json()["error"]
    assert error["code"] == "output_too_long" and "limits.max_audio_seconds" in error["message"]


def test_a_chunked_stream_is_cut_at_max_stream_audio_seconds(server):
    # 2.5 s: more than a whole file may hold, less than a stream may.
    response = speech(server, "a b c d e.", stream_format="audio")
    body, cut = read_cut_stream(response)
    assert not cut and seconds(body) == pytest.approx(2.5, abs=0.02)
    # Repeated: the cut once dropped the chunks still queued behind the socket's write, now and
    # then (the last 0.5-1 s of audio within the bound).
    for _ in range(10):
        response = speech(server, TEN_WORDS, stream_format="audio")
        assert response.status_code == 200  # the audio within the bound was sent as it came
        body, cut = read_cut_stream(response)
        assert cut, "a stream past its bound must not end as if complete"
        assert seconds(body) == pytest.approx(3.0, abs=0.01)


def test_an_sse_stream_past_its_bound_ends_with_an_error_event(server):
    response = speech(server, TEN_WORDS, stream_format="sse")
    assert response.status_code == 200
    events = [json.loads(line[len("data: "):]) for line in response.text.splitlines()
              if line.startswith("data: ")]
    assert events[-1]["type"] == "error" and events[-1]["error"]["code"] == "output_too_long"
    assert not any(e.get("type") == "speech.audio.done" for e in events)


def test_grpc_bounds_a_whole_file_and_cuts_a_stream(server):
    with channel(server) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)
        error = grpc_failure(lambda: stub.Synthesize(grpc_request(EIGHT_WORDS), timeout=TIMEOUT))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert trailer(error, "voxserve-error-code") == "output_too_long"
        audio = b""
        with pytest.raises(grpc.RpcError) as raised:
            for event in stub.SynthesizeStream(grpc_request(TEN_WORDS), timeout=TIMEOUT):
                if event.HasField("audio"):
                    audio += event.audio.audio
        assert trailer(raised.value, "voxserve-error-code") == "output_too_long"
        assert seconds(audio) == pytest.approx(3.0, abs=0.01)


def test_grpc_bidi_bounds_all_sentences_of_a_stream_together(server):
    audio_seconds, done, error = bidi(server, FOUR_SENTENCES)
    assert error is not None and trailer(error, "voxserve-error-code") == "output_too_long"
    assert done == 3 and audio_seconds == pytest.approx(3.0, abs=0.01)


def test_websocket_bounds_all_sentences_of_a_stream_together(server):
    events, audio_seconds, code = run(ws_session(server, FOUR_SENTENCES))
    assert [e["type"] for e in events] == ["ready"] + ["segment_done"] * 3 + ["error"], events
    assert events[-1]["status"] == 413 and events[-1]["error"]["code"] == "output_too_long"
    assert code == 1008
    assert audio_seconds == pytest.approx(3.0, abs=0.01)


def test_elevenlabs_whole_file_routes_are_bounded_and_streams_cut(server):
    for route in ("", "/with-timestamps"):
        response = el_tts(server, EIGHT_WORDS, route)
        assert response.status_code == 413, response.text
        assert response.json()["detail"]["code"] == "output_too_long"
    body, cut = read_cut_stream(el_tts(server, TEN_WORDS, "/stream"))
    assert cut and seconds(body) == pytest.approx(3.0, abs=0.01)


def test_elevenlabs_stream_input_bounds_the_whole_stream(server):
    messages, audio_seconds, code = run(el_stream_input(server, FOUR_SENTENCES))
    assert [m.get("error") for m in messages if "error" in m] == ["output_too_long"], messages
    assert not any(m.get("isFinal") for m in messages)
    assert code == 1008
    assert audio_seconds == pytest.approx(3.0, abs=0.01)
