"""A CosyVoice bundle through the real binary: `voxserve check-model` / `verify-bundle` on the
tiny random-weight bundle and a broken copy, and an `engine: cosyvoice` model loaded from the
config (listed with the voice_cloning capability; a voice that is not a cloned one gets a clear
error). Synthesis with a cloned voice: test_onnx_cosyvoice_synthesis.py.

The bundle is the one the unit tests' CTest fixture wrote (build/test-models/cosyvoice-tiny),
or is written here by tools/cosyvoice_export/export.py; both need VOXSERVE_COSYVOICE_REF (an
upstream CosyVoice checkout) and the tests skip without it.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest
import requests

from voice_file import stored_tensors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPORT = os.path.join(ROOT, "tools", "cosyvoice_export", "export.py")


def tiny_bundle(voxserve_bin, tmp_path_factory, name, *export_args):
    """The tiny bundle a unit-test CTest fixture wrote (build/test-models/NAME), or one exported
    here with export_args."""
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        pytest.skip("VOXSERVE_COSYVOICE_REF is unset: no upstream CosyVoice to build a bundle from")
    built = os.path.join(os.path.dirname(os.path.dirname(voxserve_bin)), "test-models", name)
    if os.path.exists(os.path.join(built, "manifest.json")):
        return built
    out = str(tmp_path_factory.mktemp(name) / "tiny")
    subprocess.run(["/usr/bin/python3", EXPORT, "--random-weights", "--size", "tiny", *export_args,
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="module")
def bundle(voxserve_bin, tmp_path_factory):
    return tiny_bundle(voxserve_bin, tmp_path_factory, "cosyvoice-tiny")


def run(voxserve_bin, *args):
    return subprocess.run([voxserve_bin, *args], capture_output=True, text=True, timeout=120)


def broken_copy(bundle, tmp_path, edit, drop=()):
    """Symlinks to the bundle's files with an edited manifest.json."""
    out = tmp_path / "broken"
    out.mkdir()
    for name in os.listdir(bundle):
        if name != "manifest.json" and name not in drop:
            os.symlink(os.path.abspath(os.path.join(bundle, name)), out / name)
    with open(os.path.join(bundle, "manifest.json")) as f:
        manifest = json.load(f)
    edit(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))
    return str(out)


def test_check_model_accepts_the_tiny_bundle(voxserve_bin, bundle):
    result = run(voxserve_bin, "check-model", bundle)
    assert result.returncode == 0, result.stderr
    assert "valid cosyvoice2 bundle" in result.stdout
    assert "graph llm_step" in result.stdout and "tensor rand_noise" in result.stdout


def test_check_model_lists_every_problem_by_name(voxserve_bin, bundle, tmp_path):
    def edit(m):
        m["graphs"]["campplus"]["inputs"][0]["name"] = "fbank"
        m["graphs"]["speech_tokenizer"]["outputs"][0]["dtype"] = "int32"
    broken = broken_copy(bundle, tmp_path, edit, drop=("hift_f0.onnx",))
    result = run(voxserve_bin, "check-model", broken)
    assert result.returncode == 1, result.stdout
    assert "graph hift_f0: file hift_f0.onnx missing" in result.stderr
    assert "graph campplus input 'fbank': not in campplus.onnx (it has: input)" in result.stderr
    assert "graph speech_tokenizer output 'indices': dtype: manifest int32" in result.stderr


def test_check_model_usage_and_missing_directory(voxserve_bin, tmp_path):
    assert run(voxserve_bin, "check-model").returncode == 2
    result = run(voxserve_bin, "check-model", str(tmp_path / "none"))
    assert result.returncode == 1 and "not a directory" in result.stderr


def test_verify_bundle_reports_every_onnx_stage_within_tolerance(voxserve_bin, bundle):
    result = run(voxserve_bin, "verify-bundle", bundle)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    for stage in ("campplus", "speech_tokenizer", "llm.prefill/0", "flow.encoder/1",
                  "flow.estimator/0", "hift.f0/1", "hift.decoder/0", "llm.decode/1",
                  "audio.decode_16k", "audio.fbank", "audio.whisper_logmel", "audio.prompt_mel",
                  "frontend.align", "text.tokens/prompt", "text.tokens/1", "flow.full/0",
                  "flow.full/1", "hift.source/0", "hift.full/1"):
        assert lines[stage].endswith(" ok"), lines[stage]
    assert ", 0 not implemented yet" in result.stdout, result.stdout


def test_the_engine_loads_lists_cloning_and_answers_a_non_cloned_voice_with_a_clear_error(
        make_server, bundle, tmp_path):
    config = tmp_path / "voxserve.yaml"
    config.write_text("models:\n  - id: espeak\n"
                      f"  - id: cosyvoice2\n    engine: cosyvoice\n    options: {{path: {bundle}}}\n")
    server = make_server("--config", str(config))
    models = {m["id"]: m for m in requests.get(server.url + "/v1/models", timeout=5).json()["data"]}
    model = models["cosyvoice2"]
    assert model["state"] == "ready" and model["engine"] == "cosyvoice", model
    assert model["capabilities"] == ["voice_cloning"]
    assert "capabilities" not in models["espeak"]
    response = requests.post(server.url + "/v1/audio/speech", timeout=30,
                             json={"model": "cosyvoice2", "input": "Hello.", "voice": "anyone"})
    # The engine has no voices of its own: only cloned ones (test_onnx_cosyvoice_synthesis.py).
    assert response.status_code == 404, response.text
    assert response.json()["error"]["param"] == "voice", response.text
    assert requests.get(server.url + "/health/live", timeout=5).status_code == 200


def test_a_broken_bundle_fails_that_model_with_check_models_message(make_server, bundle, tmp_path):
    broken = broken_copy(bundle, tmp_path, lambda m: None, drop=("llm_step.onnx",))
    config = tmp_path / "voxserve.yaml"
    config.write_text("skip_broken_models: true\nmodels:\n  - id: espeak\n"
                      f"  - id: cv\n    engine: cosyvoice\n    options: {{path: {broken}}}\n")
    server = make_server("--config", str(config))
    model = next(m for m in requests.get(server.url + "/v1/models", timeout=5).json()["data"]
                 if m["id"] == "cv")
    assert model["state"] == "failed", model
    assert "graph llm_step: file llm_step.onnx missing" in model["error"], model


def test_export_from_a_model_directory_copies_upstream_graphs_and_verifies(voxserve_bin, tmp_path):
    """export.py --model-dir on a fake CosyVoice2 directory (tiny widths, random checkpoints):
    the prompt encoders copied, the flow estimator exported from the checkpoint with a dynamic
    rows axis (--estimator-batch fixed: upstream's file as it is)."""
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        pytest.skip("VOXSERVE_COSYVOICE_REF is unset: no upstream CosyVoice to export with")
    model_dir, out = tmp_path / "CosyVoice2-fake", tmp_path / "bundle"
    tools = os.path.join(ROOT, "tools", "cosyvoice_export")
    subprocess.run(["/usr/bin/python3", os.path.join(tools, "fake_model_dir.py"), str(model_dir)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["/usr/bin/python3", EXPORT, "--model-dir", str(model_dir), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checked = run(voxserve_bin, "check-model", str(out))
    assert checked.returncode == 0, checked.stderr
    assert "(format 2, checkpoint)" in checked.stdout
    assert "flow.decoder.estimator.fp32.onnx (export)" in checked.stdout
    import onnx
    estimator = onnx.load(str(out / "flow.decoder.estimator.fp32.onnx"), load_external_data=False)
    assert estimator.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "rows"
    verified = run(voxserve_bin, "verify-bundle", str(out))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "llm.decode/1" in verified.stdout and " 0 failed" in verified.stdout

    # A Job that runs again (--skip-if-current) keeps a bundle of the same checkpoint files and
    # exports again once one of them changed.
    def export_again():
        return subprocess.run(["/usr/bin/python3", EXPORT, "--model-dir", str(model_dir), "--out",
                               str(out), "--skip-if-current", "--no-goldens"],
                              check=True, capture_output=True, text=True).stdout
    exported_at = (out / "manifest.json").stat().st_mtime_ns
    assert "is current" in export_again()
    assert (out / "manifest.json").stat().st_mtime_ns == exported_at
    os.utime(model_dir / "hift.pt")
    assert "is current" not in export_again()
    assert run(voxserve_bin, "check-model", str(out)).returncode == 0


def test_voice_cloning_runs_the_cosyvoice_frontend_through_rest_and_grpc(make_server, bundle,
                                                                       tmp_path):
    """The real cloner: the prompt decoded, resampled, its features and both ONNX graphs run,
    the transcript normalized and tokenized; the profile stored and usable after a restart."""
    import numpy as np
    from grpc_support import channel, stubs
    voices_dir = tmp_path / "voices"
    config = tmp_path / "voxserve.yaml"
    config.write_text(f"voices: {{dir: {voices_dir}}}\nmodels:\n  - id: espeak\n"
                      f"  - id: cosyvoice2\n    engine: cosyvoice\n    options: {{path: {bundle}}}\n")
    server = make_server("--config", str(config))
    prompt = open(os.path.join(bundle, "goldens", "prompt.wav"), "rb").read()
    created = requests.post(server.url + "/v1/audio/voices", timeout=120,
                            data={"name": "Prompt Voice", "model": "cosyvoice2",
                                  "transcript": "This is a short prompt recording."},
                            files={"audio_sample": ("prompt.wav", prompt, "audio/wav")})
    assert created.status_code == 200, created.text
    voice = created.json()
    assert voice["family"] == "cosyvoice2" and voice["model"] == "cosyvoice2"
    meta, tensors = stored_tensors(voices_dir, voice["id"])
    assert tensors["speaker_embedding"].shape == (192,)
    tokens, mel = tensors["prompt_speech_tokens"], tensors["prompt_mel"]
    assert mel.shape == (2 * len(tokens), 80), "CosyVoice2's 2:1 token/mel alignment"
    # 25 speech tokens per second of prompt.
    assert abs(len(tokens) - 25 * voice["prompt_seconds"]) <= 2
    assert ((tokens >= 0) & (tokens < 6561)).all()
    golden_ids = np.load(os.path.join(bundle, "goldens", "text.tokens", "prompt", "ids.npy"))
    assert list(tensors["transcript_tokens"]) == list(golden_ids)
    # The speaker embedding of the same recording as the export tool's goldens compute it
    # (tools/cosyvoice_export/features.py, our torch re-implementation of upstream's feature
    # steps, then the CAM++ stand-in in torch): not bit-equal, as soxr and torchaudio resample
    # differently, but the same direction. Upstream's frontend.py itself is the oracle of
    # test_onnx_cosyvoice_frontend_oracle.py.
    golden = np.load(os.path.join(bundle, "goldens", "campplus", "embedding.npy")).reshape(-1)
    found = tensors["speaker_embedding"]
    cosine = float(found @ golden / (np.linalg.norm(found) * np.linalg.norm(golden)))
    assert cosine > 0.99, cosine
    listed = {v["id"] for v in requests.get(server.url + "/v1/voices?model=cosyvoice2",
                                            timeout=10).json()["data"]}
    assert voice["id"] in listed

    # Bad prompts: clear 4xx, nothing stored.
    import io
    import soundfile
    def wav(samples, rate):
        buffer = io.BytesIO()
        soundfile.write(buffer, samples, rate, format="WAV", subtype="PCM_16")
        return buffer.getvalue()
    tone = lambda seconds, rate: 0.3 * np.sin(2 * np.pi * 220 * np.arange(int(seconds * rate)) / rate)
    for what, audio, status in [("silent", wav(np.zeros(16000), 16000), 400),
                                ("8 kHz", wav(tone(1, 8000), 8000), 400),
                                ("31 s", wav(tone(31, 16000), 16000), 400),
                                ("garbage", b"RIFF" + b"\0" * 100, 400)]:
        r = requests.post(server.url + "/v1/audio/voices", timeout=120,
                          data={"name": what, "model": "cosyvoice2", "transcript": "x"},
                          files={"audio_sample": ("p.wav", audio, "audio/wav")})
        assert r.status_code == status, (what, r.status_code, r.text)
    assert sorted(p.name for p in voices_dir.iterdir()) == [voice["id"] + ".voice"]

    s = stubs()
    with channel(server) as ch:
        client = s.rpc.TextToSpeechStub(ch)
        other = client.RegisterVoice(s.pb.RegisterVoiceRequest(
            audio_sample=prompt, name="Grpc Prompt", transcript="This is a short prompt recording.",
            model="cosyvoice2"), timeout=120)
        assert other.family == "cosyvoice2" and other.bytes > 0
    _, again = stored_tensors(voices_dir, other.id)
    assert np.array_equal(again["prompt_speech_tokens"], tokens), "the frontend is deterministic"

    assert server.stop() == 0
    server = make_server("--config", str(config))
    ids = {v["id"] for v in requests.get(server.url + "/v1/audio/voices", timeout=10).json()["data"]}
    assert ids == {voice["id"], other.id}
