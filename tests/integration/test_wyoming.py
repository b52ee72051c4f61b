"""The Wyoming listener (docs/wyoming.md) against the real binary, driven by the reference client
Home Assistant uses (the `wyoming` package, $VOXSERVE_WYOMING_REF): describe, synthesize (the
audio of REST), streaming text cut anywhere, concurrent clients, errors as error events,
cancellation when a client leaves, malformed frames, the connection gates and the drain. Piper
voices and a cloned CosyVoice voice: test_onnx_wyoming.py."""
import asyncio
import json
import signal
import subprocess
import time

import pytest
import requests

from probes import (in_flight, metric, peak_rss_mb, send_until_held_back,
                    small_sanitizer_quarantine, stingy_socket, wait_for)
from wyoming_support import (TIMEOUT, Speech, assert_same_speech, client, raw_connection,
                             read_to_end, read_until, reference, rest_pcm, run,
                             start_wyoming_server, synthesize)

TEXT = "Hello there. This is voxserve speaking over Wyoming. Goodbye!"
LONG_SENTENCES = [f"Sentence number {i} is here to make the text long enough to stream."
                  for i in range(40)]


@pytest.fixture(scope="module")
def server(voxserve_bin):
    reference()  # skips the module without the reference client
    instance = start_wyoming_server(voxserve_bin)
    yield instance
    assert instance.stop() == 0, instance.log()


# --- describe ------------------------------------------------------------------------------------

def test_describe_lists_every_voice_in_one_streaming_tts_program(server):
    wy = reference()

    async def conversation():
        async with client(server) as connection:
            await connection.write_event(wy.info.Describe().event())
            return await read_until(connection, {"info"})

    info = wy.info.Info.from_event(run(conversation()))
    assert len(info.tts) == 1 and not info.asr and not info.wake
    program = info.tts[0]
    assert program.name == "voxserve" and program.installed
    assert program.supports_synthesize_streaming is True
    assert program.version, "voxserve's version"
    voices = {v.name: v for v in program.voices}
    listed = [v for v in requests.get(server.url + "/v1/voices", timeout=10).json()["data"]
              if not v.get("alias_of")]
    assert sorted(voices) == sorted(v["id"] for v in listed), "every voice, aliases left out"
    en_us = voices["en-us"]
    assert en_us.languages == ["en_US"]
    assert en_us.installed and en_us.attribution.name == "eSpeak NG"
    assert en_us.attribution.url.startswith("https://")
    assert en_us.description and en_us.speakers is None
    assert voices["cmn"].languages == ["cmn"]


def test_ping_gets_pong_and_unknown_events_are_ignored(server):
    async def conversation():
        async with client(server) as connection:
            wy = reference()
            await connection.write_event(wy.event.Event(type="transcribe", data={"x": 1}))
            await connection.write_event(wy.event.Event(type="ping", data={"text": "hi"}))
            return await read_until(connection, {"pong"})

    pong = run(conversation())
    assert pong.type == "pong" and pong.data["text"] == "hi"


# --- synthesize ------------------------------------------------------------------------------

def test_synthesize_returns_the_audio_rest_gives_for_the_same_text(server):
    speech = run(synthesize(server, TEXT, name="en-us"))
    assert speech.types[0] == "audio-start" and speech.types[-1] == "audio-stop", speech.types
    assert "error" not in speech.types
    start = speech.events[0]
    assert start.data["width"] == 2 and start.data["channels"] == 1
    rate, rest = rest_pcm(server, TEXT, "en-us")
    assert speech.rate == rate == 22050, "espeak-ng's own rate: nothing resampled"
    assert_same_speech(speech.pcm, rest, rate, sentences=3)
    chunks = [e for e in speech.events if e.type == "audio-chunk"]
    assert len(chunks) > 3 and all(len(c.payload) <= 2048 for c in chunks)
    assert all(c.data["rate"] == rate for c in chunks)
    # Timestamps count milliseconds of audio from the start.
    assert chunks[1].data["timestamp"] == 1024 * 1000 // rate
    assert speech.events[-1].data["timestamp"] == len(speech.pcm) // 2 * 1000 // rate


def test_voices_by_language_alias_and_default(server):
    by_language = run(synthesize(server, "Guten Tag.", language="de_DE"))
    assert by_language.types[-1] == "audio-stop", by_language.types
    assert_same_speech(by_language.pcm, rest_pcm(server, "Guten Tag.", "de")[1], 22050)
    alias = run(synthesize(server, "Hello.", name="alloy"))  # an OpenAI name: not listed, served
    assert_same_speech(alias.pcm, rest_pcm(server, "Hello.", "alloy")[1], 22050)
    default = run(synthesize(server, "Hello."))
    assert_same_speech(default.pcm, rest_pcm(server, "Hello.", "default")[1], 22050)


@pytest.mark.parametrize("voice, text, code", [
    ({"name": "nobody"}, "Hello.", "voice_not_found"),
    ({"language": "xx_XX"}, "Hello.", "voice_not_found"),
    ({"name": "en-us", "speaker": "bob"}, "Hello.", "speaker_not_found"),
    ({"name": "en-us"}, " ... ", "empty_input"),
])
def test_a_refused_synthesize_is_an_error_event_then_the_connection_closes(server, voice, text,
                                                                          code):
    wy = reference()

    async def conversation():
        async with client(server) as connection:
            await connection.write_event(
                wy.tts.Synthesize(text=text, voice=wy.tts.SynthesizeVoice(**voice)).event())
            error = await read_until(connection, {"error", "audio-start"})
            after = await asyncio.wait_for(connection.read_event(), TIMEOUT)
            return error, after

    error, after = run(conversation())
    assert error.type == "error", error
    parsed = wy.error.Error.from_event(error)
    assert parsed.code == code and parsed.text, parsed
    assert after is None, "the connection closes after an error, as the reference server's does"
    assert metric(server, "voxserve_wyoming_events_total", 'direction="out",type="error"') > 0


def test_concurrent_clients_each_get_their_own_audio(server):
    texts = [f"Client number {i} says hello. And then it says goodbye." for i in range(6)]

    async def everyone():
        return await asyncio.gather(*(synthesize(server, text, name="en-gb") for text in texts))

    results = run(everyone())
    for text, speech in zip(texts, results):
        assert speech.types[-1] == "audio-stop", speech.types
        assert_same_speech(speech.pcm, rest_pcm(server, text, "en-gb")[1], 22050, sentences=2)


def test_a_connection_serves_requests_one_after_another(server):
    wy = reference()

    async def conversation():
        answers = []
        async with client(server) as connection:
            for text in ("First request.", "Second request."):
                events = []
                await connection.write_event(
                    wy.tts.Synthesize(text=text, voice=wy.tts.SynthesizeVoice(name="en-us")).event())
                await read_until(connection, {"audio-stop", "error"}, events)
                answers.append(Speech(events))
        return answers

    first, second = run(conversation())
    assert_same_speech(first.pcm, rest_pcm(server, "First request.", "en-us")[1], 22050)
    assert_same_speech(second.pcm, rest_pcm(server, "Second request.", "en-us")[1], 22050)


def test_the_wyoming_metrics_pass_promtool(server):
    run(synthesize(server, "Counted.", name="en-us"))
    text = requests.get(server.url + "/metrics", timeout=10).text
    for family in ("voxserve_wyoming_connections", "voxserve_wyoming_events_total",
                   "voxserve_wyoming_requests_total", "voxserve_wyoming_connections_refused_total"):
        assert f"# TYPE {family} " in text, family
    assert metric(server, "voxserve_wyoming_requests_total", 'kind="synthesize",code="ok"') >= 1
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr


# --- streaming -------------------------------------------------------------------------------

def test_streaming_text_cut_mid_word_gives_audio_per_sentence_before_the_text_ends(server):
    wy = reference()
    sentences = ["Hello there.", "This is the second sentence.", "And a third one!"]
    first_pieces = ["Hel", "lo the", "re. Th"]  # the first sentence is complete after these
    rest_pieces = ["is is the sec", "ond sentence. And a th", "ird one!"]
    assert "".join(first_pieces + rest_pieces) == " ".join(sentences)

    async def conversation():
        events = []
        async with client(server) as connection:
            start = wy.tts.SynthesizeStart(voice=wy.tts.SynthesizeVoice(name="en-us"))
            await connection.write_event(start.event())
            for piece in first_pieces:
                await connection.write_event(wy.tts.SynthesizeChunk(text=piece).event())
            # The first sentence's audio comes while the text is still being written.
            first = await read_until(connection, {"audio-chunk", "error"}, events)
            stop_sent_after_audio = first is not None and first.type == "audio-chunk"
            for piece in rest_pieces:
                await connection.write_event(wy.tts.SynthesizeChunk(text=piece).event())
            # Home Assistant's copy of the whole text for servers that do not stream: ignored.
            await connection.write_event(wy.tts.Synthesize(text=" ".join(sentences)).event())
            await connection.write_event(wy.tts.SynthesizeStop().event())
            await read_until(connection, {"synthesize-stopped", "error"}, events)
        return stop_sent_after_audio, Speech(events)

    audio_before_stop, speech = run(conversation())
    assert audio_before_stop, speech.types
    assert speech.types[-1] == "synthesize-stopped" and "error" not in speech.types, speech.types
    per_sentence = speech.sentences()
    assert len(per_sentence) == len(sentences), speech.types
    for sentence, pcm in zip(sentences, per_sentence):
        assert_same_speech(pcm, rest_pcm(server, sentence, "en-us")[1], 22050)
    assert speech.rate == 22050


def test_a_stream_without_text_just_stops_and_one_with_nothing_speakable_is_an_error(server):
    wy = reference()

    async def conversation(pieces):
        events = []
        async with client(server) as connection:
            await connection.write_event(wy.tts.SynthesizeStart().event())
            for piece in pieces:
                await connection.write_event(wy.tts.SynthesizeChunk(text=piece).event())
            await connection.write_event(wy.tts.SynthesizeStop().event())
            await read_until(connection, {"synthesize-stopped", "error"}, events)
        return [e.type for e in events], events[-1]

    types, _ = run(conversation([]))
    assert types == ["synthesize-stopped"]
    types, error = run(conversation(["...", " — "]))
    assert types == ["error"] and error.data["code"] == "empty_input", error


def test_a_chunk_outside_a_stream_is_an_error(server):
    wy = reference()

    async def conversation():
        async with client(server) as connection:
            await connection.write_event(wy.tts.SynthesizeChunk(text="Hello.").event())
            return await read_until(connection, {"error"})

    error = run(conversation())
    assert error.data["code"] == "invalid_event"


# --- cancellation ----------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["close", "reset"])
@pytest.mark.parametrize("kind", ["synthesize", "stream"])
def test_a_client_that_leaves_mid_request_cancels_its_work(voxserve_bin, how, kind):
    wy = reference()
    server = start_wyoming_server(voxserve_bin)
    try:
        synthesized = 'model="espeak"'
        before = metric(server, "voxserve_segments_synthesized_total", synthesized)
        text = " ".join(LONG_SENTENCES)

        async def conversation():
            connection = client(server)
            await connection.connect()
            voice = wy.tts.SynthesizeVoice(name="en-us")
            if kind == "synthesize":
                await connection.write_event(wy.tts.Synthesize(text=text, voice=voice).event())
            else:
                await connection.write_event(wy.tts.SynthesizeStart(voice=voice).event())
                await connection.write_event(wy.tts.SynthesizeChunk(text=text).event())
            assert (await read_until(connection, {"audio-chunk"})) is not None
            if how == "reset":
                connection._writer.transport.abort()
            else:
                await connection.disconnect()

        run(conversation())
        wait_for(lambda: metric(server, "voxserve_wyoming_connections") == 0
                 and in_flight(server) == 0, timeout=TIMEOUT)
        assert in_flight(server) == 0
        label = f'kind="{kind}",code="cancelled"'
        assert wait_for(lambda: metric(server, "voxserve_wyoming_requests_total", label) == 1,
                        timeout=TIMEOUT), server.log()
        # Without cancellation all 40 sentences would be spoken: wait until the engine is quiet.
        counts = [-1.0]

        def settled():
            counts.append(metric(server, "voxserve_segments_synthesized_total", synthesized)
                          - before)
            return counts[-1] == counts[-2]

        assert wait_for(settled, timeout=TIMEOUT, interval=0.5)
        assert 1 <= counts[-1] < len(LONG_SENTENCES) / 2, counts[-1]

        def request_line():
            return next((line for line in list(server.log_lines)
                         if " request " in line and "transport=wyoming" in line), None)

        assert wait_for(lambda: request_line() is not None, timeout=TIMEOUT)
        assert " status=499 " in request_line(), request_line()
    finally:
        assert server.stop() == 0, server.log()


# --- malformed frames ------------------------------------------------------------------------

@pytest.mark.parametrize("name, frame", [
    ("bad_json", b"{this is not json\n"),
    ("huge_data_length", b'{"type": "synthesize", "data_length": 1000000000000}\n'),
    ("huge_payload_length", b'{"type": "synthesize", "payload_length": 1000000000}\n'),
    ("header_past_the_bound", b'{"type": "synthesize", "data": {"text": "' + b"a" * 70000),
])
def test_a_malformed_frame_gets_an_error_and_a_close_and_others_are_still_served(server, name,
                                                                                 frame):
    invalid = 'direction="in",type="invalid"'
    before = metric(server, "voxserve_wyoming_events_total", invalid)
    sock = raw_connection(server)
    try:
        sock.sendall(frame)
        received = read_to_end(sock)  # the server closes: this returns
    finally:
        sock.close()
    header, _, body = received.partition(b"\n")
    event = json.loads(header)
    assert event["type"] == "error", received
    data = json.loads(body[:event["data_length"]])
    assert data["code"] == "bad_frame" and "malformed Wyoming frame" in data["text"], data
    assert metric(server, "voxserve_wyoming_events_total", invalid) == before + 1
    # Nothing broke for anyone else.
    speech = run(synthesize(server, "Still here.", name="en-us"))
    assert speech.types[-1] == "audio-stop"


def test_events_cut_into_single_bytes_are_read_as_whole_events(server):
    wy = reference()
    frame = b""
    for event in (wy.info.Describe().event(),
                  wy.tts.Synthesize(text="Byte by byte.",
                                    voice=wy.tts.SynthesizeVoice(name="en-us")).event()):
        body = json.dumps(event.data).encode() if event.data else b""
        header = {"type": event.type, **({"data_length": len(body)} if body else {})}
        frame += json.dumps(header).encode() + b"\n" + body
    sock = raw_connection(server)
    try:
        for i in range(len(frame)):
            sock.sendall(frame[i:i + 1])
        received = b""
        while b'"audio-stop"' not in received:
            chunk = sock.recv(1 << 16)
            assert chunk, "closed before audio-stop"
            received += chunk
    finally:
        sock.close()
    assert received.startswith(b'{"type":"info"')


# --- the connection gates --------------------------------------------------------------------

def test_clients_outside_the_allow_list_are_closed_without_a_word(voxserve_bin):
    reference()
    server = start_wyoming_server(voxserve_bin, "--wyoming-allow", "10.0.0.0/8,fd00::/8")
    try:
        sock = raw_connection(server)
        sock.sendall(b'{"type": "describe"}\n')
        assert read_to_end(sock) == b""
        sock.close()
        assert metric(server, "voxserve_wyoming_connections_refused_total",
                      'reason="not_allowed"') == 1
    finally:
        assert server.stop() == 0, server.log()
    allowed = start_wyoming_server(voxserve_bin, "--wyoming-allow", "127.0.0.1")
    try:
        assert run(synthesize(allowed, "Allowed.", name="en-us")).types[-1] == "audio-stop"
    finally:
        assert allowed.stop() == 0, allowed.log()


def test_a_client_that_writes_and_never_reads_holds_bounded_memory_and_is_cut_off(voxserve_bin):
    # Issue 39: 40,000 describes (~800 KB) sent and no reply read grew the server by 23 MB/s, each
    # ~23 KB info reply queued, and the write timeout never cut the client off. Now the
    # connection stops reading while 1 MiB waits to be written, and the stalled write ends it.
    reference()
    server = start_wyoming_server(voxserve_bin, "--write-timeout-ms", "5000",
                                  env=small_sanitizer_quarantine())
    try:
        before = peak_rss_mb(server.process.pid)
        sock = stingy_socket(server.wyoming_port)
        sent = 1000 * send_until_held_back(sock, b'{"type":"describe"}\n' * 1000, 40)
        assert wait_for(lambda: metric(server, "voxserve_wyoming_connections") == 0, timeout=30)
        grown = peak_rss_mb(server.process.pid) - before
        assert grown < 30, f"{sent} describes unread grew the server's peak RSS by {grown:.0f} MB"
        sock.close()
        assert run(synthesize(server, "Still here.", name="en-us")).types[-1] == "audio-stop"
    finally:
        assert server.stop() == 0, server.log()


def test_a_connection_over_the_limit_gets_an_error_and_a_close(voxserve_bin):
    reference()
    server = start_wyoming_server(voxserve_bin, "--wyoming-max-connections", "1")
    try:
        held = raw_connection(server)
        assert wait_for(lambda: metric(server, "voxserve_wyoming_connections") == 1)
        refused = raw_connection(server)
        received = read_to_end(refused)
        refused.close()
        assert b'"connection_limit"' in received, received
        assert metric(server, "voxserve_wyoming_connections_refused_total", 'reason="limit"') == 1
        held.close()
        assert wait_for(lambda: metric(server, "voxserve_wyoming_connections") == 0)
        assert run(synthesize(server, "My turn.", name="en-us")).types[-1] == "audio-stop"
    finally:
        assert server.stop() == 0, server.log()


def test_an_idle_connection_is_closed_with_an_error_and_a_busy_one_is_not(voxserve_bin):
    reference()
    server = start_wyoming_server(voxserve_bin, "--wyoming-idle-timeout-ms", "200")
    try:
        async def idle():
            async with client(server) as connection:
                return await read_until(connection, {"error"})

        error = run(idle())
        assert error is not None and error.data["code"] == "idle_timeout", error
        # Two minutes of speech take longer than the timeout to make, with no event from the
        # client meanwhile: work under way is not idleness.
        started = time.monotonic()
        speech = run(synthesize(server, " ".join(LONG_SENTENCES), name="en-us"))
        assert time.monotonic() - started > 0.2, "the request must outlast the idle timeout"
        assert speech.types[-1] == "audio-stop", speech.types[-3:]
    finally:
        assert server.stop() == 0, server.log()


def test_a_full_queue_is_an_error_event_with_code_queue_full(voxserve_bin, tmp_path):
    reference()
    config = tmp_path / "voxserve.yaml"
    config.write_text("models:\n  - id: espeak\n    scheduling: {queue_capacity: 2}\n")
    server = start_wyoming_server(voxserve_bin, "--config", str(config))
    try:
        text = " ".join(LONG_SENTENCES[:10])

        async def everyone():
            return await asyncio.gather(*(synthesize(server, text, name="en-us")
                                          for _ in range(40)))

        results = run(everyone(), timeout=4 * TIMEOUT)
        ends = [speech.events[-1] for speech in results]
        codes = [e.data.get("code") for e in ends if e.type == "error"]
        assert codes and set(codes) == {"queue_full"}, codes
        assert any(e.type == "audio-stop" for e in ends)
        assert metric(server, "voxserve_wyoming_requests_total",
                      'kind="synthesize",code="resource_exhausted"') == len(codes)
    finally:
        assert server.stop() == 0, server.log()


# --- the drain -------------------------------------------------------------------------------

def test_sigterm_lets_a_running_synthesize_finish_and_closes_idle_connections(voxserve_bin):
    wy = reference()
    server = start_wyoming_server(voxserve_bin)
    text = " ".join(LONG_SENTENCES[:8])

    async def conversation():
        idle = client(server)
        await idle.connect()
        events = []
        async with client(server) as busy:
            await busy.write_event(wy.tts.Synthesize(
                text=text, voice=wy.tts.SynthesizeVoice(name="en-us")).event())
            await read_until(busy, {"audio-chunk"}, events)
            server.process.send_signal(signal.SIGTERM)
            await read_until(busy, {"audio-stop", "error"}, events)
            after = await asyncio.wait_for(busy.read_event(), TIMEOUT)
        idle_end = await asyncio.wait_for(idle.read_event(), TIMEOUT)
        return Speech(events), after, idle_end

    speech, after, idle_end = run(conversation())
    assert speech.types[-1] == "audio-stop", speech.types  # the whole answer, not cut off
    assert after is None and idle_end is None, "both connections closed by the drain"
    assert server.process.wait(TIMEOUT) == 0, server.log()
    assert len(speech.pcm) > 0


def test_sigterm_ends_an_open_stream_after_its_running_sentence(voxserve_bin):
    wy = reference()
    server = start_wyoming_server(voxserve_bin)

    async def conversation():
        events = []
        async with client(server) as connection:
            await connection.write_event(
                wy.tts.SynthesizeStart(voice=wy.tts.SynthesizeVoice(name="en-us")).event())
            await connection.write_event(
                wy.tts.SynthesizeChunk(text=" ".join(LONG_SENTENCES[:12])).event())
            await read_until(connection, {"audio-chunk"}, events)
            server.process.send_signal(signal.SIGTERM)
            await read_until(connection, {"error", "synthesize-stopped"}, events)
            after = await asyncio.wait_for(connection.read_event(), TIMEOUT)
        return Speech(events[:-1]), events[-1], after

    speech, end, after = run(conversation())
    assert end.type == "error" and end.data["code"] == "server_draining", end
    assert after is None, "closed after the error"
    spoken = speech.sentences()  # every run has its audio-stop: no sentence was cut off
    assert 1 <= len(spoken) < 12, speech.types
    assert server.process.wait(TIMEOUT) == 0, server.log()


def test_the_listener_is_off_unless_enabled(make_server):
    plain = make_server()  # ready: past the point where the listener would have been logged
    assert not any("Wyoming listening" in line for line in plain.log_lines)
    assert "voxserve_wyoming_" not in requests.get(plain.url + "/metrics", timeout=10).text
