"""Text normalization (text.normalize, docs/text-normalization.md) through the real binary on the
tiny Piper and Kokoro test graphs (tests/onnx_models/make_test_models.py), whose audio is a
function of the phoneme ids espeak-ng makes of the text: "3.5 kg" must give exactly the bytes of
the words the rules write out ("three point five kilograms"), and so must a date, a time and an
amount of money; with normalization off (by config, or per request) the bytes differ (except for
the time, which espeak-ng reads as "fifteen thirty" itself).

The expected words are written here by hand from the rules (and the unit tests' tables,
tests/unit/text/normalization/en.txt), not read from the server."""
import os
import subprocess
import sys

import pytest
import requests

from conftest import VoxServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "onnx_models"))
import make_test_models as tm  # noqa: E402

TIMEOUT = 60

CASES = [
    ("It weighs 3.5 kg.", "It weighs three point five kilograms."),
    ("Due 2026-12-02.", "Due December second, twenty twenty-six."),
    ("Meet at 15:30.", "Meet at fifteen thirty."),
    ("It costs $12.50.", "It costs twelve dollars and fifty cents."),
    ("Dr. Lee is 50% sure.", "Doctor Lee is fifty percent sure."),
]
# Where espeak-ng's own reading differs from the rules' (it reads "15:30" as "fifteen thirty"
# itself, so that case sounds the same either way): with normalization off these must differ.
DIFFERING = [CASES[0], CASES[1], CASES[3]]
VOICES = [("en_US-test-medium", "en_US-test-medium"), ("kokoro-v1.0", "af_test")]


@pytest.fixture(scope="module")
def models_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("onnx_models")
    subprocess.run([sys.executable, tm.__file__, "--out", str(root)], check=True,
                   stdout=subprocess.DEVNULL)
    return root


def serve(voxserve_bin, models_root, *flags):
    return VoxServer(voxserve_bin, ["--models", str(models_root / "models"), *flags]).start()


@pytest.fixture(scope="module")
def normalizing(voxserve_bin, models_root):
    instance = serve(voxserve_bin, models_root)  # text.normalize defaults to true
    yield instance
    assert instance.stop() == 0, instance.log()


def speak(server, model, voice, text, **fields):
    body = {"model": model, "voice": voice, "input": text, "response_format": "wav", **fields}
    response = requests.post(server.url + "/v1/audio/speech", json=body, timeout=TIMEOUT)
    assert response.status_code == 200, response.text
    assert len(response.content) > 1000
    return response.content


@pytest.mark.parametrize("model,voice", VOICES)
@pytest.mark.parametrize("written,spoken", CASES)
def test_written_forms_sound_exactly_like_their_words(normalizing, model, voice, written, spoken):
    assert speak(normalizing, model, voice, written) == speak(normalizing, model, voice, spoken)


@pytest.mark.parametrize("model,voice", VOICES)
def test_a_request_may_turn_it_off(normalizing, model, voice):
    written, spoken = CASES[0]
    words = speak(normalizing, model, voice, spoken)
    assert speak(normalizing, model, voice, written, apply_text_normalization="off") != words
    assert speak(normalizing, model, voice, written, apply_text_normalization="auto") == words


def test_the_config_turns_it_off_and_a_request_back_on(voxserve_bin, models_root):
    server = serve(voxserve_bin, models_root, "--text-normalize", "false")
    try:
        model, voice = VOICES[0]
        for written, spoken in DIFFERING:
            words = speak(server, model, voice, spoken)
            assert speak(server, model, voice, written) != words, written
            assert speak(server, model, voice, written, apply_text_normalization="on") == words
    finally:
        assert server.stop() == 0, server.log()


def test_elevenlabs_apply_text_normalization_is_honoured(normalizing):
    written, spoken = DIFFERING[1]

    def tts(text, **body):
        response = requests.post(
            f"{normalizing.url}/elevenlabs/v1/text-to-speech/en_US-test-medium",
            params={"output_format": "pcm_16000"}, timeout=TIMEOUT,
            json={"text": text, "model_id": "en_US-test-medium", **body})
        assert response.status_code == 200, response.text
        return response.content

    assert tts(written) == tts(spoken)
    assert tts(written, apply_text_normalization="off") != tts(spoken)
    bad = requests.post(f"{normalizing.url}/elevenlabs/v1/text-to-speech/en_US-test-medium",
                        json={"text": written, "apply_text_normalization": 3}, timeout=TIMEOUT)
    assert bad.status_code in (400, 422), bad.text
