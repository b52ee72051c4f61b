"""ElevenLabs' text-to-speech WebSockets (/elevenlabs/v1/text-to-speech/{voice_id}/stream-input
and multi-stream-input) against the real binary, driven by Debian's python3-websockets the way
ElevenLabs' docs describe: the " " first message, incremental text, flush, the "" end, audio with
alignment consistent with its length, isFinal; contexts interleaved on one socket, close_context
mid-utterance, close_socket; bad messages and API keys."""
import asyncio
import audioop
import base64
import json
import signal

import pytest
import websockets
from websockets.exceptions import InvalidStatusCode

from conftest import VoxServer
from security_support import write_keys

BASE = "/elevenlabs/v1/text-to-speech"
VOICE = "en-us"
TIMEOUT = 60  # generous: sanitizer builds on a loaded two-core machine
INIT = {"text": " ", "voice_settings": {"stability": 0.5, "similarity_boost": 0.8},
        "generation_config": {"chunk_length_schedule": [120, 160, 250, 290]}}
LONG = " ".join(f"Sentence number {i} is here to make this context long." for i in range(30))


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 3 * TIMEOUT))


def connect(server, route="stream-input", query="model_id=eleven_flash_v2_5&output_format=pcm_16000",
            headers=None, voice=VOICE):
    return websockets.connect(f"ws://127.0.0.1:{server.port}{BASE}/{voice}/{route}?{query}",
                              extra_headers=headers or {}, max_size=None, ping_interval=None,
                              open_timeout=TIMEOUT, close_timeout=TIMEOUT, compression=None)


async def receive(ws):
    return json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))


async def until_final(ws, context=None):
    """Messages up to and including {"isFinal": true} (for `context` when given)."""
    messages = []
    while True:
        message = await receive(ws)
        messages.append(message)
        if message.get("isFinal") and (context is None or message.get("contextId") == context):
            return messages


def audio_of(messages, context=None):
    return b"".join(base64.b64decode(m["audio"]) for m in messages
                    if m.get("audio") and (context is None or m.get("contextId") == context))


def check_alignment(messages, seconds_per_byte, context=None):
    """Each chunk's alignment starts where the last ended and spans that chunk's audio."""
    chunks = [m for m in messages if m.get("audio") and (context is None or m.get("contextId") == context)]
    assert chunks
    position_ms = 0.0
    text = ""
    for chunk in chunks:
        for key in ("alignment", "normalizedAlignment"):
            aligned = chunk[key]
            assert len(aligned["chars"]) == len(aligned["charStartTimesMs"]) == len(aligned["charDurationsMs"])
        aligned = chunk["alignment"]
        assert aligned["charStartTimesMs"][0] == pytest.approx(position_ms, abs=2)
        chunk_ms = len(base64.b64decode(chunk["audio"])) * seconds_per_byte * 1000
        end_ms = aligned["charStartTimesMs"][-1] + aligned["charDurationsMs"][-1]
        # The engine's audio seconds vs the resampled bytes: a sample or two apart.
        assert end_ms - position_ms == pytest.approx(chunk_ms, abs=3)
        assert all(d >= 0 for d in aligned["charDurationsMs"])
        position_ms = end_ms
        text += "".join(aligned["chars"])
    return text


def test_stream_input_incremental_text_alignment_and_is_final(server):
    async def talk():
        async with connect(server) as ws:
            await ws.send(json.dumps(INIT))
            for piece in ["Hello from ", "the telephone", " line. And a second ", "sentence here."]:
                await ws.send(json.dumps({"text": piece, "try_trigger_generation": True}))
            await ws.send(json.dumps({"text": ""}))
            messages = await until_final(ws)
            await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
            return messages, ws.close_code

    messages, code = run(talk())
    assert code == 1000
    assert messages[-1] == {"isFinal": True}
    assert all(m["isFinal"] is False for m in messages[:-1])
    assert len([m for m in messages if m.get("audio")]) == 2  # one per sentence
    text = check_alignment(messages, 1 / 32000)
    assert text == "Hello from the telephone line. And a second sentence here."
    assert len(audio_of(messages)) / 32000 > 1.0


@pytest.mark.parametrize("output_format,bytes_per_second", [("ulaw_8000", 8000), ("pcm_8000", 16000),
                                                             ("pcm_22050", 44100), ("pcm_44100", 88200)])
def test_formats_decode_to_the_aligned_duration(server, output_format, bytes_per_second):
    async def talk():
        async with connect(server, query=f"output_format={output_format}") as ws:
            await ws.send(json.dumps(INIT))
            await ws.send(json.dumps({"text": "Hello from the telephone line. "}))
            await ws.send(json.dumps({"text": ""}))
            return await until_final(ws)

    messages = run(talk())
    check_alignment(messages, 1 / bytes_per_second)
    audio = audio_of(messages)
    if output_format == "ulaw_8000":
        assert len(audioop.ulaw2lin(audio, 2)) == 2 * len(audio)  # G.711 by Python's decoder
    assert 1.0 < len(audio) / bytes_per_second < 4.0


def test_flush_speaks_an_unfinished_sentence_before_the_end(server):
    async def talk():
        async with connect(server) as ws:
            await ws.send(json.dumps(INIT))
            await ws.send(json.dumps({"text": "An unfinished thought", "flush": True}))
            first = await receive(ws)  # before the end of input was sent
            await ws.send(json.dumps({"text": " and another one"}))
            await ws.send(json.dumps({"text": ""}))
            return [first] + await until_final(ws)

    messages = run(talk())
    assert "".join(messages[0]["alignment"]["chars"]) == "An unfinished thought"
    assert "".join(messages[1]["alignment"]["chars"]) == " and another one"
    assert messages[-1] == {"isFinal": True}


def test_multi_stream_two_contexts_interleaved(server):
    async def talk():
        async with connect(server, route="multi-stream-input") as ws:
            await ws.send(json.dumps({**INIT, "context_id": "a"}))
            await ws.send(json.dumps({**INIT, "context_id": "b", "voice_settings": {"speed": 1.5}}))
            for a, b in [("The first ", "Other words "), ("context speaks.", "come from b.")]:
                await ws.send(json.dumps({"text": a, "context_id": "a"}))
                await ws.send(json.dumps({"text": b, "context_id": "b"}))
            for context in ("a", "b"):  # LiveKit's end of an utterance: flush, then close_context
                await ws.send(json.dumps({"text": "", "context_id": context, "flush": True}))
                await ws.send(json.dumps({"context_id": context, "close_context": True}))
            messages = []
            while sum(1 for m in messages if m.get("isFinal")) < 2:
                messages.append(await receive(ws))
            await ws.send(json.dumps({"close_socket": True}))
            await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
            return messages, ws.close_code

    messages, code = run(talk())
    assert code == 1000
    assert all(m["contextId"] in ("a", "b") for m in messages)
    assert check_alignment(messages, 1 / 32000, "a") == "The first context speaks."
    assert check_alignment(messages, 1 / 32000, "b") == "Other words come from b."
    # Each context's alignment is in its own audio time (both start at 0); b is spoken faster.
    assert len(audio_of(messages, "b")) < len(audio_of(messages, "a"))


@pytest.fixture(scope="module")
def tone_server(voxserve_bin, tmp_path_factory):
    """The tone engine makes each word one chunk in one 50 ms step: a sentence takes a known time
    to make, so a close mid-utterance lands while most of the text is still unspoken."""
    config = tmp_path_factory.mktemp("tone") / "tone.yaml"
    config.write_text("default_model: tone\n"
                      "models:\n"
                      "  - id: tone\n"
                      "    engine: tone\n"
                      "    options: {step_ms: 50, chunk_ms: 200}\n"
                      "    scheduling:\n"
                      "      max_active: 4\n")
    instance = VoxServer(voxserve_bin, ["--config", str(config)]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def test_close_context_mid_utterance_stops_that_context_only(tone_server):
    async def talk():
        async with connect(tone_server, route="multi-stream-input", voice="a4",
                           query="model_id=tone&output_format=pcm_16000") as ws:
            await ws.send(json.dumps({**INIT, "context_id": "long"}))
            await ws.send(json.dumps({**INIT, "context_id": "next"}))
            await ws.send(json.dumps({"text": LONG, "context_id": "long"}))
            await ws.send(json.dumps({"text": "The other context goes on.", "context_id": "next"}))
            messages = [await receive(ws)]
            while not any(m.get("contextId") == "long" and m.get("audio") for m in messages):
                messages.append(await receive(ws))
            await ws.send(json.dumps({"context_id": "long", "close_context": True}))  # barge-in
            await ws.send(json.dumps({"text": " And it ends.", "context_id": "next", "flush": True}))
            await ws.send(json.dumps({"context_id": "next", "close_context": True}))
            while sum(1 for m in messages if m.get("isFinal")) < 2:
                messages.append(await receive(ws))
            return messages

    messages = run(talk())
    long_chunks = [m for m in messages if m.get("contextId") == "long" and m.get("audio")]
    # 30 sentences were sent (0.5 s each to make); at most the one running when close_context
    # came follows the first.
    assert 1 <= len(long_chunks) <= 2, len(long_chunks)
    finals = [m["contextId"] for m in messages if m.get("isFinal")]
    assert sorted(finals) == ["long", "next"]
    last_long = max(i for i, m in enumerate(messages) if m.get("contextId") == "long")
    assert messages[last_long].get("isFinal")  # nothing of "long" after its isFinal
    assert check_alignment(messages, 1 / 32000, "next") == "The other context goes on. And it ends."


@pytest.mark.parametrize("first,code", [("not json", "invalid_json"),
                                        (json.dumps({"voice_settings": {}}), "missing_field"),
                                        (json.dumps({"text": 5}), "invalid_type")])
def test_bad_first_message_gets_an_error_and_1008(server, first, code):
    async def talk():
        async with connect(server) as ws:
            await ws.send(first)
            error = await receive(ws)
            await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
            return error, ws.close_code

    error, close_code = run(talk())
    assert error["error"] == code and error["message"]
    assert error["code"] == close_code == 1008


def test_unknown_voice_and_output_format_are_refused(server):
    async def talk(voice, query):
        async with connect(server, voice=voice, query=query) as ws:
            await ws.send(json.dumps(INIT))
            error = await receive(ws)
            await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
            return error

    assert run(talk("no-such-voice", "output_format=pcm_16000"))["error"] == "voice_not_found"
    assert run(talk(VOICE, "output_format=wav_44100"))["error"] == "invalid_output_format"


def test_multi_stream_requires_context_id(server):
    async def talk():
        async with connect(server, route="multi-stream-input") as ws:
            await ws.send(json.dumps({"text": "Hello."}))
            error = await receive(ws)
            await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
            return error, ws.close_code

    error, code = run(talk())
    assert error["error"] == "missing_field" and error["param"] == "context_id" and code == 1008


KEY = "sk-eleven-ws-0123456789abcdef"


@pytest.fixture(scope="module")
def keyed_server(voxserve_bin, tmp_path_factory):
    keys = write_keys(tmp_path_factory.mktemp("wsauth") / "keys.yaml", [{"name": "el", "key": KEY}])
    instance = VoxServer(voxserve_bin, ["--api-keys-file", keys]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


async def speak_with_keys(server, headers, first_message_keys):
    """The first message may carry the key (xi_api_key, or "xi-api-key" as the SDK's serializer
    writes it); it is needed only when the header has none that is valid."""
    async with connect(server, headers=headers) as ws:
        await ws.send(json.dumps({**INIT, **first_message_keys}))
        await ws.send(json.dumps({"text": "Hi there."}))
        await ws.send(json.dumps({"text": ""}))
        messages = []
        while True:
            message = await receive(ws)
            messages.append(message)
            if message.get("isFinal") or message.get("error"):
                break
        await asyncio.wait_for(ws.wait_closed(), TIMEOUT)
        return messages, ws.close_code


@pytest.mark.parametrize("headers,first", [
    ({"xi-api-key": KEY}, {}),
    ({}, {"xi_api_key": KEY}),
    ({}, {"xi-api-key": KEY}),
    ({}, {"authorization": f"Bearer {KEY}"}),
    ({"xi-api-key": "sk-wrong-0123456789abcdef"}, {"xi_api_key": KEY}),
])
def test_the_right_key_in_the_header_or_first_message_is_served(keyed_server, headers, first):
    messages, code = run(speak_with_keys(keyed_server, headers, first))
    assert code == 1000, messages
    assert audio_of(messages) and messages[-1] == {"isFinal": True}


@pytest.mark.parametrize("headers,first", [
    ({}, {}),
    ({"xi-api-key": "sk-wrong-0123456789abcdef"}, {}),
    ({}, {"xi_api_key": "sk-wrong-0123456789abcdef"}),
])
def test_a_wrong_or_missing_key_gets_invalid_api_key_and_1008(keyed_server, headers, first):
    messages, code = run(speak_with_keys(keyed_server, headers, first))
    assert len(messages) == 1 and not audio_of(messages)
    assert messages[0]["error"] == "invalid_api_key" and messages[0]["code"] == 1008 == code


def test_voxserves_own_stream_still_refuses_a_keyless_upgrade(keyed_server):
    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{keyed_server.port}/v1/audio/speech/stream",
                                      open_timeout=TIMEOUT):
            pass

    with pytest.raises(InvalidStatusCode) as refused:
        run(talk())
    assert refused.value.status_code == 401


def test_drain_lets_the_running_sentence_finish_then_closes_with_1001(voxserve_bin, tmp_path):
    config = tmp_path / "tone.yaml"
    config.write_text("default_model: tone\n"
                      "models:\n"
                      "  - id: tone\n"
                      "    engine: tone\n"
                      "    options: {step_ms: 50, chunk_ms: 200}\n")
    server = VoxServer(voxserve_bin, ["--config", str(config)]).start()
    try:
        async def talk():
            async with connect(server, route="multi-stream-input", voice="a4",
                               query="model_id=tone&output_format=pcm_16000") as ws:
                await ws.send(json.dumps({**INIT, "context_id": "c"}))
                await ws.send(json.dumps({"text": LONG, "context_id": "c"}))
                messages = [await receive(ws)]
                server.process.send_signal(signal.SIGTERM)
                try:
                    while True:
                        messages.append(await receive(ws))
                except websockets.exceptions.ConnectionClosed:
                    pass
                return messages, ws.close_code

        messages, code = run(talk())
        assert code == 1001
        chunks = [m for m in messages if m.get("audio")]
        assert 1 <= len(chunks) <= 3  # of 30 sentences: the running one finished, none began
        check_alignment(messages, 1 / 32000, "c")  # every chunk whole, none cut off
        assert server.process.wait(TIMEOUT) == 0
    finally:
        server.kill()


def test_stream_input_enable_ssml_parsing_speaks_the_document_at_the_end(server):
    """SSML (docs/ssml.md): held until the end, spoken as one document, aligned as spoken."""
    async def talk(query, pieces):
        async with connect(server, query=query) as ws:
            await ws.send(json.dumps(INIT))
            for piece in pieces:
                await ws.send(json.dumps({"text": piece, "try_trigger_generation": True}))
            await ws.send(json.dumps({"text": ""}))
            return await until_final(ws)

    query = "model_id=eleven_flash_v2_5&output_format=pcm_16000"
    ssml = run(talk(query + "&enable_ssml_parsing=true", ["Hello. <break ", 'time="1s"/> There.']))
    plain = run(talk(query, ["Hello. There."]))
    assert check_alignment(ssml, 1 / 32000) == "Hello. There."  # the markup is not aligned
    assert (len(audio_of(ssml)) - len(audio_of(plain))) / 32000 == pytest.approx(1.0, abs=0.02)
