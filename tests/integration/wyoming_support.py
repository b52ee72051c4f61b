"""The Wyoming reference client (the `wyoming` package 1.9.0 that Home Assistant uses, imported
unmodified from $VOXSERVE_WYOMING_REF; skipped without it) and what the Wyoming tests share: a
server with the listener on, conversations driven through AsyncTcpClient, and raw sockets."""
import asyncio
import os
import socket
import sys

import pytest
import requests

from conftest import VoxServer

# Generous: the same tests run against sanitizer builds on a loaded two-core machine.
TIMEOUT = 60


def reference():
    """The reference package's modules, or a skip when VOXSERVE_WYOMING_REF is unset."""
    path = os.environ.get("VOXSERVE_WYOMING_REF")
    if not path:
        pytest.skip("VOXSERVE_WYOMING_REF is unset: no Wyoming reference client (the `wyoming` "
                    "package, ../shared/oracles/wyoming) to test with")
    path = os.path.abspath(path)
    if not os.path.exists(os.path.join(path, "wyoming", "client.py")):
        raise RuntimeError(f"VOXSERVE_WYOMING_REF={path}: no wyoming/client.py there")
    if path not in sys.path:
        sys.path.insert(0, path)
    import wyoming.audio
    import wyoming.client
    import wyoming.error
    import wyoming.event
    import wyoming.info
    import wyoming.tts
    return wyoming


def start_wyoming_server(voxserve_bin, *args, env=None):
    """A voxserve with the Wyoming listener on a free port (server.wyoming_port)."""
    server = VoxServer(voxserve_bin, ["--wyoming-enabled", "true", "--wyoming-port", "0", *args],
                       env=env)
    server.start()
    server.wyoming_port  # noqa: B018 (waits for the listener's log line)
    return server


def run(coroutine, timeout=2 * TIMEOUT):
    """Runs one conversation; a hung server fails the test instead of hanging it."""
    return asyncio.run(asyncio.wait_for(coroutine, timeout))


def client(server):
    return reference().client.AsyncTcpClient("127.0.0.1", server.wyoming_port)


async def read_until(connection, types, events=None):
    """Reads events into `events` until one of `types` (returned) or the connection ends (None)."""
    events = [] if events is None else events
    while True:
        event = await asyncio.wait_for(connection.read_event(), TIMEOUT)
        if event is None:
            return None
        events.append(event)
        if event.type in types:
            return event


class Speech:
    """The audio events of one answer, in order."""

    def __init__(self, events):
        self.events = events
        self.types = [e.type for e in events]

    @property
    def pcm(self):
        return b"".join(e.payload or b"" for e in self.events if e.type == "audio-chunk")

    @property
    def rate(self):
        starts = [e.data["rate"] for e in self.events if e.type == "audio-start"]
        assert starts, self.types
        assert len(set(starts)) == 1, starts
        return starts[0]

    def sentences(self):
        """The PCM of each audio-start ... audio-stop run."""
        runs, current = [], None
        for event in self.events:
            if event.type == "audio-start":
                assert current is None, "audio-start inside a run"
                current = b""
            elif event.type == "audio-chunk":
                assert current is not None, "audio-chunk outside a run"
                current += event.payload or b""
            elif event.type == "audio-stop":
                assert current is not None, "audio-stop outside a run"
                runs.append(current)
                current = None
        assert current is None, "a run without its audio-stop"
        return runs


async def synthesize(server, text, **voice):
    """One `synthesize` on a new connection: its events up to audio-stop or error."""
    wy = reference()
    events = []
    async with client(server) as connection:
        voice_arg = wy.tts.SynthesizeVoice(**voice) if voice else None
        await connection.write_event(wy.tts.Synthesize(text=text, voice=voice_arg).event())
        await read_until(connection, {"audio-stop", "error"}, events)
    return Speech(events)


def rest_pcm(server, text, voice, model="tts-1"):
    """The same text over REST as 16-bit PCM at the voice's own rate (WAV's data)."""
    response = requests.post(server.url + "/v1/audio/speech", timeout=TIMEOUT, json={
        "model": model, "input": text, "voice": voice, "response_format": "wav"})
    assert response.status_code == 200, response.text
    data = response.content
    assert data[:4] == b"RIFF" and data[36:40] == b"data", "the canonical 44-byte header"
    return int.from_bytes(data[24:28], "little"), data[44:]


def assert_same_speech(pcm, rest, rate, sentences=1):
    """espeak-ng's length varies by a few milliseconds from call to call (test_websocket.py
    compares lengths too): the same text spoken twice is as long within 50 ms a sentence."""
    assert len(pcm) > 0 and len(pcm) % 2 == 0
    difference = abs(len(pcm) - len(rest)) / 2 / rate
    assert difference <= 0.05 * sentences, (len(pcm), len(rest), difference)


def raw_connection(server):
    sock = socket.create_connection(("127.0.0.1", server.wyoming_port), timeout=TIMEOUT)
    return sock


def read_to_end(sock):
    """Everything the server sends until it closes the connection."""
    received = b""
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    return received
