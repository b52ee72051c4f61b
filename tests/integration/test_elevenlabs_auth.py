"""ElevenLabs' xi-api-key header maps onto voxserve's API keys; a refusal has ElevenLabs' shape."""
import requests

import pytest

from conftest import VoxServer
from security_support import write_keys

KEY = "sk-eleven-0123456789abcdef"


@pytest.fixture(scope="module")
def server(voxserve_bin, tmp_path_factory):
    keys = write_keys(tmp_path_factory.mktemp("auth") / "keys.yaml", [{"name": "el", "key": KEY}])
    instance = VoxServer(voxserve_bin, ["--api-keys-file", keys]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def speak(server, key):
    headers = {"xi-api-key": key} if key is not None else {}
    return requests.post(f"{server.url}/elevenlabs/v1/text-to-speech/en-us",
                         params={"output_format": "pcm_16000"}, json={"text": "Hi there."},
                         headers=headers, timeout=60)


def test_the_right_key_is_served(server):
    response = speak(server, KEY)
    assert response.status_code == 200, response.text
    assert len(response.content) > 1000


@pytest.mark.parametrize("key", ["sk-wrong-0123456789abcdef", None])
def test_a_wrong_or_missing_key_gets_elevenlabs_401(server, key):
    response = speak(server, key)
    assert response.status_code == 401
    detail = response.json()["detail"]
    assert detail["status"] == "invalid_api_key"
    assert detail["type"] == "authentication_error"
    # The exchange's id, as on every other answer (it was empty before the handler ran).
    assert detail["request_id"] and detail["request_id"] == response.headers["X-Request-Id"]
    if key is None:  # the hint names ElevenLabs' own header
        assert "xi-api-key" in detail["message"]


def test_voxserve_routes_keep_their_own_error_shape(server):
    response = requests.get(server.url + "/v1/voices", timeout=10)
    assert response.status_code == 401 and "error" in response.json()
