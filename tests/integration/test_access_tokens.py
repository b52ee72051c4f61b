"""Short-lived access tokens (POST /v1/tokens, docs/operations.md#access-tokens) against the real
binary: a key mints, the token stands for it on REST (Bearer) and in WebSocket URLs (ours and
ElevenLabs'), single use is enforced, a token cannot mint, and replicas sharing the token secret
verify each other's tokens."""
import asyncio
import hashlib
import json

import pytest
import requests
import websockets

from conftest import VoxServer
from security_support import speech_body, write_keys
from websocket_support import speak_over_websocket

ALICE = "sk-alice-0123456789abcdef"
BOB = "sk-bob-0123456789abcdef"
KEYS = [
    {"name": "alice", "key": ALICE},
    {"name": "bob", "sha256": hashlib.sha256(BOB.encode()).hexdigest(), "models": ["kokoro"]},
]
WS_CONFIG = {"model": "tts-1", "voice": "alloy", "response_format": "pcm"}
EL_STREAM = "/elevenlabs/v1/text-to-speech/en-us/stream-input?output_format=pcm_16000"


@pytest.fixture(scope="module")
def secured(tmp_path_factory, voxserve_bin):
    """Two replicas sharing the keys file and the token secret."""
    directory = tmp_path_factory.mktemp("tokens")
    keys = write_keys(directory / "keys.yaml", KEYS)
    secret = directory / "token-secret"
    secret.write_text("f3" * 32 + "\n")
    servers = [VoxServer(voxserve_bin, ["--api-keys-file", keys, "--token-secret-file",
                                        str(secret)]).start() for _ in range(2)]
    yield servers
    for server in servers:
        assert server.stop() == 0, server.log()


def mint(server, key, **fields):
    return requests.post(server.url + "/v1/tokens", json=fields, timeout=30,
                         headers={"Authorization": f"Bearer {key}"} if key else {})


def token_of(server, key=ALICE, **fields):
    response = mint(server, key, **fields)
    assert response.status_code == 200, response.text
    return response.json()["token"]


def speak(server, token):
    return requests.post(server.url + "/v1/audio/speech", json=speech_body(stream=False),
                         headers={"Authorization": f"Bearer {token}"}, timeout=30)


def handshake_status(url):
    """The HTTP status a WebSocket handshake got (101 when it opened)."""
    async def attempt():
        try:
            async with websockets.connect(url, open_timeout=30):
                return 101
        except websockets.exceptions.InvalidStatusCode as refused:
            return refused.status_code
    return asyncio.run(attempt())


def ws_url(server, path):
    return server.url.replace("http", "ws") + path


def test_a_minted_token_speaks_on_rest_in_place_of_the_key(secured):
    server = secured[0]
    response = mint(server, ALICE, expires_in=120)
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    minted = response.json()
    assert minted["token"].startswith("vxt_") and minted["expires_in"] == 120
    assert minted["single_use"] is False
    spoken = speak(server, minted["token"])
    assert spoken.status_code == 200, spoken.text
    assert spoken.content[:4] == b"RIFF"
    assert speak(server, minted["token"]).status_code == 200  # not single use: again


def test_minting_needs_the_key_itself(secured):
    server = secured[0]
    assert mint(server, None).status_code == 401
    token = token_of(server)
    by_token = mint(server, token)
    assert by_token.status_code == 403
    assert by_token.json()["error"]["code"] == "token_cannot_mint"
    bad = mint(server, ALICE, expires_in=86400)
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "expires_in"


def test_a_token_carries_its_keys_models(secured):
    server = secured[0]
    refused = mint(server, BOB, models=["espeak"])
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "model_not_allowed"
    token = token_of(server, BOB)
    spoken = speak(server, token)  # bob's key may use kokoro only
    assert spoken.status_code == 403 and spoken.json()["error"]["code"] == "model_not_allowed"


def test_our_websocket_takes_a_token_in_its_url_and_nothing_else_does(secured):
    server = secured[0]
    token = token_of(server)
    audio, event = asyncio.run(speak_over_websocket(server, WS_CONFIG, ["Hello there."],
                                                    query=f"?token={token}"))
    assert event["type"] == "done" and len(audio) > 24000
    assert handshake_status(ws_url(server, "/v1/audio/speech/stream")) == 401
    assert handshake_status(ws_url(server, "/v1/audio/speech/stream?token=vxt_forged.x")) == 401
    # An API key is never taken from a URL, and REST routes take no token from one either.
    assert handshake_status(ws_url(server, f"/v1/audio/speech/stream?token={ALICE}")) == 401
    rest = requests.post(f"{server.url}/v1/audio/speech?token={token}", json=speech_body(),
                         timeout=30)
    assert rest.status_code == 401


def test_a_single_use_token_opens_one_websocket(secured):
    server = secured[0]
    token = token_of(server, single_use=True)
    url = ws_url(server, f"/v1/audio/speech/stream?token={token}")
    assert handshake_status(url) == 101
    assert handshake_status(url) == 401


def test_elevenlabs_single_use_token_opens_its_stream_input_once(secured):
    server = secured[0]
    response = requests.post(server.url + "/elevenlabs/v1/single-use-token/tts_websocket",
                             headers={"xi-api-key": ALICE}, timeout=30)
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"token"}
    token = response.json()["token"]

    async def speak_once():
        url = ws_url(server, f"{EL_STREAM}&single_use_token={token}")
        async with websockets.connect(url, open_timeout=30, max_size=None) as ws:
            await ws.send(json.dumps({"text": " "}))
            await ws.send(json.dumps({"text": "Hello there. "}))
            await ws.send(json.dumps({"text": ""}))
            audio = b""
            async for message in ws:
                event = json.loads(message)
                if event.get("audio"):
                    audio += event["audio"].encode()
                if event.get("isFinal"):
                    return audio
        return audio

    assert len(asyncio.run(speak_once())) > 1000
    assert handshake_status(ws_url(server, f"{EL_STREAM}&single_use_token={token}")) == 401
    other = requests.post(server.url + "/elevenlabs/v1/single-use-token/realtime_scribe",
                          headers={"xi-api-key": ALICE}, timeout=30)
    assert other.status_code == 400 and "tts_websocket" in other.text


def test_replicas_sharing_the_secret_take_each_others_tokens(secured, voxserve_bin, tmp_path):
    token = token_of(secured[0])
    assert speak(secured[1], token).status_code == 200
    keys = write_keys(tmp_path / "keys.yaml", KEYS)
    stranger = VoxServer(voxserve_bin, ["--api-keys-file", keys]).start()  # its own secret
    try:
        refused = speak(stranger, token)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "invalid_token"
    finally:
        assert stranger.stop() == 0, stranger.log()
