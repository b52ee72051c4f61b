"""Clients that are slow, greedy or broken: slowloris headers, oversized bodies, too many
connections, oversized headers and idle keep-alive connections. Each limit holds while normal
clients keep being served."""
import socket
import threading
import time

import pytest
import requests

from conftest import VoxServer
from security_support import wait_for


@pytest.fixture(scope="module")
def server(voxserve_bin):
    instance = VoxServer(voxserve_bin, ["--header-timeout-ms", "1000", "--idle-timeout-ms", "1500",
                                        "--max-connections", "6"]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def connect(server):
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def read_until_closed(sock, limit=1 << 16):
    data = b""
    while len(data) < limit:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def test_slowloris_is_cut_after_the_header_timeout_others_are_served(server):
    header = b"GET /health/live HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: a\r\n" * 40 + b"\r\n"
    outcome = {}

    def trickle():
        sock = connect(server)
        started = time.monotonic()
        try:
            for byte in header:
                sock.sendall(bytes([byte]))
                time.sleep(0.02)  # the whole header would take ~10 s
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(5)
        outcome["reply"] = read_until_closed(sock)
        outcome["seconds"] = time.monotonic() - started
        sock.close()

    slow = threading.Thread(target=trickle)
    slow.start()
    served = 0
    while slow.is_alive() and served < 200:
        assert requests.get(server.url + "/health/live", timeout=5).status_code == 200
        served += 1
        time.sleep(0.02)
    slow.join(15)
    assert served > 5, "normal clients were not served during the trickle"
    assert outcome["reply"] == b"", "the trickling client got an answer"
    assert 0.9 <= outcome["seconds"] <= 4, outcome["seconds"]


def test_oversized_body_is_413_without_reading_it(server):
    sock = connect(server)
    sock.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 104857600\r\n\r\n" + b" " * 65536)
    started = time.monotonic()
    reply = read_until_closed(sock)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b"Connection: close" in reply and b"payload_too_large" in reply
    assert time.monotonic() - started < 3, "the server waited for the 100 MB body"


def test_oversized_body_with_expect_continue_gets_413_not_100(server):
    sock = connect(server)
    sock.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 104857600\r\nExpect: 100-continue\r\n\r\n")
    reply = read_until_closed(sock)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b"100 Continue" not in reply


def test_oversized_headers_are_431(server):
    response = requests.get(server.url + "/health/live", headers={"X-Big": "x" * 20000}, timeout=10)
    assert response.status_code == 431


def test_idle_keep_alive_connection_is_closed(server):
    sock = connect(server)
    sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.2)
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    sock.settimeout(10)
    assert read_until_closed(sock) == b""
    assert 1.0 <= time.monotonic() - started <= 4
    sock.close()


def test_connection_cap_refuses_cleanly_and_recovers(server):
    def health_ok():
        try:
            return requests.get(server.url + "/health/live", timeout=5).status_code == 200
        except requests.ConnectionError:
            return False

    # Held connections: each sends a request line and stays open (under the 1 s header timeout).
    wait_for(health_ok, message="earlier tests' connections to close")
    time.sleep(0.3)  # the probe's own session ends once the server reads its close
    held = [connect(server) for _ in range(6)]
    for sock in held:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    refused = connect(server)
    refused.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
    reply = read_until_closed(refused)
    refused.close()
    assert reply.startswith(b"HTTP/1.1 503"), reply[:200]
    assert b"Retry-After: 1" in reply and b"Connection: close" in reply
    for sock in held:
        sock.close()
    wait_for(health_ok, message="the server to accept connections again")
    metrics = requests.get(server.url + "/metrics", timeout=10).text
    assert "voxserve_http_connections_refused_total 0" not in metrics
