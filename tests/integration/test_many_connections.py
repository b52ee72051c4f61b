"""Thousands of connections (issue 10, item 6): the server raises its open-file limit and sizes
http.max_connections to it; 2,000 idle WebSocket and 2,000 idle keep-alive HTTP connections do
not stop synthesis, and once they close the server's descriptors are back where they were."""
import asyncio
import concurrent.futures
import http.client
import json
import os
import re
import resource
import socket
import subprocess

import pytest
import requests
import websockets

from probes import wait_for

IDLE_WEBSOCKETS = 2000
IDLE_HTTP = 2000
SENTENCE = "Thousands of idle clients do not stop this sentence."


def server_fds(server):
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def soft_nofile_limit(server):
    with open(f"/proc/{server.process.pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no 'Max open files' in /proc/PID/limits")


def open_file_limit(soft, hard):
    """preexec_fn for a server started with this RLIMIT_NOFILE."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def own_fd_room():
    """This process holds every client end: raise its own soft limit (restored afterwards)."""
    needed = IDLE_WEBSOCKETS + IDLE_HTTP + 512
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the hard RLIMIT_NOFILE ({hard}) is below the {needed} this test holds")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_soft_open_file_limit_is_raised_to_the_hard_one_and_both_are_logged(make_server):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY or hard < 2048:
        pytest.skip(f"needs a finite hard RLIMIT_NOFILE of at least 2048 (is {hard})")
    server = make_server(preexec_fn=open_file_limit(1024, hard))
    assert soft_nofile_limit(server) == hard
    line = next(l for l in server.log_lines if "open file limit" in l)
    assert "soft_before=1024" in line and f"soft={hard}" in line and f"hard={hard}" in line, line


def test_max_connections_is_lowered_to_what_a_low_limit_leaves(make_server):
    # 1024 descriptors, 512 kept for the server itself: 512 connections, the 513th gets a 503.
    server = make_server("--max-connections", "10000", preexec_fn=open_file_limit(1024, 1024))
    warning = next((l for l in server.log_lines if "does not fit the open-file limit" in l), None)
    assert warning is not None, server.log()
    assert "http.max_connections 10000" in warning and "RLIMIT_NOFILE 1024" in warning, warning
    assert "serving at most 512 connections" in warning, warning
    assert re.search(r"\bmax_connections=512\b", server.log()), server.log()

    held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(512)]
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as extra:
            extra.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = extra.recv(4096)
        assert answer.startswith(b"HTTP/1.1 503"), answer
        # The held ones are real connections the server accepted, not refusals.
        held[0].sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        assert held[0].recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        for conn in held:
            conn.close()


def test_a_limit_that_leaves_no_room_refuses_to_start(voxserve_bin):
    result = subprocess.run([voxserve_bin, "--host", "127.0.0.1", "--port", "0", "--grpc-port",
                             "0"], capture_output=True, text=True, timeout=60,
                            preexec_fn=open_file_limit(200, 200))
    assert result.returncode == 2, result.stderr
    assert "RLIMIT_NOFILE 200" in result.stderr and "raise it" in result.stderr, result.stderr


async def open_idle_http(port, count):
    """Keep-alive connections that have each been answered once, then left idle."""
    connections = []
    for start in range(0, count, 200):
        async def one():
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), head
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
            await reader.readexactly(length)
            return reader, writer
        connections += await asyncio.gather(*(one() for _ in range(min(200, count - start))))
    return connections


async def open_idle_websockets(port, count):
    url = f"ws://127.0.0.1:{port}/v1/audio/speech/stream"
    sockets = []
    for start in range(0, count, 200):
        sockets += await asyncio.gather(*(websockets.connect(url, open_timeout=30,
                                                             max_size=None)
                                          for _ in range(min(200, count - start))))
    return sockets


async def speak_over_websocket(ws):
    """One sentence over an already open (idle until now) speech stream: audio bytes received."""
    await ws.send(json.dumps({"voice": "alloy", "response_format": "pcm"}))
    await ws.send(json.dumps({"text": SENTENCE, "close": True}))
    audio = 0
    async for message in ws:
        if isinstance(message, bytes):
            audio += len(message)
            continue
        event = json.loads(message)
        assert event["type"] != "error", event
        if event["type"] == "done":
            break
    return audio


def synthesize_rest(server):
    answer = requests.post(server.url + "/v1/audio/speech",
                           json={"model": "tts-1", "input": SENTENCE, "voice": "alloy",
                                 "response_format": "pcm"}, timeout=60)
    assert answer.status_code == 200, answer.text
    return len(answer.content)


class MetricsProbe:
    """Reads the connection gauges over one keep-alive connection that stays open all along, so
    reading them opens and closes nothing the fd count would see."""

    def __init__(self, server):
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)

    def gauges(self):
        """(open HTTP connections, this one included; open WebSockets)."""
        self.connection.request("GET", "/metrics")
        text = self.connection.getresponse().read().decode()
        values = {}
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            values[name] = value
        return (float(values["voxserve_http_connections"]),
                float(values["voxserve_websocket_connections"]))

    def close(self):
        self.connection.close()


def test_thousands_of_idle_connections_leave_synthesis_working_and_fds_return(
        make_server, own_fd_room):
    # Idle timeouts well past the test, so nothing closes the idle connections but the test.
    server = make_server("--idle-timeout-ms", "600000", "--ws-idle-timeout-ms", "600000")
    assert soft_nofile_limit(server) >= IDLE_WEBSOCKETS + IDLE_HTTP + 512
    expected_audio = synthesize_rest(server)  # warm: encoders, pools, lazily opened files
    assert expected_audio > 0
    # And espeak's lanes, one per instance running at once (each holds its speaker's socket):
    # as many requests side by side as the scenario sends.
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert list(pool.map(lambda _: synthesize_rest(server), range(8))) == [expected_audio] * 8
    probe = MetricsProbe(server)
    # Baseline: no connection open but the probe's own.
    assert wait_for(lambda: probe.gauges() == (1, 0), timeout=30), probe.gauges()
    baseline = server_fds(server)

    async def scenario():
        websockets_held = await open_idle_websockets(server.port, IDLE_WEBSOCKETS)
        http_held = await open_idle_http(server.port, IDLE_HTTP)
        try:
            # (An upgraded connection's HTTP session is gone a moment after its upgrade.)
            assert wait_for(lambda: probe.gauges() == (IDLE_HTTP + 1, IDLE_WEBSOCKETS),
                            timeout=30), probe.gauges()
            assert server_fds(server) >= IDLE_WEBSOCKETS + IDLE_HTTP
            # Synthesis goes on: over new REST connections (side by side) and over one of the
            # held WebSockets, which has been idle until now.
            loop = asyncio.get_running_loop()
            sizes = await asyncio.gather(*(loop.run_in_executor(None, synthesize_rest, server)
                                           for _ in range(8)))
            assert all(size == expected_audio for size in sizes), sizes
            assert await speak_over_websocket(websockets_held[0]) > 0
            # The last connections opened are still open and answer.
            reader, writer = http_held[-1]
            writer.write(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            await writer.drain()
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
            await asyncio.wait_for(await websockets_held[-1].ping(), 30)
        finally:
            for _, writer in http_held:
                writer.close()
            await asyncio.gather(*(ws.close() for ws in websockets_held),
                                 return_exceptions=True)

    try:
        asyncio.run(scenario())
        assert wait_for(lambda: probe.gauges() == (1, 0), timeout=60), probe.gauges()
        assert wait_for(lambda: server_fds(server) <= baseline, timeout=60), (
            f"{server_fds(server)} fds open, {baseline} before the connections")
    finally:
        probe.close()
    assert synthesize_rest(server) == expected_audio
