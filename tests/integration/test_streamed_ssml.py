"""SSML cut anywhere by the stream (issue 39): an LLM's token stream splits tags across its first
pieces ("<spe", "ak><prosody ra", ...). Every streaming transport decides SSML-or-text only once
the first characters can say, so the split document speaks exactly as the whole one, and not its
markup (4.9 s of "less than speak greater than ..." before the fix, against 0.3 s). Checked
through our WebSocket, ElevenLabs' stream-input (which opens with " "), gRPC bidi and Wyoming's
synthesize chunks, each against the same document sent in one piece."""
import asyncio
import base64
import json

import pytest
import websockets

from grpc_support import channel, stubs
from websocket_support import speak_over_websocket
from wyoming_support import read_until, reference, start_wyoming_server
from wyoming_support import client as wyoming_client
from wyoming_support import run as run_wyoming

SPLIT = ["<spe", "ak><prosody ra", 'te="x-fast">Hel', "lo</prosody></speak>"]
WHOLE = ["".join(SPLIT)]
TIMEOUT = 60


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 2 * TIMEOUT))


async def ours(server, pieces):
    """/v1/audio/speech/stream: the PCM of the pieces, then close."""
    audio, end = await speak_over_websocket(server, {"voice": "en-us", "response_format": "pcm"},
                                            pieces)
    assert end is not None and end["type"] == "done", end
    return audio


async def elevenlabs(server, pieces):
    """stream-input as ElevenLabs' docs drive it: " " first, the pieces, "" to end."""
    url = (f"ws://127.0.0.1:{server.port}/elevenlabs/v1/text-to-speech/en-us/stream-input"
           "?output_format=pcm_16000")
    audio = b""
    async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
        await ws.send(json.dumps({"text": " "}))
        for piece in pieces:
            await ws.send(json.dumps({"text": piece}))
        await ws.send(json.dumps({"text": ""}))
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
            assert "error" not in message, message
            if message.get("audio"):
                audio += base64.b64decode(message["audio"])
            if message.get("isFinal"):
                return audio


def grpc_bidi(server, pieces):
    pb = stubs().pb

    def script():
        yield pb.StreamingSynthesizeRequest(config=pb.SynthesisOptions(voice="en-us"))
        for piece in pieces:
            yield pb.StreamingSynthesizeRequest(text=piece)
        yield pb.StreamingSynthesizeRequest(end=True)

    with channel(server) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)
        return b"".join(r.audio.audio for r in stub.StreamingSynthesize(script(), timeout=TIMEOUT)
                        if r.WhichOneof("event") == "audio")


async def wyoming(server, pieces):
    wy = reference()
    events = []
    async with wyoming_client(server) as connection:
        await connection.write_event(
            wy.tts.SynthesizeStart(voice=wy.tts.SynthesizeVoice(name="en-us")).event())
        for piece in pieces:
            await connection.write_event(wy.tts.SynthesizeChunk(text=piece).event())
        await connection.write_event(wy.tts.SynthesizeStop().event())
        end = await read_until(connection, {"synthesize-stopped", "error"}, events)
        assert end is not None and end.type == "synthesize-stopped", [e.type for e in events]
    return b"".join(e.payload or b"" for e in events if e.type == "audio-chunk")


def check(split, whole, markup):
    """The split document speaks as the whole one, far shorter than its markup read aloud."""
    assert whole, "no audio for the whole document"
    assert len(split) == len(whole) and split == whole
    assert len(markup) > 3 * len(whole), (len(markup), len(whole))


# Words of the markup, as it was read aloud before the fix (a lower bound on that audio).
MARKUP = ["speak, prosody rate ", "equals x fast, hello, prosody, speak."]


def test_our_websocket(server):
    check(run(ours(server, SPLIT)), run(ours(server, WHOLE)), run(ours(server, MARKUP)))


def test_elevenlabs_stream_input(server):
    check(run(elevenlabs(server, SPLIT)), run(elevenlabs(server, WHOLE)),
          run(elevenlabs(server, MARKUP)))


def test_grpc_bidi(server):
    check(grpc_bidi(server, SPLIT), grpc_bidi(server, WHOLE), grpc_bidi(server, MARKUP))


@pytest.fixture(scope="module")
def wyoming_server(voxserve_bin):
    reference()  # skips without the reference client
    server = start_wyoming_server(voxserve_bin)
    yield server
    assert server.stop() == 0, server.log()


def test_wyoming_chunks(wyoming_server):
    check(run_wyoming(wyoming(wyoming_server, SPLIT)), run_wyoming(wyoming(wyoming_server, WHOLE)),
          run_wyoming(wyoming(wyoming_server, MARKUP)))
