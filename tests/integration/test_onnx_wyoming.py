"""Wyoming (docs/wyoming.md) with the ONNX engines, through the reference client Home Assistant
uses ($VOXSERVE_WYOMING_REF): Piper files (the tiny graphs of tests/onnx_models) listed with their
languages and speakers and chosen by name, speaker and language; a cloned CosyVoice voice on the
tiny random-weight bundle (test_onnx_cosyvoice.py's fixture) listed and spoken, whole and
streamed. Each answer is checked against the same text over REST."""
import os
import subprocess
import sys

import pytest
import requests

from conftest import VoxServer
from test_onnx_cosyvoice import bundle  # noqa: F401 (the fixture)
from wyoming_support import (TIMEOUT, Speech, client, read_until, reference, rest_pcm, run,
                             start_wyoming_server, synthesize)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "onnx_models"))
import make_test_models as tm  # noqa: E402

TRANSCRIPT = "This is a short prompt recording."


async def describe(server):
    wy = reference()
    async with client(server) as connection:
        await connection.write_event(wy.info.Describe().event())
        info = await read_until(connection, {"info"})
    return {v.name: v for v in wy.info.Info.from_event(info).tts[0].voices}


async def stream(server, pieces, **voice):
    """synthesize-start, the pieces as synthesize-chunks, synthesize-stop: the events after."""
    wy = reference()
    events = []
    async with client(server) as connection:
        start = wy.tts.SynthesizeStart(voice=wy.tts.SynthesizeVoice(**voice))
        await connection.write_event(start.event())
        for piece in pieces:
            await connection.write_event(wy.tts.SynthesizeChunk(text=piece).event())
        await connection.write_event(wy.tts.SynthesizeStop().event())
        await read_until(connection, {"synthesize-stopped", "error"}, events)
    return Speech(events)


# --- Piper -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def piper_server(voxserve_bin, tmp_path_factory):
    reference()  # skips the module's Piper tests without the reference client
    root = tmp_path_factory.mktemp("onnx_models")
    subprocess.run([sys.executable, tm.__file__, "--out", str(root)], check=True,
                   stdout=subprocess.DEVNULL)
    server = start_wyoming_server(voxserve_bin, "--models", str(root / "models"))
    yield server
    assert server.stop() == 0, server.log()


def test_piper_files_are_listed_with_their_languages_and_speakers(piper_server):
    voices = run(describe(piper_server))
    multi = voices["en_US-multi-medium"]
    assert [s.name for s in multi.speakers] == ["alice", "bob", "carol"]
    assert multi.languages == ["en_US"] and multi.attribution.name == "Piper"
    assert voices["en_US-test-medium"].speakers is None
    assert voices["de_DE-test-medium"].languages == ["de_DE"]
    assert voices["af_test"].attribution.name == "Kokoro"
    assert not any(":" in name for name in voices), "speakers are not voices of their own"


@pytest.mark.parametrize("speaker", ["alice", "bob", "carol"])
def test_a_speaker_of_a_piper_file_speaks_as_over_rest(piper_server, speaker):
    text = "Hello world."
    speech = run(synthesize(piper_server, text, name="en_US-multi-medium", speaker=speaker))
    assert speech.types[-1] == "audio-stop", speech.types
    rate, rest = rest_pcm(piper_server, text, "en_US-multi-medium:" + speaker,
                          model="en_US-multi-medium")
    assert speech.rate == rate == tm.PIPER_RATE
    assert speech.pcm == rest


def test_a_language_picks_its_piper_voice_and_an_unknown_speaker_is_an_error(piper_server):
    speech = run(synthesize(piper_server, "Hallo Welt.", language="de_DE"))
    assert speech.pcm == rest_pcm(piper_server, "Hallo Welt.", "de_DE-test-medium",
                                  model="de_DE-test-medium")[1]
    error = run(synthesize(piper_server, "Hi.", name="en_US-multi-medium", speaker="dave"))
    assert error.types == ["error"] and error.events[0].data["code"] == "speaker_not_found"


def test_a_piper_stream_gives_each_sentence_its_audio(piper_server):
    sentences = ["Hello world.", "How are you today?"]
    speech = run(stream(piper_server, ["Hello wo", "rld. How are", " you today?"],
                        name="en_US-test-medium"))
    assert speech.types[-1] == "synthesize-stopped", speech.types
    per_sentence = speech.sentences()
    assert len(per_sentence) == 2
    for sentence, pcm in zip(sentences, per_sentence):
        assert pcm == rest_pcm(piper_server, sentence, "en_US-test-medium",
                               model="en_US-test-medium")[1], sentence


# --- a cloned CosyVoice voice --------------------------------------------------------------

@pytest.fixture(scope="module")
def cloning_server(voxserve_bin, bundle, tmp_path_factory):  # noqa: F811
    reference()
    root = tmp_path_factory.mktemp("cosyvoice_wyoming")
    config = root / "voxserve.yaml"
    config.write_text(f"voices: {{dir: {root / 'voices'}}}\nmodels:\n  - id: espeak\n"
                      f"  - id: cosyvoice2\n    engine: cosyvoice\n"
                      f"    options: {{path: {bundle}, max_active: 4}}\n")
    server = VoxServer(voxserve_bin, ["--config", str(config), "--wyoming-enabled", "true",
                                      "--wyoming-port", "0"]).start()
    prompt = open(os.path.join(bundle, "goldens", "prompt.wav"), "rb").read()
    created = requests.post(server.url + "/v1/audio/voices", timeout=120,
                            data={"name": "Prompt Voice", "model": "cosyvoice2",
                                  "transcript": TRANSCRIPT},
                            files={"audio_sample": ("prompt.wav", prompt, "audio/wav")})
    assert created.status_code == 200, created.text
    server.voice_id = created.json()["id"]
    yield server
    assert server.stop() == 0, server.log()


def test_a_cloned_voice_is_listed_and_speaks_over_wyoming_as_over_rest(cloning_server):
    voice_id = cloning_server.voice_id
    voices = run(describe(cloning_server))
    cloned = voices[voice_id]
    assert cloned.description == "cloned voice 'Prompt Voice'"
    assert cloned.attribution.name == "CosyVoice" and cloned.installed
    text = "Hello there."
    speech = run(synthesize(cloning_server, text, name=voice_id), timeout=4 * TIMEOUT)
    assert speech.types[-1] == "audio-stop", speech.types
    rate, rest = rest_pcm(cloning_server, text, voice_id, model="cosyvoice2")
    assert speech.rate == rate == 24000
    assert len(speech.pcm) > 0 and speech.pcm == rest, "the same request (fixed seed), the same audio"


def test_a_cloned_voice_streams_sentence_by_sentence(cloning_server):
    voice_id = cloning_server.voice_id
    sentences = ["Hello there.", "Good morning."]
    speech = run(stream(cloning_server, ["Hello th", "ere. Good mor", "ning."], name=voice_id),
                 timeout=4 * TIMEOUT)
    assert speech.types[-1] == "synthesize-stopped", speech.types
    per_sentence = speech.sentences()
    assert len(per_sentence) == 2
    for sentence, pcm in zip(sentences, per_sentence):
        assert pcm == rest_pcm(cloning_server, sentence, voice_id, model="cosyvoice2")[1], sentence
