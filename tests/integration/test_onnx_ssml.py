"""SSML <phoneme> on the engines that speak IPA (docs/ssml.md), through the real server and the
tiny Piper and Kokoro graphs of tests/onnx_models: a <phoneme> whose IPA is what espeak-ng makes
of a text gives exactly that text's audio; pitch is ignored by them (the same bytes)."""
import requests

from test_onnx_models import espeak_ipa, models_root, onnx_server  # noqa: F401 (fixtures)


def speak(server, voice, text, model="tts-1", **fields):
    body = {"model": model, "input": text, "voice": voice, "response_format": "wav"}
    body.update(fields)
    response = requests.post(server.url + "/v1/audio/speech", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return response.content


def test_piper_phoneme_gives_the_bytes_of_the_same_ipa(onnx_server):  # noqa: F811
    # Piper's sentence of "Hello world." is espeak's IPA followed by the full stop.
    ipa = espeak_ipa("Hello world") + "."
    plain = speak(onnx_server, "en_US-test-medium", "Hello world.")
    ssml = speak(onnx_server, "en_US-test-medium",
                 f'<speak><phoneme alphabet="ipa" ph="{ipa}">Hello world.</phoneme></speak>')
    assert ssml == plain
    other = speak(onnx_server, "en_US-test-medium",
                  f'<speak><phoneme alphabet="ipa" ph="{ipa}{ipa}">Hello world.</phoneme></speak>')
    assert len(other) > len(plain)


def test_kokoro_phoneme_gives_the_bytes_of_the_same_ipa(onnx_server):  # noqa: F811
    ipa = espeak_ipa("Hello world", voice="en-gb") + "."
    plain = speak(onnx_server, "bm_test", "Hello world.")
    ssml = speak(onnx_server, "bm_test",
                 f'<speak><phoneme alphabet="ipa" ph="{ipa}">Hello world.</phoneme></speak>')
    assert ssml == plain


def test_pitch_is_ignored_by_piper(onnx_server):  # noqa: F811
    plain = speak(onnx_server, "en_US-test-medium", "Hello world.")
    high = speak(onnx_server, "en_US-test-medium",
                 '<speak><prosody pitch="x-high">Hello world.</prosody></speak>')
    assert high == plain


def test_a_dictionarys_ipa_rule_on_piper_gives_the_bytes_of_ssml_phoneme(  # noqa: F811
        make_server, models_root, tmp_path):
    # docs/pronunciation-dictionaries.md: a phoneme rule takes <phoneme>'s path on Piper.
    server = make_server("--models", str(models_root / "models"),
                         "--dictionaries-dir", str(tmp_path / "dictionaries"))
    ipa = espeak_ipa("Hello world") + "."
    added = requests.post(server.url + "/v1/pronunciation-dictionaries/add-from-rules", json={
        "name": "hello", "rules": [{"type": "phoneme", "string_to_replace": "Greetings.",
                                    "phoneme": ipa, "alphabet": "ipa",
                                    "word_boundaries": False}]}, timeout=10)
    assert added.status_code == 200, added.text
    with_rule = speak(server, "en_US-test-medium", "Greetings.",
                      pronunciation_dictionary_locators=[
                          {"pronunciation_dictionary_id": added.json()["id"]}])
    ssml = speak(server, "en_US-test-medium",
                 f'<speak><phoneme alphabet="ipa" ph="{ipa}">Greetings.</phoneme></speak>')
    assert with_rule == ssml == speak(server, "en_US-test-medium", "Hello world.")
