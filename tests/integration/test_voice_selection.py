"""Which voice a request gets and which voices /v1/voices (and gRPC ListVoices) lists: the
built-in names clients of other servers send, on a server with no configuration at all, and the
voice filters (percent-decoded, case-insensitive, macrolanguages, OpenAI model names)."""
import http.client
import json

import pytest
import requests

from audio_check import decode
from conftest import VoxServer
from grpc_support import channel, stubs


@pytest.fixture(scope="module")
def plain_server(voxserve_bin):
    """A server started with no configuration file: only what is built in."""
    instance = VoxServer(voxserve_bin).start()
    yield instance
    assert instance.stop() == 0, instance.log()


@pytest.mark.parametrize("path,body", [
    ("/tts", {"text": "你好。", "voice": "zh_female"}),
    ("/v1/synthesize", {"text": "Hello.", "voice": "default", "speed": 1.0}),
    ("/v1/synthesize", {"text": "你好。", "voice": "zh_male"}),
    ("/v1/synthesize", {"text": "Hello.", "voice": "en_female"}),
    ("/v1/synthesize", {"text": "Hello.", "voice": "en_male"}),
    ("/v1/synthesize", {"text": "Hello.", "voice": "en_gb"}),
    ("/v1/audio/speech", {"model": "tts-1", "input": "Hello.", "voice": "en_us",
                          "response_format": "wav"}),
])
def test_built_in_voice_names_work_on_a_default_server(plain_server, path, body):
    response = requests.post(plain_server.url + path, json=body, timeout=60)
    assert response.status_code == 200, response.text
    assert decode(response.content, "wav").duration > 0.3


def voices(server, query=""):
    response = requests.get(server.url + "/v1/voices" + query, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_built_in_names_are_listed_with_what_they_stand_for(plain_server):
    by_id = {v["id"]: v for v in voices(plain_server)}
    assert by_id["zh_female"]["alias_of"] == "cmn+f3"
    assert by_id["default"]["alias_of"] == "en-us"
    assert by_id["en_gb"]["alias_of"] == "en-gb"


def test_a_configured_alias_overrides_a_built_in_name(make_server, tmp_path):
    config = tmp_path / "voxserve.yaml"
    config.write_text("voice_aliases:\n  zh_female: cmn+f5\n")
    server = make_server("--config", str(config))
    by_id = {v["id"]: v for v in voices(server)}
    assert by_id["zh_female"]["alias_of"] == "cmn+f5"


def test_the_voice_filter_is_percent_decoded(server):
    english = voices(server, "?language=en")
    assert english and voices(server, "?language=%65%6e") == english
    assert voices(server, "?language=%65%6E&model=tts%2D1") == english


@pytest.mark.parametrize("query", ["?language=%zz", "?language=%6", "?model=%"])
def test_an_invalid_percent_escape_is_400_json(server, query):
    # http.client sends the target as written (requests would re-quote "%zz" as "%25zz").
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", "/v1/voices" + query)
        response = connection.getresponse()
        body = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 400
    assert response.getheader("Content-Type").startswith("application/json")
    assert body["error"]["code"] == "invalid_query"


def test_the_language_filter_ignores_case_and_finds_narrower_tags(server):
    english = voices(server, "?language=en")
    ids = {v["id"] for v in english}
    assert {"en-us", "en-gb", "en-gb-x-rp"} <= ids
    assert all(v["language"].startswith("en-") for v in english)
    assert voices(server, "?language=EN") == english
    assert {v["id"] for v in voices(server, "?language=en-US")} >= {"en-us", "alloy"}
    assert "en-gb" not in {v["id"] for v in voices(server, "?language=en-US")}


def test_zh_finds_mandarin_and_cantonese(server):
    ids = {v["id"] for v in voices(server, "?language=zh")}
    assert {"cmn", "yue", "zh_female"} <= ids
    assert "en-us" not in ids


def test_an_openai_model_name_finds_the_default_models_voices(server):
    listed = voices(server, "?model=tts-1")
    assert listed == voices(server, "?model=espeak") and len(listed) > 100


def test_grpc_list_voices_uses_the_same_filter(server):
    pb = stubs().pb
    with channel(server) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)
        chinese = stub.ListVoices(pb.ListVoicesRequest(language="ZH"), timeout=10).voices
        by_model = stub.ListVoices(pb.ListVoicesRequest(model="tts-1"), timeout=10).voices
    assert {"cmn", "yue"} <= {v.id for v in chinese}
    assert len(by_model) == len(voices(server, "?model=tts-1"))
