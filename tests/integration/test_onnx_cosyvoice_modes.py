"""CosyVoice's modes through every API, on the tiny random-weight bundle with the real binary:
zero-shot (the default for a voice registered with its transcript), cross-lingual and instruct
(voice_mode, instructions), and the seed, through REST (/v1/audio/speech, /v1/synthesize), gRPC
and a WebSocket incremental-text session; bad values get a 400 with a JSON error naming the
field. What the LLM is given in each mode is checked against upstream's frontend by
unit_engine_cosyvoice_llm (llm_prompt_modes_test.cc); here: each mode reaches the engine (the
audio changes with it, a mode is repeatable) and the APIs agree.
"""
import asyncio
import base64
import json
import os
import signal

import grpc
import pytest
import requests
import websockets

from audio_check import decode
from probes import wait_for, workers_of
from test_onnx_cosyvoice import bundle  # noqa: F401 (the fixture)
from test_onnx_cosyvoice_synthesis import start_cloning_server

# Short: with random weights the LLM runs to max_len = 20 x the text's tokens (llm.py:498), and
# the tiny bundle's tokenizer spends about a token per byte; 3 tokens keep a request near 60
# speech tokens.
TEXT = "Hi."
INSTRUCTIONS = "Speak cheerfully."


@pytest.fixture(scope="module")
def server(voxserve_bin, bundle, tmp_path_factory):  # noqa: F811
    server = start_cloning_server(voxserve_bin, bundle, tmp_path_factory.mktemp("modes"))
    # The same recording registered without its transcript: cross-lingual by default.
    prompt = open(os.path.join(bundle, "goldens", "prompt.wav"), "rb").read()
    created = requests.post(server.url + "/v1/audio/voices", timeout=120,
                            data={"name": "No Transcript", "model": "cosyvoice2"},
                            files={"audio_sample": ("prompt.wav", prompt, "audio/wav")})
    assert created.status_code == 200, created.text
    server.bare_voice_id = created.json()["id"]
    yield server
    code = server.stop()
    assert code == 0, "voxserve exited with %d:\n%s" % (code, server.log())


def speech(server, voice=None, text=TEXT, **fields):
    return requests.post(server.url + "/v1/audio/speech", timeout=300, json={
        "model": "cosyvoice2", "input": text, "voice": voice or server.voice_id,
        "response_format": "pcm", **fields})


def fresh_pcm(server, **fields):
    response = speech(server, **fields)
    assert response.status_code == 200, response.text
    assert len(response.content) > 0
    return response.content


_answers = {}


def pcm(server, **fields):
    """The PCM of a request, asked once per server and fields (the tests compare the same few
    requests many times; fresh_pcm asks again where repeating is what is checked)."""
    key = (server.url, json.dumps(fields, sort_keys=True))
    if key not in _answers:
        _answers[key] = fresh_pcm(server, **fields)
    return _answers[key]


def test_each_mode_changes_the_audio_and_repeats(server):
    zero_shot = pcm(server, seed=7)
    assert fresh_pcm(server, seed=7) == zero_shot
    assert pcm(server, seed=7, voice_mode="zero_shot") == zero_shot, "the default with a transcript"
    instruct = pcm(server, seed=7, instructions=INSTRUCTIONS)
    assert instruct != zero_shot, "the instructions replace the transcript in the LLM's prompt"
    assert fresh_pcm(server, seed=7, instructions=INSTRUCTIONS) == instruct
    assert pcm(server, seed=7, instructions=INSTRUCTIONS, voice_mode="instruct") == instruct
    assert pcm(server, seed=7, instructions="Whisper it.") not in (instruct, zero_shot)
    cross = pcm(server, seed=7, voice_mode="cross_lingual")
    assert cross not in (zero_shot, instruct)
    assert fresh_pcm(server, seed=7, voice_mode="cross_lingual") == cross


def test_cross_lingual_is_the_default_for_a_voice_without_a_transcript(server):
    """Both voices come from one recording, so their profiles differ only in the transcript,
    which cross-lingual leaves out: the same audio."""
    cross = pcm(server, seed=7, voice_mode="cross_lingual")
    assert pcm(server, seed=7, voice=server.bare_voice_id) == cross
    assert pcm(server, seed=7, voice=server.bare_voice_id, voice_mode="cross_lingual") == cross
    # Instruct mode needs no transcript either.
    assert pcm(server, seed=7, voice=server.bare_voice_id, instructions=INSTRUCTIONS) == \
        pcm(server, seed=7, instructions=INSTRUCTIONS)


def test_seed_on_both_rest_routes_repeats_and_picks_the_sampling(server):
    seeded = pcm(server, seed=7)
    assert fresh_pcm(server, seed=7) == seeded
    assert pcm(server, seed=8) != seeded
    synthesize = requests.post(server.url + "/v1/synthesize", timeout=300, json={
        "model": "cosyvoice2", "text": TEXT, "voice": server.voice_id, "response_format": "pcm",
        "seed": 7})
    assert synthesize.status_code == 200, synthesize.text
    assert synthesize.content == seeded
    instructed = requests.post(server.url + "/v1/synthesize", timeout=300, json={
        "model": "cosyvoice2", "text": TEXT, "voice": server.voice_id, "response_format": "pcm",
        "seed": 7, "instructions": INSTRUCTIONS})
    assert instructed.status_code == 200, instructed.text
    assert instructed.content == pcm(server, seed=7, instructions=INSTRUCTIONS)
    # ElevenLabs' seed is the same seed.
    eleven = requests.post(f"{server.url}/elevenlabs/v1/text-to-speech/{server.voice_id}",
                           params={"output_format": "pcm_24000"}, timeout=300,
                           json={"text": TEXT, "model_id": "cosyvoice2", "seed": 7})
    assert eleven.status_code == 200 and eleven.content == seeded


def grpc_synthesize(server, **options):
    from grpc_support import channel, stubs
    pb = stubs().pb
    with channel(server) as ch:
        return stubs().rpc.TextToSpeechStub(ch).Synthesize(
            pb.SynthesizeRequest(text=TEXT, options=pb.SynthesisOptions(
                model="cosyvoice2", voice=server.voice_id, **options)), timeout=300)


def grpc_samples(server, **options):
    return list(decode(grpc_synthesize(server, **options).audio, "wav").samples)


def test_grpc_seed_voice_mode_and_instructions_give_the_rest_audio(server):
    def rest(**fields):
        return list(decode(pcm(server, **fields), "pcm").samples)
    assert grpc_samples(server, seed=7) == rest(seed=7)
    assert grpc_samples(server, seed=8) == rest(seed=8) != rest(seed=7)
    assert grpc_samples(server, seed=7, instructions=INSTRUCTIONS) == \
        rest(seed=7, instructions=INSTRUCTIONS)
    assert grpc_samples(server, seed=7, voice_mode="cross_lingual") == \
        rest(seed=7, voice_mode="cross_lingual")
    assert grpc_samples(server) == rest(), "no seed: the engine's default on both"


def test_grpc_bad_voice_mode_is_invalid_argument_naming_the_field(server):
    with pytest.raises(grpc.RpcError) as raised:
        grpc_synthesize(server, voice_mode="singing")
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "voice_mode" in raised.value.details()


async def ws_session(server, config, pieces):
    url = f"ws://127.0.0.1:{server.port}/v1/audio/speech/stream"
    items = []
    async with websockets.connect(url, max_size=None, ping_interval=None, open_timeout=60,
                                  close_timeout=60, compression=None) as ws:
        try:  # a refused config closes the connection: later sends may find it closed
            await ws.send(json.dumps(config))
            for piece in pieces:
                await ws.send(json.dumps({"text": piece}))
            await ws.send(json.dumps({"close": True}))
        except websockets.exceptions.ConnectionClosed:
            pass
        try:
            while True:
                message = await asyncio.wait_for(ws.recv(), 300)
                items.append(message if isinstance(message, bytes) else json.loads(message))
        except websockets.exceptions.ConnectionClosed:
            pass
        return items, ws.close_code


def sentences_of(items):
    """[(segment_done text, its audio)] in order."""
    out, pending = [], b""
    for item in items:
        if isinstance(item, bytes):
            pending += item
        elif item["type"] == "segment_done":
            out.append((item["text"], pending))
            pending = b""
    return out


@pytest.mark.parametrize("fields", [{"seed": 7}, {"seed": 7, "instructions": INSTRUCTIONS}],
                         ids=["zero-shot", "instruct"])
def test_websocket_incremental_text_with_a_cloned_voice(server, fields):
    """Text arrives in pieces cut mid-word; each sentence is spoken as it completes, with the
    audio REST gives that sentence alone with the same options."""
    config = {"model": "cosyvoice2", "voice": server.voice_id, "response_format": "pcm", **fields}
    items, close_code = asyncio.run(ws_session(server, config,
                                               ["H", "i. Go", " on."]))
    assert close_code == 1000, items
    events = [item for item in items if isinstance(item, dict)]
    assert events[0]["type"] == "ready" and events[-1]["type"] == "done", events
    spoken = sentences_of(items)
    assert [text for text, _ in spoken] == ["Hi.", "Go on."]
    for text, audio in spoken:
        assert audio == pcm(server, text=text, **fields), text


def test_websocket_bad_voice_mode_is_an_error_event_before_any_text(server):
    items, close_code = asyncio.run(ws_session(server, {"model": "cosyvoice2",
                                                        "voice": server.voice_id,
                                                        "voice_mode": "instruct"}, []))
    errors = [i for i in items if isinstance(i, dict) and i["type"] == "error"]
    assert len(errors) == 1 and errors[0]["status"] == 400, items
    assert errors[0]["error"]["param"] == "instructions"
    assert close_code == 1008


@pytest.mark.parametrize("fields,param,code", [
    ({"voice_mode": "singing"}, "voice_mode", "invalid_voice_mode"),
    ({"voice_mode": 3}, "voice_mode", "invalid_type"),
    ({"voice_mode": "instruct"}, "instructions", "missing_instructions"),
    ({"voice_mode": "zero_shot", "instructions": INSTRUCTIONS}, "voice_mode",
     "invalid_voice_mode"),
    ({"voice_mode": "cross_lingual", "instructions": INSTRUCTIONS}, "voice_mode",
     "invalid_voice_mode"),
    ({"seed": -1}, "seed", "invalid_seed"),
    ({"seed": 1.5}, "seed", "invalid_type"),
    ({"seed": "7"}, "seed", "invalid_type"),
    ({"seed": 2 ** 64}, "seed", None),  # past uint64: nlohmann reads it as a float
    # More tokens than the engine takes as an instruct prompt (kMaxInstructionTokens, 256).
    ({"instructions": "Speak slowly. " * 120}, "instructions", "instructions_too_long"),
], ids=["unknown-mode", "mode-not-string", "instruct-without-instructions",
        "zero-shot-with-instructions", "cross-lingual-with-instructions", "negative-seed",
        "float-seed", "string-seed", "huge-seed", "long-instructions"])
def test_bad_values_are_a_400_naming_the_field(server, fields, param, code):
    response = speech(server, **fields)
    assert response.status_code == 400, (fields, response.status_code, response.text[:200])
    error = response.json()["error"]
    assert error["param"] == param and error["message"], error
    if code:
        assert error["code"] == code, error


def test_zero_shot_for_a_voice_without_a_transcript_is_a_400(server):
    response = speech(server, voice=server.bare_voice_id, voice_mode="zero_shot")
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == "voice_mode" and "transcript" in error["message"], error


def test_espeak_accepts_and_ignores_instructions_and_seed_but_refuses_a_voice_mode(server):
    def espeak(**fields):
        return requests.post(server.url + "/v1/audio/speech", timeout=60, json={
            "model": "espeak", "input": TEXT, "voice": "alloy", "response_format": "pcm",
            **fields})
    plain = espeak()
    assert plain.status_code == 200, plain.text
    ignored = espeak(instructions=INSTRUCTIONS, seed=7)
    assert ignored.status_code == 200 and ignored.content == plain.content
    refused = espeak(voice_mode="cross_lingual")
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["param"] == "voice_mode"


# ONNX Runtime's float sums depend on its thread count, and workers split the cores among
# themselves: both servers run one intra-op thread, so their audio can be compared bit for bit.
ONE_THREAD = ", intra_op_threads: 1"


@pytest.fixture(scope="module")
def process_server(voxserve_bin, bundle, tmp_path_factory):  # noqa: F811
    """The model in two worker processes (scheduling.isolation: process), the same recording
    registered (another voice id, the same profile)."""
    server = start_cloning_server(voxserve_bin, bundle, tmp_path_factory.mktemp("process"),
                                  options=ONE_THREAD,
                                  scheduling="isolation: process, instances: 2")
    yield server
    code = server.stop()
    assert code == 0, "voxserve exited with %d:\n%s" % (code, server.log())


@pytest.fixture(scope="module")
def thread_server(voxserve_bin, bundle, tmp_path_factory):  # noqa: F811
    """The same model in process (isolation: thread), as process_server's reference."""
    server = start_cloning_server(voxserve_bin, bundle, tmp_path_factory.mktemp("thread"),
                                  options=ONE_THREAD)
    yield server
    code = server.stop()
    assert code == 0, "voxserve exited with %d:\n%s" % (code, server.log())


def worker_pids(server):
    """The server's CosyVoice workers (the espeak model beside it has workers of its own)."""
    return workers_of(server, engine="cosyvoice")


def test_worker_processes_speak_a_cloned_voice_as_in_process(thread_server, process_server):
    """A cloned voice's profile, the seed, the mode and the instructions travel to the worker
    with each segment: every mode gives the bytes the in-process model gives."""
    model = next(m for m in requests.get(process_server.url + "/v1/models", timeout=5)
                 .json()["data"] if m["id"] == "cosyvoice2")
    assert model["state"] == "ready", model
    assert len(worker_pids(process_server)) == 2
    for fields in ({}, {"seed": 7}, {"seed": 7, "instructions": INSTRUCTIONS},
                   {"seed": 7, "voice_mode": "cross_lingual"}):
        got = fresh_pcm(process_server, voice=process_server.voice_id, **fields)
        assert got == pcm(thread_server, **fields), fields
    # Two sentences over SSE: each a segment of its own in the workers, in order.
    sse = speech(process_server, voice=process_server.voice_id, seed=7, stream_format="sse",
                 text="Hi. Bye.")
    assert sse.status_code == 200, sse.text
    events = [json.loads(block[len("data: "):]) for block in sse.text.split("\n\n")
              if block.strip()]
    assert events[-1]["type"] == "speech.audio.done", events[-1]
    audio = b"".join(base64.b64decode(e["audio"]) for e in events
                     if e["type"] == "speech.audio.delta")
    assert audio == pcm(thread_server, seed=7, text="Hi. Bye.")


def test_worker_processes_warm_up_their_engines_and_the_parent_only_its_cloning(process_server):
    """Each worker warms up the engine it speaks with; the parent, whose copy only clones
    voices, warms up only cloning (on a GPU, speaking the warm-up texts there as well would take
    the time and the memory of a second engine)."""
    lines = [l for l in process_server.log().splitlines() if "model cosyvoice2 warm-up" in l]
    workers = [l for l in lines if "[worker cosyvoice2 " in l]
    parent = [l for l in lines if "[worker " not in l]  # workers' lines: "[worker MODEL PID]"
    assert len(workers) == 2 and all("warm-up: a voice cloned" in l for l in workers), lines
    assert len(parent) == 1 and "warm-up of cloning: a voice cloned" in parent[0], lines


def stream_samples(server, name):
    """{worker: value} of one streaming-engine metric of the cosyvoice2 model."""
    samples = {}
    for line in requests.get(server.url + "/metrics", timeout=10).text.splitlines():
        if line.startswith(name + "{") and 'model="cosyvoice2"' in line:
            worker = line.split('worker="')[1].split('"')[0]
            samples[worker] = float(line.split()[-1])
    return samples


def test_the_runners_figures_reach_metrics_in_process_and_from_workers(thread_server,
                                                                      process_server):
    """What explains a stall (LLM rows, prefills waiting, tokens, vocoder jobs and their batch)
    is published per instance, from the in-process runner and through the worker protocol."""
    for server, instances in ((thread_server, 1), (process_server, 2)):
        for _ in range(instances):
            assert fresh_pcm(server, voice=server.voice_id)
        tokens = stream_samples(server, "voxserve_stream_tokens_total")
        jobs = stream_samples(server, "voxserve_stream_vocoder_jobs_total")
        batched = stream_samples(server, "voxserve_stream_vocoder_batched_total")
        assert sum(tokens.values()) > 0 and sum(jobs.values()) > 0, (tokens, jobs)
        assert sum(batched.values()) >= sum(jobs.values())
        # Idle again: no row decoding, no prefill waiting, no vocoder job pending.
        for gauge in ("voxserve_stream_decoding", "voxserve_stream_prefill_waiting",
                      "voxserve_stream_vocoder_pending"):
            assert set(stream_samples(server, gauge).values()) <= {0.0}, gauge
    # Engines that do not stream (espeak beside it) have none of these series.
    metrics = requests.get(process_server.url + "/metrics", timeout=10).text
    assert 'voxserve_stream_tokens_total{model="espeak"' not in metrics


def test_a_killed_cosyvoice_worker_is_replaced_and_speaks_again(thread_server, process_server):
    before = worker_pids(process_server)
    os.kill(before[0], signal.SIGKILL)

    def replaced():
        pids = worker_pids(process_server)
        health = requests.get(process_server.url + "/health", timeout=5).json()
        model = next(m for m in health["models"] if m["id"] == "cosyvoice2")
        return len(pids) == 2 and before[0] not in pids and model["instances_live"] == 2

    assert wait_for(replaced, timeout=120), f"worker not replaced: {worker_pids(process_server)}"
    for _ in range(2):  # whichever worker takes each: both speak as in process
        assert fresh_pcm(process_server, voice=process_server.voice_id, seed=7) == \
            pcm(thread_server, seed=7)
