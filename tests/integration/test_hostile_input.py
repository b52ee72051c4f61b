"""Input a hostile trial sent that once got a wrong answer: JSON numbers past a double, control
and unspeakable characters, HTTP requests without Host, broken WebSocket handshakes. Each gets a
clear JSON error (or is spoken whole) from the real binary."""
import socket

import pytest
import requests

from audio_check import decode

ROUTES = {
    "/v1/audio/speech": {"model": "tts-1", "input": "Hello.", "voice": "alloy"},
    "/v1/synthesize": {"text": "Hello."},
    "/tts": {"text": "Hello."},
}
WS_PATH = "/v1/audio/speech/stream"


def error_of(response):
    assert response.headers["Content-Type"].startswith("application/json"), response.text
    body = response.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}, body
    return body["error"]


def post_text(server, path, text):
    body = dict(ROUTES[path])
    body["input" if path == "/v1/audio/speech" else "text"] = text
    if path == "/v1/audio/speech":
        body["response_format"] = "wav"
    return requests.post(server.url + path, json=body, timeout=60)


@pytest.mark.parametrize("path", list(ROUTES))
@pytest.mark.parametrize("field", ['"speed": 1e309', '"not_a_field": -1e400',
                                   '"nested": {"deep": [2e308]}'])
def test_a_number_beyond_a_double_is_400_invalid_json_on_every_route(server, path, field):
    fields = ", ".join(f'"{k}": "{v}"' for k, v in ROUTES[path].items())
    errors_before = sum(" error " in line for line in server.log_lines)
    response = requests.post(server.url + path, data="{" + fields + ", " + field + "}",
                             headers={"Content-Type": "application/json"}, timeout=30)
    assert response.status_code == 400, response.text
    error = error_of(response)
    assert error["code"] == "invalid_json"
    assert "number is too large" in error["message"] and "json.exception" not in error["message"]
    assert sum(" error " in line for line in server.log_lines) == errors_before


def test_malformed_json_is_explained_without_parser_internals(server):
    response = requests.post(server.url + "/v1/synthesize", data=b'{"text": x}',
                             headers={"Content-Type": "application/json"}, timeout=30)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_json"
    assert "line 1, column 10" in error["message"] and "json.exception" not in error["message"]


@pytest.mark.parametrize("path", list(ROUTES))
def test_an_embedded_nul_does_not_cut_the_text_short(server, path):
    whole = post_text(server, path, "Hello world. This is a longer sentence.")
    with_nul = post_text(server, path, "Hello world.\u0000 This is a longer sentence.")
    assert whole.status_code == 200 and with_nul.status_code == 200, with_nul.text
    expected = decode(whole.content, "wav").duration
    assert expected > 2.0
    assert decode(with_nul.content, "wav").duration == pytest.approx(expected, rel=0.1)


@pytest.mark.parametrize("text", ["...", "?!  。！", "\u200b\u200d\ufeff", "\ue000\U000f0000",
                                  "\u0000\u0000\u0000", "\u0007 \u001b"])
@pytest.mark.parametrize("path", list(ROUTES))
def test_input_with_nothing_to_speak_is_400_empty_input(server, path, text):
    response = post_text(server, path, text)
    assert response.status_code == 400, f"{response.status_code} for {text!r}"
    error = error_of(response)
    assert error["code"] == "empty_input"
    assert error["param"] == ("input" if path == "/v1/audio/speech" else "text")


def test_control_characters_around_words_are_spoken(server):
    response = post_text(server, "/v1/synthesize", "\u0000Hello\u0007 there.\u001b")
    assert response.status_code == 200, response.text
    assert decode(response.content, "wav").duration > 0.5


def raw_exchange(server, request):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
        length = int(headers.get("Content-Length", 0))
        while len(body) < length:
            chunk = sock.recv(4096)
            if not chunk:
                break
            body += chunk
        return int(head.split()[1]), headers, body


def test_http11_without_host_is_400_json(server):
    status, headers, body = raw_exchange(server, b"GET /health/live HTTP/1.1\r\n\r\n")
    assert status == 400 and headers["Content-Type"].startswith("application/json")
    assert b'"code":"bad_request"' in body and b"Host" in body
    status, _, _ = raw_exchange(server, b"GET /health/live HTTP/1.0\r\n\r\n")
    assert status == 200  # HTTP/1.0 may omit it


def upgrade(key, version="13", host=True):
    lines = [f"GET {WS_PATH} HTTP/1.1"] + (["Host: 127.0.0.1"] if host else []) + [
        "Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}",
        f"Sec-WebSocket-Version: {version}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@pytest.mark.parametrize("key", ["short", "not-base64-at-all!!!!!!!", "AAAAAAAAAAAAAAAAAAAAAAAA"])
def test_a_malformed_websocket_key_is_refused_400_json(server, key):
    status, headers, body = raw_exchange(server, upgrade(key))
    assert status == 400 and headers["Content-Type"].startswith("application/json")
    assert b'"code":"invalid_websocket_key"' in body


def test_an_unsupported_websocket_version_is_426_json(server):
    status, headers, body = raw_exchange(server, upgrade("dGhlIHNhbXBsZSBub25jZQ==", "8"))
    assert status == 426 and headers["Content-Type"].startswith("application/json")
    assert headers["Sec-WebSocket-Version"] == "13"
    assert b'"code":"unsupported_websocket_version"' in body


def test_a_websocket_upgrade_without_host_is_400_json(server):
    status, headers, body = raw_exchange(server, upgrade("dGhlIHNhbXBsZSBub25jZQ==", host=False))
    assert status == 400 and headers["Content-Type"].startswith("application/json")


def test_a_valid_handshake_still_upgrades(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(upgrade("dGhlIHNhbXBsZSBub25jZQ=="))
        head = sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head
    assert b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head  # RFC 6455 §1.3's example accept value
