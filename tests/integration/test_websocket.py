"""The WebSocket speech stream (GET /v1/audio/speech/stream) against the real binary, driven by
Debian's python3-websockets (its asyncio client): the protocol, sentence assembly from pieces,
audio that decodes, error events and close codes, limits, cancellation, the drain and API keys."""
import asyncio
import hashlib
import json
import signal
import time

import numpy as np
import pytest
import requests
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatusCode

from audio_check import decode
from conftest import VoxServer
from probes import metric
from security_support import wait_for, write_keys

PATH = "/v1/audio/speech/stream"
# Generous: the same tests run against sanitizer builds on a loaded two-core machine.
TIMEOUT = 60

LONG_SENTENCES = [f"Sentence number {i} is here to make the text long enough to stream."
                  for i in range(40)]


# --- a small client -----------------------------------------------------------------------------

def run(coroutine, timeout=2 * TIMEOUT):
    """Runs one test's conversation; a hung server fails the test instead of hanging it."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def connect(server, headers=None, **options):
    options.setdefault("max_size", None)      # audio messages may be large
    options.setdefault("ping_interval", None)  # the server's keep-alive is not under test here
    return websockets.connect(f"ws://127.0.0.1:{server.port}{PATH}", extra_headers=headers or {},
                              open_timeout=TIMEOUT, close_timeout=TIMEOUT, compression=None,
                              **options)


def encode(message):
    return message if isinstance(message, (str, bytes)) else json.dumps(message)


class Transcript:
    """What the server sent on one connection, in order: JSON events and binary audio."""

    def __init__(self):
        self.items = []  # ("event", dict) or ("audio", bytes)
        self.close_code = None
        self.close_reason = None

    def add(self, message):
        if isinstance(message, bytes):
            self.items.append(("audio", message))
        else:
            self.items.append(("event", json.loads(message)))

    @property
    def events(self):
        return [item for kind, item in self.items if kind == "event"]

    def of_type(self, kind):
        return [event for event in self.events if event["type"] == kind]

    @property
    def audio(self):
        return b"".join(item for kind, item in self.items if kind == "audio")

    @property
    def shape(self):
        """The message kinds in order, runs of audio collapsed: ["ready", "audio", ...]."""
        shape = []
        for kind, item in self.items:
            label = "audio" if kind == "audio" else item["type"]
            if not (label == "audio" and shape and shape[-1] == "audio"):
                shape.append(label)
        return shape

    def segments(self):
        """[(segment_done event, the audio bytes sent before it since the previous one)]."""
        pairs, pending = [], b""
        for kind, item in self.items:
            if kind == "audio":
                pending += item
            elif item["type"] == "segment_done":
                pairs.append((item, pending))
                pending = b""
        return pairs

    def trailing_audio(self):
        """Audio after the last segment_done: a sentence cut short."""
        tail = b""
        for kind, item in self.items:
            if kind == "audio":
                tail += item
            elif item["type"] == "segment_done":
                tail = b""
        return tail


async def receive(ws, transcript, until=None, timeout=TIMEOUT):
    """Reads into `transcript` until `until(transcript)` holds or the server closes."""
    while until is None or not until(transcript):
        try:
            transcript.add(await asyncio.wait_for(ws.recv(), timeout))
        except ConnectionClosed:
            await ws.wait_closed()
            transcript.close_code, transcript.close_reason = ws.close_code, ws.close_reason
            return transcript
    return transcript


async def send_all(ws, messages):
    """Sends the messages; stops quietly if the server has closed meanwhile."""
    try:
        for message in messages:
            await ws.send(encode(message))
    except ConnectionClosed:
        pass


async def converse(server, messages, headers=None):
    """Sends every message at once (the first is the config), then reads until the close."""
    async with connect(server, headers) as ws:
        await send_all(ws, messages)
        return await receive(ws, Transcript())


def session(server, config, *messages, headers=None):
    return run(converse(server, [config, *messages], headers))


def has_audio(transcript):
    return any(kind == "audio" for kind, _ in transcript.items)


def has_segment(index):
    return lambda t: len(t.of_type("segment_done")) > index


def pcm(data, sample_rate):
    samples = np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0
    return samples, len(samples) / sample_rate


def spoken(transcript):
    return [event["text"] for event in transcript.of_type("segment_done")]


# --- a whole session ----------------------------------------------------------------------------

def test_a_session_streams_each_sentence_then_done_and_a_normal_close(server):
    config_before = metric(server, "voxserve_websocket_messages_total",
                           'direction="in",type="config"')
    transcript = session(
        server, {"model": "tts-1", "voice": "alloy", "response_format": "pcm"},
        {"text": "Hello there. This is "}, {"text": "the WebSocket stream"},
        {"text": " speaking. Good"}, {"text": "bye!"}, {"close": True})

    assert transcript.close_code == 1000, transcript.items
    assert transcript.shape == ["ready"] + ["audio", "segment_done"] * 3 + ["done"]
    ready = transcript.events[0]
    assert ready["request_id"] and ready["response_format"] == "pcm"
    assert spoken(transcript) == ["Hello there.", "This is the WebSocket stream speaking.",
                                  "Goodbye!"]

    total_seconds = 0.0
    for index, (event, audio) in enumerate(transcript.segments()):
        assert event["index"] == index
        assert event["audio_bytes"] == len(audio) > 0
        assert event["sample_rate"] == 24000  # OpenAI's pcm: 24 kHz, 16-bit, mono
        samples, seconds = pcm(audio, event["sample_rate"])
        assert event["usage"]["input_characters"] == len(event["text"])
        assert event["usage"]["segments"] == 1
        assert event["usage"]["audio_seconds"] == pytest.approx(seconds, abs=0.01)
        # Speech, not silence, and as long as speech of that text can be (~0.05–0.2 s a char).
        assert float(np.sqrt(np.mean(np.square(samples)))) > 0.01
        assert 0.03 * len(event["text"]) < seconds < 0.25 * len(event["text"]), (event, seconds)
        timings = event["timings"]
        assert 0 <= timings["time_to_first_audio_seconds"] <= timings["total_seconds"]
        total_seconds += seconds

    done = transcript.of_type("done")[0]
    assert done["model"] == "espeak" and done["voice"]
    assert done["usage"]["segments"] == 3
    assert done["usage"]["input_characters"] == sum(len(text) for text in spoken(transcript))
    assert done["usage"]["audio_seconds"] == pytest.approx(total_seconds, abs=0.03)
    assert 0 < done["timings"]["time_to_first_audio_seconds"] <= done["timings"]["total_seconds"]
    assert decode(transcript.audio, "pcm").duration == pytest.approx(total_seconds)
    assert metric(server, "voxserve_websocket_messages_total",
                  'direction="in",type="config"') == config_before + 1


@pytest.mark.parametrize("fmt", ["pcm", "wav", "mp3", "opus", "flac", "aac"])
def test_every_response_format_decodes_sentence_by_sentence(server, fmt):
    transcript = session(server, {"voice": "nova", "response_format": fmt},
                         {"text": "The first sentence is here. And the second one follows.",
                          "close": True})
    assert transcript.close_code == 1000, transcript.items
    assert transcript.events[0] == {**transcript.events[0], "type": "ready",
                                    "response_format": fmt}
    segments = transcript.segments()
    assert [event["text"] for event, _ in segments] == ["The first sentence is here.",
                                                        "And the second one follows."]
    for event, audio in segments:
        # Each sentence is a stream of its own: it decodes alone (headers included).
        assert event["audio_bytes"] == len(audio)
        decoded = decode(audio, fmt)
        # Codec frames and priming pad the end; never by more than a fraction of a second.
        assert decoded.duration == pytest.approx(event["usage"]["audio_seconds"], abs=0.15)
        assert decoded.duration > 1.0
    if fmt == "wav":
        assert all(audio.startswith(b"RIFF") for _, audio in segments)


# --- text in pieces -----------------------------------------------------------------------------

ENGLISH = "Hello world. This is a test of streaming! Is it working? Yes, it is."
MANDARIN = "你好，世界。今天天气很好。我们去公园散步吧！"


def pieces(text, sizes):
    """`text` cut into pieces of the given sizes, cycling: cuts land mid-word."""
    out, start, i = [], 0, 0
    while start < len(text):
        out.append(text[start:start + sizes[i % len(sizes)]])
        start += sizes[i % len(sizes)]
        i += 1
    return out


@pytest.mark.parametrize("voice,text,sentences,sizes", [
    ("alloy", ENGLISH,
     ["Hello world.", "This is a test of streaming!", "Is it working?", "Yes, it is."], [1, 4, 2, 7]),
    ("alloy", ENGLISH,
     ["Hello world.", "This is a test of streaming!", "Is it working?", "Yes, it is."], [13, 3]),
    ("cmn", MANDARIN, ["你好，世界。", "今天天气很好。", "我们去公园散步吧！"], [1]),
    ("cmn", MANDARIN, ["你好，世界。", "今天天气很好。", "我们去公园散步吧！"], [2, 5, 3]),
], ids=["english-small", "english-mixed", "mandarin-by-char", "mandarin-mixed"])
def test_text_cut_anywhere_gives_the_same_sentences_and_audio(server, voice, text, sentences,
                                                              sizes):
    config = {"voice": voice, "response_format": "pcm"}
    cut = pieces(text, sizes)
    assert len(cut) > 5
    streamed = session(server, config, *({"text": piece} for piece in cut), {"close": True})
    whole = session(server, config, {"text": text, "close": True})
    for transcript in (streamed, whole):
        assert transcript.close_code == 1000, transcript.items
        assert spoken(transcript) == sentences
    # The same sentences, so the same speech: espeak-ng's length varies by a few milliseconds
    # from call to call, so lengths are compared, not bytes.
    for (cut_event, cut_audio), (whole_event, whole_audio) in zip(streamed.segments(),
                                                                  whole.segments()):
        assert len(cut_audio) > 0 and len(whole_audio) > 0
        assert pcm(cut_audio, 24000)[1] == pytest.approx(pcm(whole_audio, 24000)[1], abs=0.1)


def test_flush_speaks_an_unfinished_sentence(server):
    async def conversation():
        transcript = Transcript()
        async with connect(server) as ws:
            await send_all(ws, [{"voice": "alloy"}, {"text": "An unfinished thought"}])
            await receive(ws, transcript, until=lambda t: t.of_type("ready"))
            # No sentence end yet: nothing is spoken while the client thinks.
            with pytest.raises(asyncio.TimeoutError):
                await receive(ws, transcript, until=has_audio, timeout=1.0)
            await send_all(ws, [{"flush": True}])
            await receive(ws, transcript, until=has_segment(0))
            assert transcript.close_code is None
            await send_all(ws, [{"text": "And a finished one."}, {"close": True}])
            return await receive(ws, transcript)

    transcript = run(conversation())
    assert spoken(transcript) == ["An unfinished thought", "And a finished one."]
    assert transcript.shape[-1] == "done" and transcript.close_code == 1000


def test_a_slow_writer_hears_the_first_sentence_before_sending_the_second(server):
    first = "The first sentence arrives one word at a time."
    second = "The second sentence is sent only after the first was heard."

    async def conversation():
        transcript = Transcript()
        async with connect(server) as ws:
            await send_all(ws, [{"voice": "alloy", "response_format": "pcm"}])
            for word in first.split(" "):
                await send_all(ws, [{"text": word + " "}])
                await asyncio.sleep(0.05)
            # A sentence end is final once a letter follows it: the next sentence's first word.
            await send_all(ws, [{"text": second.split(" ")[0]}])
            await receive(ws, transcript, until=has_segment(0))
            assert transcript.close_code is None
            heard = list(transcript.items)
            await send_all(ws, [{"text": second[len(second.split(" ")[0]):]}, {"close": True}])
            return heard, await receive(ws, transcript)

    heard, transcript = run(conversation())
    assert [item["text"] for kind, item in heard
            if kind == "event" and item["type"] == "segment_done"] == [first]
    assert any(kind == "audio" for kind, _ in heard)
    assert spoken(transcript) == [first, second]
    assert transcript.close_code == 1000


# --- errors and close codes ---------------------------------------------------------------------

@pytest.mark.parametrize("messages,status,code,close", [
    (["{not json"], 400, "invalid_json", 1008),
    (['["a", "list"]'], 400, "invalid_json", 1008),
    ([{"voice": "alloy"}, "nope"], 400, "invalid_json", 1008),
    ([{"text": "Hello."}], 400, "missing_config", 1008),
    ([{"voice": "no-such-voice"}, {"text": "Hello."}], 404, "voice_not_found", 1008),
    ([{"voice": "alloy", "speed": 10}], 400, "invalid_speed", 1008),
    ([{"voice": "alloy", "timeout_ms": 0}], 400, "invalid_timeout", 1008),
    ([{"voice": "alloy", "instructions": "x" * 4097}], 413, "payload_too_large", 1009),
    ([{"voice": "alloy", "response_format": "ogg-vorbis"}], 400, "unsupported_response_format",
     1008),
    ([{"voice": "alloy"}, {"voice": "nova"}], 400, "repeated_config", 1008),
    ([{"voice": "alloy"}, {"speed": 1.5}], 400, "repeated_config", 1008),
    # Text, but not one speakable sentence in the whole stream: as REST answers the same text.
    ([{"voice": "alloy"}, {"text": "...", "flush": True}, {"text": "!!!", "close": True}], 400,
     "empty_input", 1008),
    ([{"voice": "alloy"}, {"text": 42}], 400, "invalid_type", 1008),
    ([{"voice": "alloy"}, {"say": "hi"}], 400, "empty_message", 1008),
    # Minutes of audio to speak after the close: the next message arrives long before the end.
    ([{"voice": "alloy", "speed": 0.25}, {"text": " ".join(LONG_SENTENCES[:4]), "close": True},
      {"text": "More."}], 400, "message_after_close", 1008),
    ([{"voice": "alloy"}, b"\x00\x01binary"], 400, "binary_message", 1003),
], ids=["bad-json", "not-an-object", "bad-json-after-config", "missing-config", "unknown-voice",
        "bad-speed", "bad-timeout", "long-instructions", "unknown-format", "repeated-config", "repeated-config-without-voice",
        "nothing-speakable", "text-not-string", "empty-message",
        "after-close", "binary"])
def test_errors_send_an_error_event_then_close(server, messages, status, code, close):
    transcript = run(converse(server, messages))
    errors = transcript.of_type("error")
    assert len(errors) == 1, transcript.items
    error = errors[0]
    assert error["status"] == status
    assert error["error"]["type"] == "invalid_request_error" and error["error"]["message"]
    assert error["error"]["code"] == code, error
    assert transcript.events[-1] is error  # nothing after the error
    assert transcript.close_code == close
    assert transcript.close_reason  # says why
    assert not has_audio(transcript) or code == "message_after_close"


def test_a_sentence_with_nothing_speakable_is_skipped_and_the_stream_goes_on(server):
    # The same rule as StreamingSynthesize (test_grpc_api.py): one service::SpeechSession.
    transcript = session(server, {"voice": "alloy"}, {"text": "...", "flush": True},
                         {"text": "Hello there. ", "flush": True}, {"text": "—", "flush": True},
                         {"text": "Goodbye.", "close": True})
    assert not transcript.of_type("error"), transcript.events
    assert spoken(transcript) == ["Hello there.", "Goodbye."]
    assert [e["index"] for e in transcript.of_type("segment_done")] == [0, 1]
    assert transcript.shape[-1] == "done"
    assert transcript.close_code == 1000


def test_a_message_over_the_limit_closes_with_1009(make_server):
    server = make_server("--ws-max-message-bytes", "1024")
    # Just under the limit (padding is whitespace, trimmed before synthesis).
    fits = {"text": "A sentence that fits." + " " * 960 + "And one more."}
    assert 1000 < len(json.dumps(fits).encode()) <= 1024
    too_big = {"text": "x" * 2000}

    async def conversation():
        transcript = Transcript()
        async with connect(server) as ws:
            await send_all(ws, [{"voice": "alloy"}, fits, {"flush": True}])
            await receive(ws, transcript, until=has_segment(0))
            await send_all(ws, [too_big])
            return await receive(ws, transcript)

    transcript = run(conversation())
    assert spoken(transcript)[0] == "A sentence that fits."
    assert transcript.close_code == 1009, transcript.items
    wait_for(lambda: metric(server, "voxserve_websocket_closed_total", 'code="1009"') == 1,
             message="the 1009 close to be counted")


def test_an_idle_connection_is_closed_with_1008(make_server):
    server = make_server("--ws-idle-timeout-ms", "1500")

    async def conversation():
        transcript = Transcript()
        async with connect(server) as ws:
            # Messages closer together than the timeout keep the connection open past it.
            await send_all(ws, [{"voice": "alloy"}])
            started = time.monotonic()
            for word in ["Still ", "talking ", "to ", "you, ", "slowly."]:
                await asyncio.sleep(0.4)
                await send_all(ws, [{"text": word}])
            await send_all(ws, [{"flush": True}])
            last_message_at = time.monotonic()
            kept_open = last_message_at - started
            await receive(ws, transcript, until=has_segment(0))
            assert transcript.close_code is None
            await receive(ws, transcript)
            return transcript, kept_open, time.monotonic() - last_message_at

    transcript, kept_open, silent = run(conversation())
    assert kept_open > 1.5
    assert spoken(transcript) == ["Still talking to you, slowly."]
    assert transcript.close_code == 1008 and "idle" in transcript.close_reason
    assert silent >= 1.45  # counted from the last message (the timer waits out the synthesis)
    assert transcript.shape[-1] == "segment_done"  # closed without a `done`: nothing was cut


def test_a_plain_get_is_426_upgrade_required(server):
    response = requests.get(server.url + PATH, timeout=10)
    assert response.status_code == 426
    assert response.headers["Upgrade"].lower() == "websocket"
    assert response.json()["error"]["code"] == "websocket_required"


# --- cancellation and the drain -----------------------------------------------------------------

@pytest.mark.parametrize("how", ["close-handshake", "connection-reset"])
def test_a_client_that_leaves_mid_stream_drops_its_queued_sentences(make_server, how):
    server = make_server()
    synthesized = 'model="espeak"'
    before = metric(server, "voxserve_segments_synthesized_total", synthesized)
    sentences = len(LONG_SENTENCES)

    async def conversation():
        transcript = Transcript()
        # An unbounded queue: the client keeps reading while its close handshake completes
        # (the server answers a close only after the audio frame it is writing).
        async with connect(server, max_queue=None) as ws:
            await send_all(ws, [{"voice": "alloy", "response_format": "pcm", "speed": 0.25},
                                {"text": " ".join(LONG_SENTENCES) + " And"}])
            await receive(ws, transcript, until=has_audio)
            if how == "close-handshake":
                await ws.close(code=1001, reason="the listener went away")
            else:
                ws.transport.abort()  # gone without a word: a reset connection
        return transcript

    transcript = run(conversation())
    assert has_audio(transcript)
    wait_for(lambda: metric(server, "voxserve_websocket_connections") == 0
             and metric(server, "voxserve_requests_in_flight") == 0, timeout=TIMEOUT,
             message="the connection and its work to end")
    # A sentence cancelled in the engine's hands is counted when the engine returns: wait until
    # the count holds still, then make sure nothing queued reaches the engine later.
    counts = [-1.0]

    def settled():
        counts.append(metric(server, "voxserve_segments_synthesized_total", synthesized) - before)
        return counts[-1] == counts[-2]

    wait_for(settled, timeout=TIMEOUT, interval=0.5, message="the engine to go quiet")
    done = counts[-1]
    time.sleep(1.0)
    assert metric(server, "voxserve_segments_synthesized_total", synthesized) - before == done
    # Without cancellation all 40 sentences would be spoken; the engine saw only the first few.
    assert 1 <= done < sentences / 2, done
    assert metric(server, "voxserve_websocket_closed_total", 'code="client"') == 1

    def request_line():
        return next((line for line in list(server.log_lines)
                     if " request " in line and "transport=websocket" in line), None)

    line = wait_for(request_line, message="the WebSocket request's log line")
    assert " status=499 " in line, line  # the client left with work unfinished
    assert ("close_code=1001" in line) == (how == "close-handshake"), line


def test_drain_finishes_the_running_sentence_then_closes_with_1001(make_server):
    server = make_server()
    # A long sentence at quarter speed is megabytes of PCM: it is still being synthesized
    # (paused until the client reads) when the signal arrives.
    long_sentence = ("This long sentence keeps the engine busy for a while, because it goes on "
                     "and on about nothing in particular, at a quarter of the usual speed, so "
                     "that the server is still speaking it when it is asked to stop.")
    text = " ".join([long_sentence] * 4) + " Then"

    async def conversation():
        transcript = Transcript()
        async with connect(server) as ws:
            await send_all(ws, [{"voice": "alloy", "response_format": "pcm", "speed": 0.25},
                                {"text": text}])
            await receive(ws, transcript, until=has_audio)
            server.process.send_signal(signal.SIGTERM)
            return await receive(ws, transcript)

    transcript = run(conversation())
    assert transcript.close_code == 1001, transcript.shape
    segments = transcript.segments()
    assert 1 <= len(segments) < 4, transcript.shape  # the running one finished, no new one began
    for event, audio in segments:
        assert event["audio_bytes"] == len(audio)
    assert transcript.trailing_audio() == b""  # no sentence was cut off mid-way
    error = transcript.of_type("error")[-1]  # the sentences not yet spoken were dropped
    assert error["status"] == 503 and error["error"]["code"] == "server_draining"
    assert not transcript.of_type("done")
    assert server.process.wait(TIMEOUT) == 0


def test_drain_closes_an_idle_stream_with_1001_at_once(make_server):
    server = make_server()

    async def conversation():
        async with connect(server) as ws:
            await send_all(ws, [{"voice": "alloy"}])
            transcript = await receive(ws, Transcript(), until=lambda t: t.of_type("ready"))
            server.process.send_signal(signal.SIGTERM)
            return await receive(ws, transcript)

    transcript = run(conversation())
    assert transcript.close_code == 1001
    assert not transcript.of_type("error")  # nothing was left unspoken
    assert server.process.wait(TIMEOUT) == 0


# --- API keys -----------------------------------------------------------------------------------

ALICE = "sk-alice-0123456789abcdef"
BOB = "sk-bob-0123456789abcdef"
CAROL = "sk-carol-0123456789abcdef"
DAVE = "sk-dave-0123456789abcdef"
KEYS = [
    {"name": "alice", "key": ALICE},
    {"name": "bob", "sha256": hashlib.sha256(BOB.encode()).hexdigest(), "models": ["kokoro"]},
    {"name": "carol", "key": CAROL, "rate_limit": {"requests_per_second": 0.2, "burst": 2}},
    {"name": "dave", "key": DAVE, "max_concurrent": 1},
]


@pytest.fixture(scope="module")
def keyed_server(voxserve_bin, tmp_path_factory):
    keys = write_keys(tmp_path_factory.mktemp("ws-auth") / "keys.yaml", KEYS)
    instance = VoxServer(voxserve_bin, ["--api-keys-file", keys]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def refused(server, headers):
    """The HTTP status (and headers) of an upgrade the server refuses."""
    async def attempt():
        async with connect(server, headers):
            pass

    with pytest.raises(InvalidStatusCode) as refusal:
        run(attempt())
    return refusal.value.status_code, refusal.value.headers


def speaks(transcript):
    return transcript.close_code == 1000 and transcript.of_type("done") and has_audio(transcript)


def admitted(server, headers):
    """Whether a whole session with these headers is served (False when the upgrade is refused)."""
    try:
        return speaks(session(server, *GREETING, headers=headers))
    except InvalidStatusCode:
        return False


GREETING = ({"voice": "alloy"}, {"text": "Hello.", "close": True})


def test_no_key_is_401(keyed_server):
    status, headers = refused(keyed_server, {})
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer sk-alice-0123456789abcdeX"},
                                     {"x-api-key": "sk-wrong"},
                                     {"Authorization": "Basic YWxpY2U6c2VjcmV0"}],
                         ids=["wrong-bearer", "wrong-x-api-key", "other-scheme"])
def test_wrong_key_is_401(keyed_server, headers):
    assert refused(keyed_server, headers)[0] == 401


@pytest.mark.parametrize("headers", [{"Authorization": f"Bearer {ALICE}"}, {"x-api-key": ALICE}],
                         ids=["bearer", "x-api-key"])
def test_right_key_is_served(keyed_server, headers):
    assert speaks(session(keyed_server, *GREETING, headers=headers))


def test_forbidden_model_is_403_and_nothing_is_spoken(keyed_server):
    transcript = session(keyed_server, *GREETING, headers={"x-api-key": BOB})
    # Refused at the config message, before `ready`: the key's models are known by then.
    assert not transcript.of_type("ready")
    error = transcript.of_type("error")[0]
    assert error["status"] == 403 and error["error"]["code"] == "model_not_allowed"
    assert error["error"]["type"] == "permission_error"
    assert transcript.close_code == 1008 and not has_audio(transcript)


def test_rate_limit_refuses_the_upgrade_with_429(keyed_server):
    headers = {"x-api-key": CAROL}
    assert speaks(session(keyed_server, *GREETING, headers=headers))
    assert speaks(session(keyed_server, *GREETING, headers=headers))
    status, response_headers = refused(keyed_server, headers)
    assert status == 429 and 1 <= int(response_headers["Retry-After"]) <= 5
    # Another key's bucket is its own.
    assert speaks(session(keyed_server, *GREETING, headers={"x-api-key": ALICE}))


def test_an_open_stream_holds_its_keys_concurrency_slot(keyed_server):
    headers = {"x-api-key": DAVE}

    async def conversation():
        async with connect(keyed_server, headers) as ws:
            await send_all(ws, [{"voice": "alloy"}])
            await receive(ws, Transcript(), until=lambda t: t.of_type("ready"))
            try:
                async with connect(keyed_server, headers):
                    pass
            except InvalidStatusCode as refusal:
                return refusal.status_code
            return None

    assert run(conversation()) == 429
    # Closed: the slot is free again.
    wait_for(lambda: admitted(keyed_server, headers), timeout=TIMEOUT,
             message="dave's slot to be released")


def test_a_refused_stream_config_counts_as_a_rejected_request(server):
    """An unparsable config, or one whose options fail, is a request refused before any work:
    counted in requests_rejected_total as REST counts its 400s (issue 10)."""
    def rejected():
        return metric(server, "voxserve_requests_rejected_total", 'model="",reason="invalid"')

    before = rejected()
    bad_json = session(server, "{not json")
    assert bad_json.close_code == 1008
    bad_speed = session(server, {"voice": "alloy", "speed": 9})
    assert bad_speed.close_code == 1008
    assert rejected() == before + 2
