"""Pronunciation dictionaries (docs/pronunciation-dictionaries.md) through the real binary and
its espeak-ng model: the /v1/pronunciation-dictionaries API (ElevenLabs' shapes) end to end,
versions and their pinning, durability across a restart, locators on every API (REST, the
WebSocket stream, gRPC, ElevenLabs), a model's own lexicon files, and the response cache.

What a rule does is checked by bytes: espeak-ng gives identical requests identical audio, so a
request whose "WWW" a rule replaces by "World Wide Web" must give exactly the audio of the text
that says "World Wide Web"."""
import asyncio
import base64
import json
import subprocess

import grpc
import pytest
import requests
import websockets

from grpc_support import channel, stubs
from websocket_support import speak_over_websocket

API = "/v1/pronunciation-dictionaries"
PLS = """<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"
         alphabet="ipa" xml:lang="en-US">
  <lexeme><grapheme>WWW</grapheme><alias>World Wide Web</alias></lexeme>
  <lexeme><grapheme>tomato</grapheme><phoneme>təˈmɑːtoʊ</phoneme><alias>tomahto</alias></lexeme>
</lexicon>
"""


@pytest.fixture
def dict_server(make_server, tmp_path):
    return make_server("--dictionaries-dir", str(tmp_path / "dictionaries"))


def speak(server, text, route="/v1/audio/speech", **fields):
    field = "input" if route == "/v1/audio/speech" else "text"
    body = {"model": "tts-1", field: text, "voice": "en-us", "response_format": "wav"}
    body.update(fields)
    response = requests.post(server.url + route, json=body, timeout=60)
    assert response.status_code == 200, response.text
    return response.content


def locator(dictionary_id, version_id=None):
    item = {"pronunciation_dictionary_id": dictionary_id}
    if version_id:
        item["version_id"] = version_id
    return item


def add_rules(server, rules, name="terms"):
    response = requests.post(server.url + API + "/add-from-rules",
                             json={"name": name, "rules": rules}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def alias(string, replacement, **flags):
    return {"type": "alias", "string_to_replace": string, "alias": replacement, **flags}


def error_of(response, status):
    assert response.status_code == status, response.text
    return response.json()["error"]


def test_add_get_list_download_and_delete(dict_server):
    added = requests.post(dict_server.url + API + "/add-from-file",
                          files={"file": ("terms.pls", PLS.encode(), "application/pls+xml")},
                          data={"name": "Web terms", "description": "for the demo"}, timeout=10)
    assert added.status_code == 200, added.text
    body = added.json()
    assert body["id"].startswith("pd_") and body["version_id"].startswith("pdv_")
    assert body["name"] == "Web terms" and body["version_rules_num"] == 2

    got = requests.get(f"{dict_server.url}{API}/{body['id']}", timeout=10).json()
    assert got["latest_version_id"] == body["version_id"]
    assert got["description"] == "for the demo" and got["archived_time_unix"] is None
    assert {r["string_to_replace"]: r["type"] for r in got["rules"]} == {
        "WWW": "alias", "tomato": "phoneme"}

    listed = requests.get(dict_server.url + API, timeout=10).json()
    assert [d["id"] for d in listed["pronunciation_dictionaries"]] == [body["id"]]
    assert listed["has_more"] is False

    pls = requests.get(f"{dict_server.url}{API}/{body['id']}/{body['version_id']}/download",
                       timeout=10)
    assert pls.status_code == 200 and pls.headers["content-type"] == "application/pls+xml"
    assert "<grapheme>tomato</grapheme>" in pls.text and "təˈmɑːtoʊ" in pls.text
    # What was downloaded uploads again to the same rules.
    again = requests.post(dict_server.url + API + "/add-from-file",
                          files={"file": ("again.pls", pls.content)}, data={"name": "again"},
                          timeout=10).json()
    assert requests.get(f"{dict_server.url}{API}/{again['id']}", timeout=10).json()["rules"] == \
        got["rules"]

    deleted = requests.delete(f"{dict_server.url}{API}/{body['id']}", timeout=10)
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    assert error_of(requests.get(f"{dict_server.url}{API}/{body['id']}", timeout=10),
                    404)["code"] == "dictionary_not_found"


def test_every_rules_change_is_a_new_version_and_old_ones_stay_pinned(dict_server):
    first = add_rules(dict_server, [alias("WWW", "World Wide Web")])
    changed = requests.post(f"{dict_server.url}{API}/{first['id']}/add-rules",
                            json={"rules": [alias("WWW", "the web")]}, timeout=10).json()
    assert changed["version_id"] != first["version_id"] and changed["version_rules_num"] == 1

    text = "Visit WWW today."
    latest = speak(dict_server, text, pronunciation_dictionary_locators=[locator(first["id"])])
    pinned = speak(dict_server, text, pronunciation_dictionary_locators=[
        locator(first["id"], first["version_id"])])
    assert latest == speak(dict_server, "Visit the web today.")
    assert pinned == speak(dict_server, "Visit World Wide Web today.")

    removed = requests.post(f"{dict_server.url}{API}/{first['id']}/remove-rules",
                            json={"rule_strings": ["WWW"]}, timeout=10).json()
    assert removed["version_rules_num"] == 0
    assert speak(dict_server, text, pronunciation_dictionary_locators=[
        locator(first["id"])]) == speak(dict_server, text)

    replaced = requests.post(f"{dict_server.url}{API}/{first['id']}/set-rules",
                             json={"rules": [alias("today", "tomorrow")]}, timeout=10).json()
    assert replaced["version_rules_num"] == 1
    assert speak(dict_server, text, pronunciation_dictionary_locators=[
        locator(first["id"])]) == speak(dict_server, "Visit WWW tomorrow.")


def test_whole_words_and_case_follow_each_rules_flags(dict_server):
    rules = add_rules(dict_server, [alias("nasa", "the space agency", case_sensitive=False),
                                    alias("SQL", "sequel"),
                                    alias("Kube", "cube", word_boundaries=False)])
    use = [locator(rules["id"])]
    assert speak(dict_server, "NASA and SQL, not sql.", pronunciation_dictionary_locators=use) \
        == speak(dict_server, "the space agency and sequel, not sql.")
    # Whole words by default: "SQLite" keeps its letters; "Kubernetes" does not need them.
    assert speak(dict_server, "SQLite on Kubernetes.", pronunciation_dictionary_locators=use) \
        == speak(dict_server, "SQLite on cubernetes.")


def test_the_first_locator_wins_and_ssml_say_as_is_left_alone(dict_server):
    one = add_rules(dict_server, [alias("WWW", "the web")])
    two = add_rules(dict_server, [alias("WWW", "World Wide Web"), alias("HTML", "hypertext")])
    both = [locator(one["id"]), locator(two["id"])]
    assert speak(dict_server, "WWW and HTML.", pronunciation_dictionary_locators=both) == \
        speak(dict_server, "the web and hypertext.")
    ssml = '<speak><say-as interpret-as="characters">WWW</say-as> and HTML.</speak>'
    assert speak(dict_server, ssml, pronunciation_dictionary_locators=both) == \
        speak(dict_server, '<speak><say-as interpret-as="characters">WWW</say-as> and '
                           'hypertext.</speak>')


def test_locators_on_synthesize_websocket_grpc_and_elevenlabs(dict_server):
    rules = add_rules(dict_server, [alias("WWW", "World Wide Web")])
    use = [locator(rules["id"])]
    text, spelled = "Visit WWW today.", "Visit World Wide Web today."
    assert speak(dict_server, text, route="/v1/synthesize",
                 pronunciation_dictionary_locators=use) == \
        speak(dict_server, spelled, route="/v1/synthesize")

    eleven = f"{dict_server.url}/elevenlabs/v1/text-to-speech/en-us?output_format=pcm_16000"
    spoken = requests.post(eleven, json={"text": text, "pronunciation_dictionary_locators": use},
                           timeout=60)
    plain = requests.post(eleven, json={"text": spelled}, timeout=60)
    assert spoken.status_code == 200 and spoken.content == plain.content

    pb = stubs().pb
    with channel(dict_server) as ch:
        tts = stubs().rpc.TextToSpeechStub(ch)

        def grpc_audio(words, locators=()):
            options = pb.SynthesisOptions(voice="en-us")
            for item in locators:
                options.pronunciation_dictionary_locators.add(
                    pronunciation_dictionary_id=item["pronunciation_dictionary_id"])
            return tts.Synthesize(pb.SynthesizeRequest(text=words, options=options),
                                  timeout=60).audio
        assert grpc_audio(text, use) == grpc_audio(spelled)
        with pytest.raises(grpc.RpcError) as refused:
            grpc_audio(text, [locator("pd_00000000000000000000")])
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND

    async def stream(words, locators=None):
        config = {"voice": "en-us", "response_format": "pcm"}
        if locators:
            config["pronunciation_dictionary_locators"] = locators
        audio, end = await speak_over_websocket(dict_server, config, [words])
        assert end is not None and end["type"] == "done", end
        return audio
    assert asyncio.run(stream(text, use)) == asyncio.run(stream(spelled))


def test_bad_locators_and_files_get_clear_errors(dict_server, make_server):
    bad = requests.post(dict_server.url + "/v1/audio/speech", json={
        "model": "tts-1", "input": "Hi.", "voice": "en-us",
        "pronunciation_dictionary_locators": [locator("pd_00000000000000000000")]}, timeout=10)
    assert error_of(bad, 404)["code"] == "dictionary_not_found"
    rules = add_rules(dict_server, [alias("a", "b")])
    stale = requests.post(dict_server.url + "/v1/audio/speech", json={
        "model": "tts-1", "input": "Hi.", "voice": "en-us",
        "pronunciation_dictionary_locators": [locator(rules["id"], "pdv_00000000000000000000")]},
        timeout=10)
    assert error_of(stale, 404)["code"] == "dictionary_version_not_found"
    many = requests.post(dict_server.url + "/v1/audio/speech", json={
        "model": "tts-1", "input": "Hi.", "voice": "en-us",
        "pronunciation_dictionary_locators": [locator(rules["id"])] * 4}, timeout=10)
    assert error_of(many, 400)["code"] == "too_many_dictionaries"
    shape = requests.post(dict_server.url + "/v1/audio/speech", json={
        "model": "tts-1", "input": "Hi.", "voice": "en-us",
        "pronunciation_dictionary_locators": ["pd_x"]}, timeout=10)
    assert error_of(shape, 400)["code"] == "invalid_type"

    broken = requests.post(dict_server.url + API + "/add-from-file",
                           files={"file": ("x.pls", b"<lexicon><lexeme></lexicon>")},
                           data={"name": "broken"}, timeout=10)
    error = error_of(broken, 400)
    assert error["code"] == "invalid_dictionary" and "line 1" in error["message"]
    bomb = requests.post(dict_server.url + API + "/add-from-file", files={"file": (
        "x.pls", b'<!DOCTYPE l [<!ENTITY a "aaaa">]><lexicon>&a;</lexicon>')},
        data={"name": "bomb"}, timeout=10)
    assert error_of(bomb, 400)["code"] == "invalid_dictionary"
    arpabet = requests.post(dict_server.url + API + "/add-from-rules", json={
        "name": "x", "rules": [{"type": "phoneme", "string_to_replace": "a", "phoneme": "AH0",
                                "alphabet": "cmu-arpabet"}]}, timeout=10)
    assert "cmu-arpabet" in error_of(arpabet, 400)["message"]
    assert error_of(requests.get(dict_server.url + API + "?page_size=0", timeout=10),
                    400)["param"] == "page_size"
    assert requests.put(f"{dict_server.url}{API}/{rules['id']}", timeout=10).status_code == 405

    off = make_server()  # no dictionaries.dir
    assert error_of(requests.get(off.url + API, timeout=10), 501)["code"] == "dictionaries_off"
    refused = requests.post(off.url + "/v1/audio/speech", json={
        "model": "tts-1", "input": "Hi.", "voice": "en-us",
        "pronunciation_dictionary_locators": [locator(rules["id"])]}, timeout=10)
    assert error_of(refused, 501)["code"] == "dictionaries_off"


def test_list_pages_sorts_and_hides_archived_ones(dict_server):
    ids = [add_rules(dict_server, [alias("a", "b")], name=name)["id"] for name in "CAB"]
    page = requests.get(dict_server.url + API + "?page_size=2", timeout=10).json()
    assert page["has_more"] is True and len(page["pronunciation_dictionaries"]) == 2
    rest = requests.get(f"{dict_server.url}{API}?page_size=2&cursor={page['next_cursor']}",
                        timeout=10).json()
    assert rest["has_more"] is False
    seen = [d["id"] for d in page["pronunciation_dictionaries"] + rest["pronunciation_dictionaries"]]
    assert sorted(seen) == sorted(ids)
    by_name = requests.get(dict_server.url + API + "?sort=name&sort_direction=ASCENDING",
                           timeout=10).json()
    assert [d["name"] for d in by_name["pronunciation_dictionaries"]] == ["A", "B", "C"]

    patched = requests.patch(f"{dict_server.url}{API}/{ids[0]}",
                             json={"archived": True, "name": "Old"}, timeout=10).json()
    assert patched["name"] == "Old" and patched["archived_time_unix"] is not None
    visible = requests.get(dict_server.url + API, timeout=10).json()["pronunciation_dictionaries"]
    assert ids[0] not in [d["id"] for d in visible]
    everything = requests.get(dict_server.url + API + "?include_archived=true",
                              timeout=10).json()["pronunciation_dictionaries"]
    assert ids[0] in [d["id"] for d in everything]


def test_dictionaries_survive_a_restart(make_server, tmp_path):
    folder = str(tmp_path / "dictionaries")
    first = make_server("--dictionaries-dir", folder)
    added = add_rules(first, [alias("WWW", "World Wide Web")])
    changed = requests.post(f"{first.url}{API}/{added['id']}/add-rules",
                            json={"rules": [alias("HTML", "hypertext")]}, timeout=10).json()
    before = requests.get(f"{first.url}{API}/{added['id']}", timeout=10).json()
    assert first.stop() == 0
    second = make_server("--dictionaries-dir", folder)
    after = requests.get(f"{second.url}{API}/{added['id']}", timeout=10).json()
    assert after == before and after["latest_version_id"] == changed["version_id"]
    assert speak(second, "WWW.", pronunciation_dictionary_locators=[
        locator(added["id"], added["version_id"])]) == speak(second, "World Wide Web.")


def test_a_models_own_lexicon_files_apply_to_every_request(make_server, tmp_path, voxserve_bin):
    lexicon = tmp_path / "brand.json"
    lexicon.write_text(json.dumps({"entries": {"Voxserve": "vox serve", "WWW": "the web"}}))
    config = tmp_path / "voxserve.yaml"
    config.write_text("models:\n  - id: espeak\n    engine: espeak\n"
                      f"    lexicons: [{lexicon}]\n")
    server = make_server("--config", str(config), "--dictionaries-dir", str(tmp_path / "d"))
    assert speak(server, "Voxserve on WWW.") == speak(server, "vox serve on the web.")
    # A request's dictionaries come first.
    mine = add_rules(server, [alias("WWW", "World Wide Web")])
    assert speak(server, "Voxserve on WWW.", pronunciation_dictionary_locators=[
        locator(mine["id"])]) == speak(server, "vox serve on World Wide Web.")

    broken = tmp_path / "broken.pls"
    broken.write_text("<lexicon><lexeme><grapheme>a</grapheme></lexeme></lexicon>")
    config.write_text("models:\n  - id: espeak\n    engine: espeak\n"
                      f"    lexicons: [{broken}]\n")
    failed = subprocess.run([voxserve_bin, "--config", str(config), "--port", "0"],
                            capture_output=True, text=True, timeout=60)
    assert failed.returncode == 2, failed.stderr
    assert "broken.pls" in failed.stderr and "line 1" in failed.stderr


def test_the_cache_keys_on_the_version_and_forgets_a_changed_dictionary(make_server, tmp_path):
    server = make_server("--dictionaries-dir", str(tmp_path / "d"), "--cache-enabled", "true")
    rules = add_rules(server, [alias("WWW", "World Wide Web")])

    def request():
        return requests.post(server.url + "/v1/audio/speech", json={
            "model": "tts-1", "input": "Visit WWW.", "voice": "en-us", "response_format": "wav",
            "pronunciation_dictionary_locators": [locator(rules["id"])]}, timeout=60)
    first, second = request(), request()
    assert (first.headers["x-cache"], second.headers["x-cache"]) == ("miss", "hit")
    assert first.content == second.content
    requests.post(f"{server.url}{API}/{rules['id']}/set-rules",
                  json={"rules": [alias("WWW", "the web")]}, timeout=10)
    changed = request()
    assert changed.headers["x-cache"] == "miss"
    assert changed.content == speak(server, "Visit the web.")


def test_locators_in_elevenlabs_stream_input_first_message(dict_server):
    rules = add_rules(dict_server, [alias("WWW", "World Wide Web")])

    async def talk(text, locators=None):
        first = {"text": " "}
        if locators:
            first["pronunciation_dictionary_locators"] = locators
        url = (f"ws://127.0.0.1:{dict_server.port}/elevenlabs/v1/text-to-speech/en-us/"
               "stream-input?output_format=pcm_16000")
        audio = b""
        async with websockets.connect(url, max_size=None) as ws:
            await ws.send(json.dumps(first))
            await ws.send(json.dumps({"text": text}))
            await ws.send(json.dumps({"text": ""}))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 60))
                assert "error" not in message, message
                if message.get("audio"):
                    audio += base64.b64decode(message["audio"])
                if message.get("isFinal"):
                    return audio
    use = [locator(rules["id"], rules["version_id"])]
    assert asyncio.run(talk("Visit WWW today. ", use)) == \
        asyncio.run(talk("Visit World Wide Web today. "))
