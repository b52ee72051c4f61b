"""CORS (docs/operations.md#browsers-cors) through the real binary: off by default (a preflight is
refused and no response names an origin), and with http.cors.allowed_origins set, preflights
answered before the API key is checked, the allowed origin named on plain and streamed
responses, other origins left without it, and WebSocket handshakes from a browser accepted only
from the server's own origin or an allowed one."""
import asyncio
import json

import pytest
import requests
import websockets
from websockets.exceptions import InvalidStatusCode

from security_support import speech_body, write_keys

APP = "https://app.example.com"
EVIL = "https://evil.example"
KEY = "sk-cors-0123456789abcdef"


@pytest.fixture
def cors_server(make_server, tmp_path):
    keys = write_keys(tmp_path / "keys.yaml", [{"name": "web", "key": KEY}])
    return make_server("--api-keys-file", keys, "--cors-allowed-origins", APP)


def preflight(server, origin, method="POST", headers="content-type, x-api-key"):
    return requests.options(server.url + "/v1/audio/speech", timeout=10, headers={
        "Origin": origin, "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": headers})


def speak(server, origin, **fields):
    return requests.post(server.url + "/v1/audio/speech", json=speech_body(**fields), timeout=30,
                         headers={"Origin": origin, "X-Api-Key": KEY})


def handshake(server, origin):
    """The WebSocket handshake's status: 101, or the refusal's."""
    async def connect():
        url = server.url.replace("http", "ws") + "/v1/audio/speech/stream"
        headers = {"X-Api-Key": KEY}
        try:
            async with websockets.connect(url, origin=origin, extra_headers=headers,
                                          open_timeout=10):
                return 101
        except InvalidStatusCode as refused:
            return refused.status_code
    return asyncio.run(connect())


def test_cors_is_off_by_default(server):
    refused = preflight(server, APP)
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "cors_refused"
    answer = requests.post(server.url + "/v1/audio/speech", json=speech_body(), timeout=30,
                           headers={"Origin": APP})
    assert answer.status_code == 200
    assert "Access-Control-Allow-Origin" not in answer.headers
    assert handshake(server, EVIL) == 101  # WebSockets are left as they were while CORS is off


def test_an_allowed_origin_is_answered_and_named(cors_server):
    answer = preflight(cors_server, APP)  # no API key: browsers send none on a preflight
    assert answer.status_code == 204, answer.text
    assert answer.headers["Access-Control-Allow-Origin"] == APP
    assert "POST" in answer.headers["Access-Control-Allow-Methods"]
    assert "X-Api-Key" in answer.headers["Access-Control-Allow-Headers"]
    assert answer.headers["Access-Control-Max-Age"] == "600"

    spoken = speak(cors_server, APP)
    assert spoken.status_code == 200, spoken.text
    assert spoken.headers["Access-Control-Allow-Origin"] == APP
    exposed = spoken.headers["Access-Control-Expose-Headers"]
    assert "X-Request-Id" in exposed and "X-Sample-Rate" in exposed
    streamed = speak(cors_server, APP, stream_format="audio")
    assert streamed.status_code == 200 and streamed.headers.get("Transfer-Encoding") == "chunked"
    assert streamed.headers["Access-Control-Allow-Origin"] == APP
    # An error is readable by the page too (it must learn why).
    unauthorized = requests.post(cors_server.url + "/v1/audio/speech", json=speech_body(),
                                 headers={"Origin": APP}, timeout=10)
    assert unauthorized.status_code == 401
    assert unauthorized.headers["Access-Control-Allow-Origin"] == APP


def test_other_origins_methods_and_headers_are_refused(cors_server):
    for answer, what in ((preflight(cors_server, EVIL), "origin"),
                         (preflight(cors_server, APP, method="PUT"), "method"),
                         (preflight(cors_server, APP, headers="x-secret"), "header")):
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"]["message"].startswith(what), answer.text
        assert "Access-Control-Allow-Origin" not in answer.headers
    # The server answers (it cannot know the caller is a browser), but names no origin: the
    # browser keeps the response from the page.
    spoken = speak(cors_server, EVIL)
    assert spoken.status_code == 200
    assert "Access-Control-Allow-Origin" not in spoken.headers
    assert spoken.headers["Vary"] == "Origin"


def test_websocket_handshakes_from_browsers_follow_the_origins(cors_server):
    assert handshake(cors_server, APP) == 101
    assert handshake(cors_server, None) == 101  # not a browser
    assert handshake(cors_server, f"http://127.0.0.1:{cors_server.port}") == 101  # its own page
    assert handshake(cors_server, EVIL) == 403
