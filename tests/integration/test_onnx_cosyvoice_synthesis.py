"""CosyVoice synthesis end to end through the real binary, on the tiny random-weight bundle: a
voice registered through REST, then text -> LLM tokens -> flow -> HiFT -> 24 kHz audio through
REST (whole and SSE), gRPC and concurrent requests; the same request gives the same audio.

What the audio can be checked against with random weights: its rate (24 kHz), and its length,
which is whole speech tokens (2 mel frames x 480 samples = 960 samples each, at speed 1) and at
most max_len = 20 x the text's tokens per sentence (llm.py:498; a token is at least one byte of
text, so 20 x the sentence's bytes bounds it). The bundle comes from test_onnx_cosyvoice.py's
fixture (VOXSERVE_COSYVOICE_REF; skipped without it).
"""
import base64
import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from audio_check import decode
from conftest import VoxServer
from test_onnx_cosyvoice import bundle  # noqa: F401 (the fixture)

SAMPLES_PER_TOKEN = 960
TRANSCRIPT = "This is a short prompt recording."


def start_cloning_server(voxserve_bin, bundle, root, options="", scheduling=""):  # noqa: F811
    config = root / "voxserve.yaml"
    config.write_text(f"voices: {{dir: {root / 'voices'}}}\nmodels:\n  - id: espeak\n"
                      f"  - id: cosyvoice2\n    engine: cosyvoice\n"
                      f"    options: {{path: {bundle}, max_active: 4{options}}}\n"
                      + (f"    scheduling: {{{scheduling}}}\n" if scheduling else ""))
    server = VoxServer(voxserve_bin, ["--config", str(config)]).start()
    prompt = open(os.path.join(bundle, "goldens", "prompt.wav"), "rb").read()
    created = requests.post(server.url + "/v1/audio/voices", timeout=120,
                            data={"name": "Prompt Voice", "model": "cosyvoice2",
                                  "transcript": TRANSCRIPT},
                            files={"audio_sample": ("prompt.wav", prompt, "audio/wav")})
    assert created.status_code == 200, created.text
    server.voice_id = created.json()["id"]
    return server


@pytest.fixture(scope="module")
def cloning_server(voxserve_bin, bundle, tmp_path_factory):  # noqa: F811
    server = start_cloning_server(voxserve_bin, bundle, tmp_path_factory.mktemp("cosyvoice"))
    yield server
    code = server.stop()
    assert code == 0, "voxserve exited with %d:\n%s" % (code, server.log())


def speech(server, text, voice, **fields):
    return requests.post(server.url + "/v1/audio/speech", timeout=300, json={
        "model": "cosyvoice2", "input": text, "voice": voice, **fields})


def check_length(samples, sentences):
    assert len(samples) > 0
    assert len(samples) % SAMPLES_PER_TOKEN == 0, len(samples)
    bound = sum(20 * len(s.encode()) for s in sentences) * SAMPLES_PER_TOKEN
    assert len(samples) <= bound, (len(samples), bound)


def test_rest_wav_is_24khz_whole_tokens_and_the_same_request_gives_the_same_audio(
        cloning_server):
    text = "Hello there."
    first = speech(cloning_server, text, cloning_server.voice_id, response_format="wav")
    assert first.status_code == 200, first.text
    assert first.headers["Content-Type"] == "audio/wav"
    audio = decode(first.content, "wav")
    assert audio.sample_rate == 24000
    check_length(audio.samples, [text])
    again = speech(cloning_server, text, cloning_server.voice_id, response_format="wav")
    assert again.content == first.content, "same request (fixed seed), same audio"
    # The voice's name (case-insensitive) names the same voice.
    by_name = speech(cloning_server, text, "prompt voice", response_format="wav")
    assert by_name.status_code == 200, by_name.text
    assert by_name.content == first.content
    # Another text, other audio.
    other = speech(cloning_server, "Good morning.", cloning_server.voice_id, response_format="wav")
    assert other.status_code == 200 and other.content != first.content


def test_sse_stream_carries_each_sentence_and_equals_the_whole_response(cloning_server):
    sentences = ["Hello there.", "Good morning to you."]
    text = " ".join(sentences)
    whole = speech(cloning_server, text, cloning_server.voice_id, response_format="pcm")
    assert whole.status_code == 200, whole.text
    check_length(decode(whole.content, "pcm").samples, sentences)
    streamed = speech(cloning_server, text, cloning_server.voice_id, response_format="pcm",
                      stream_format="sse")
    assert streamed.status_code == 200, streamed.text
    assert streamed.headers["Content-Type"] == "text/event-stream"
    events = [json.loads(block[len("data: "):]) for block in streamed.text.split("\n\n")
              if block.strip()]
    deltas = [e for e in events if e["type"] == "speech.audio.delta"]
    assert len(deltas) >= 2, "a chunk per sentence at least"
    assert events[-1]["type"] == "speech.audio.done"
    assert b"".join(base64.b64decode(e["audio"]) for e in deltas) == whole.content


def sse_deltas(response):
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "text/event-stream"
    events = [json.loads(block[len("data: "):]) for block in response.text.split("\n\n")
              if block.strip()]
    assert events[-1]["type"] == "speech.audio.done"
    return [base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta"]


def test_streaming_option_sends_one_sentence_in_several_chunks(voxserve_bin, bundle,  # noqa: F811
                                                                tmp_path):
    """options.streaming: upstream's token hops; one sentence (random weights: it runs to the
    flow's 300-token limit, far past the first hop) streams as more than one delta."""
    server = start_cloning_server(voxserve_bin, bundle, tmp_path, ", streaming: true")
    try:
        text = "Good morning."
        whole = speech(server, text, server.voice_id, response_format="pcm")
        assert whole.status_code == 200, whole.text
        check_length(decode(whole.content, "pcm").samples, [text])
        deltas = sse_deltas(speech(server, text, server.voice_id, response_format="pcm",
                                   stream_format="sse"))
        assert len(deltas) >= 2, "the first token hop comes before the sentence's end"
        assert b"".join(deltas) == whole.content
    finally:
        assert server.stop() == 0, server.log()


def test_grpc_synthesize_with_the_cloned_voice_gives_the_rest_audio(cloning_server):
    from grpc_support import channel, stubs
    text = "Hello there."
    rest = decode(speech(cloning_server, text, cloning_server.voice_id,
                         response_format="wav").content, "wav")
    pb = stubs().pb
    with channel(cloning_server) as ch:
        response = stubs().rpc.TextToSpeechStub(ch).Synthesize(
            pb.SynthesizeRequest(text=text, options=pb.SynthesisOptions(
                model="cosyvoice2", voice=cloning_server.voice_id)), timeout=300)
    assert response.sample_rate == 24000
    audio = decode(response.audio, "wav")
    assert list(audio.samples) == list(rest.samples)


def test_unknown_and_non_cloned_voices_get_a_clear_404(cloning_server):
    for voice in ["nobody-here", "alloy", "en-us"]:
        response = speech(cloning_server, "Hello.", voice)
        assert response.status_code == 404, (voice, response.status_code, response.text)
        error = response.json()["error"]
        assert error["param"] == "voice" and error["message"], error


def test_four_concurrent_requests_complete_with_the_audio_each_gets_alone(cloning_server):
    texts = ["Hello there.", "Good morning.", "How are you?", "See you soon."]
    alone = {t: speech(cloning_server, t, cloning_server.voice_id, response_format="pcm").content
             for t in texts}
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda t: speech(cloning_server, t, cloning_server.voice_id,
                                                  response_format="pcm"), texts))
    for text, response in zip(texts, together):
        assert response.status_code == 200, response.text
        assert response.content == alone[text], "batching changes no segment's audio"


def test_elevenlabs_seed_picks_the_sampling_and_repeats(cloning_server):
    """ElevenLabs' `seed` reaches the engine: the same seed gives the same audio, another seed
    other audio (RAS draws and HiFT noise); without one the engine's fixed default applies."""
    def tts(**body):
        response = requests.post(
            f"{cloning_server.url}/elevenlabs/v1/text-to-speech/{cloning_server.voice_id}",
            params={"output_format": "pcm_24000"}, timeout=300,
            json={"text": "Hello there.", "model_id": "cosyvoice2", **body})
        assert response.status_code == 200, response.text
        return response.content
    seeded = tts(seed=7)
    assert tts(seed=7) == seeded
    assert tts(seed=8) != seeded
    unseeded = speech(cloning_server, "Hello there.", cloning_server.voice_id,
                      response_format="pcm").content
    assert tts() == unseeded
