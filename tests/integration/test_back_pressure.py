"""A client that writes and never reads (issue 39): on every transport the server stops taking its
requests once replies wait unread, holds a bounded amount of memory for it, cuts it off after
http.write_timeout_ms, and goes on serving everyone else. Each client here is a raw socket with a
4 KiB receive buffer that reads nothing after its handshake. Wyoming's is in test_wyoming.py."""
import base64
import json
import os

import pytest
import requests

from conftest import VoxServer
from probes import (metric, peak_rss_mb, send_until_held_back, small_sanitizer_quarantine,
                    stingy_socket, wait_for)

# Peak RSS growth allowed for one such client: a few replies and their buffers, against the
# hundreds of MB that queueing every reply takes (issue 39's Wyoming trial: 23 MB/s).
BOUND_MB = 30
SENTENCES = " ".join(f"Sentence number {i} is here to make the reply long." for i in range(8))


@pytest.fixture(scope="module")
def server(voxserve_bin):
    instance = VoxServer(voxserve_bin, ["--write-timeout-ms", "3000"], env=small_sanitizer_quarantine()).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def websocket_upgrade(server, path):
    """A raw WebSocket: the upgrade, its 101 read, and nothing read after it."""
    sock = stingy_socket(server.port)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def text_frame(message):
    """One masked text frame (clients must mask, RFC 6455 5.3)."""
    payload = json.dumps(message).encode()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    if len(payload) < 126:
        header = bytes([0x81, 0x80 | len(payload)])
    else:
        header = bytes([0x81, 0x80 | 126]) + len(payload).to_bytes(2, "big")
    return header + mask + masked


def assert_held_to_a_bound_and_cut_off(server, before, connections):
    assert wait_for(connections, timeout=30), "the client that reads nothing was not cut off"
    grown = peak_rss_mb(server.process.pid) - before
    assert grown < BOUND_MB, f"a client that reads nothing grew the peak RSS by {grown:.0f} MB"
    answer = requests.post(server.url + "/v1/audio/speech", timeout=30, json={
        "model": "tts-1", "input": "Still here.", "voice": "en-us", "response_format": "wav"})
    assert answer.status_code == 200, answer.text


def test_http_pipelined_requests_never_read(server):
    body = json.dumps({"model": "tts-1", "input": SENTENCES, "voice": "en-us",
                       "response_format": "wav"}).encode()
    request = (b"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    before = peak_rss_mb(server.process.pid)
    sock = stingy_socket(server.port)
    send_until_held_back(sock, request, 20_000)  # 14 MB: more than the kernel buffers hold
    # The scrape is an HTTP connection of its own: one left means ours is gone.
    assert_held_to_a_bound_and_cut_off(
        server, before, lambda: metric(server, "voxserve_http_connections") == 1)
    sock.close()


def test_websocket_text_never_read(server):
    before = peak_rss_mb(server.process.pid)
    sock = websocket_upgrade(server, "/v1/audio/speech/stream")
    sock.sendall(text_frame({"model": "tts-1", "voice": "en-us", "response_format": "pcm"}))
    send_until_held_back(sock, text_frame({"text": SENTENCES + " "}), 20_000)
    assert_held_to_a_bound_and_cut_off(
        server, before, lambda: metric(server, "voxserve_websocket_connections") == 0)
    sock.close()


def test_elevenlabs_stream_input_never_read(server):
    before = peak_rss_mb(server.process.pid)
    sock = websocket_upgrade(server, "/elevenlabs/v1/text-to-speech/en-us/stream-input"
                                     "?model_id=eleven_flash_v2_5&output_format=pcm_16000")
    sock.sendall(text_frame({"text": " "}))
    send_until_held_back(sock, text_frame({"text": SENTENCES + " "}), 20_000)
    assert_held_to_a_bound_and_cut_off(
        server, before, lambda: metric(server, "voxserve_websocket_connections") == 0)
    sock.close()


def test_grpc_bidi_stream_never_read(server):
    # HTTP/2 flow control holds the server's writes once the client's window is full; the
    # session then starts no sentence past limits.stream_buffer_bytes of unread audio, stops
    # taking text, and the request iterator below is held back in turn.
    from grpc_support import channel, stubs
    pb = stubs().pb
    taken = []

    def script():
        yield pb.StreamingSynthesizeRequest(config=pb.SynthesisOptions(voice="en-us"))
        for i in range(20_000):
            taken.append(i)
            yield pb.StreamingSynthesizeRequest(text=SENTENCES + " ")

    before = peak_rss_mb(server.process.pid)
    with channel(server) as ch:
        responses = stubs().rpc.TextToSpeechStub(ch).StreamingSynthesize(script(), timeout=120)
        # Held back: the client's sends stop advancing (checked twice a second apart).
        held = []
        assert wait_for(lambda: held.append(len(taken)) or
                        (len(held) > 50 and held[-1] == held[-51]), timeout=60, interval=0.02)
        assert len(taken) < 20_000, "the server took every sentence while its audio went unread"
        grown = peak_rss_mb(server.process.pid) - before
        assert grown < BOUND_MB, f"a client that reads nothing grew the peak RSS by {grown:.0f} MB"
        responses.cancel()
    answer = requests.post(server.url + "/v1/audio/speech", timeout=30, json={
        "model": "tts-1", "input": "Still here.", "voice": "en-us", "response_format": "wav"})
    assert answer.status_code == 200, answer.text
