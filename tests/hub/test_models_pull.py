"""`voxserve models pull` against a local stand-in for the Hugging Face hub (hub_stand_in.py; no
network): the hub's cache layout, --include and --dir, resuming a cut or interrupted download
with a Range, digests checked (a corrupt file is not kept), gated and missing repositories, and
the hub's official JavaScript client (@huggingface/hub) reading what voxserve pulled and the
other way round, on one cache."""
import hashlib
import os
import pathlib
import subprocess
import sys

import pytest
import requests

from hub_stand_in import GOOD_TOKEN, NO_ACCESS_TOKEN, HubStandIn, Repo, git_blob_sha1

VOXSERVE = os.environ.get("VOXSERVE_BIN")
JS_DEPS = os.environ.get("HUB_JS_DEPS")  # where tests/hub/package.json was installed
HERE = pathlib.Path(__file__).resolve().parent

LESSAC = "en/en_US/lessac/medium/en_US-lessac-medium.onnx"
THORSTEN = "de/de_DE/thorsten/low/de_DE-thorsten-low.onnx"


def random_bytes(seed, size):
    out = b""
    while len(out) < size:
        out += hashlib.sha256(b"%d:%d" % (seed, len(out))).digest()
    return out[:size]


def piper_voices():
    files = {LESSAC: random_bytes(1, 300_000), LESSAC + ".json": b'{"audio": {"sample_rate": 22050}}',
             THORSTEN: random_bytes(2, 200_000), THORSTEN + ".json": b'{"audio": {"sample_rate": 16000}}',
             "README.md": b"# Piper voices\n"}
    return Repo(files, lfs_paths=[LESSAC, THORSTEN], revisions=("main", "v1.0.0"))


@pytest.fixture
def hub():
    with HubStandIn() as stand_in:
        stand_in.repos["rhasspy/piper-voices"] = piper_voices()
        stand_in.repos["FunAudioLLM/CosyVoice2-0.5B"] = Repo(
            {"llm.pt": random_bytes(3, 100_000), "cosyvoice2.yaml": b"sample_rate: 24000\n"},
            lfs_paths=["llm.pt"], gated=True)
        yield stand_in


def pull(hub, cache, *args, token=None, env=None):
    if not VOXSERVE:
        pytest.skip("VOXSERVE_BIN unset")
    environment = {"PATH": os.environ["PATH"], "HOME": str(cache.parent),
                   "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(cache), **(env or {})}
    if token:
        environment["HF_TOKEN"] = token
    return subprocess.run([VOXSERVE, "models", "pull", *args], capture_output=True, text=True,
                          timeout=120, env=environment)


def repo_dir(cache, repo):
    return cache / ("models--" + repo.replace("/", "--"))


def test_a_pull_fills_the_hubs_cache_layout_and_a_second_is_served_from_it(hub, tmp_path):
    cache = tmp_path / "hub"
    repo = hub.repos["rhasspy/piper-voices"]
    result = pull(hub, cache, "rhasspy/piper-voices")
    assert result.returncode == 0, result.stderr
    folder = repo_dir(cache, "rhasspy/piper-voices")
    snapshot = folder / "snapshots" / repo.commit
    assert result.stdout.strip() == str(snapshot)
    assert (folder / "refs" / "main").read_text() == repo.commit
    for path, data in repo.files.items():
        link = snapshot / path
        assert link.is_symlink() and not os.path.isabs(os.readlink(link)), path
        etag = hashlib.sha256(data).hexdigest() if path in repo.lfs_paths else git_blob_sha1(data)
        assert link.resolve() == (folder / "blobs" / etag).resolve(), path
        assert link.read_bytes() == data, path
    assert not list((folder / "blobs").glob("*.incomplete"))
    assert "5 downloaded" in result.stderr

    # Again, by tag: nothing is downloaded, the tag's ref is written.
    before = len(hub.requests("/resolve/")) + len(hub.requests("/cdn/"))
    again = pull(hub, cache, "rhasspy/piper-voices", "--revision", "v1.0.0")
    assert again.returncode == 0, again.stderr
    assert "0 downloaded" in again.stderr and "5 already in the cache" in again.stderr
    assert len(hub.requests("/resolve/")) + len(hub.requests("/cdn/")) == before
    assert (folder / "refs" / "v1.0.0").read_text() == repo.commit


def test_include_takes_one_voice_and_dir_places_it(hub, tmp_path):
    cache, voice = tmp_path / "hub", tmp_path / "voices"
    result = pull(hub, cache, "rhasspy/piper-voices", "--include", "en/en_US/lessac/medium/*",
                  "--dir", str(voice))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(voice)
    placed = sorted(str(p.relative_to(voice)) for p in voice.rglob("*") if p.is_file())
    assert placed == [LESSAC, LESSAC + ".json"]
    # Hard links to the cache's blobs: no second copy of the weights.
    blob = repo_dir(cache, "rhasspy/piper-voices") / "blobs" / hashlib.sha256(
        hub.repos["rhasspy/piper-voices"].files[LESSAC]).hexdigest()
    assert os.path.samefile(voice / LESSAC, blob)
    assert not hub.requests("thorsten")
    nothing = pull(hub, cache, "rhasspy/piper-voices", "--include", "fr/*")
    assert nothing.returncode == 4 and "matches --include" in nothing.stderr


def test_a_cut_connection_resumes_with_a_range(hub, tmp_path):
    data = hub.repos["rhasspy/piper-voices"].files[LESSAC]
    sha = hashlib.sha256(data).hexdigest()
    hub.cut_once.add(sha)
    result = pull(hub, tmp_path / "hub", "rhasspy/piper-voices", "--include", LESSAC)
    assert result.returncode == 0, result.stderr
    fetches = hub.requests("/cdn/" + sha)
    assert [f["range"] for f in fetches] == [None, f"bytes={len(data) // 2}-"], fetches
    assert "resuming" in result.stderr
    assert (pathlib.Path(result.stdout.strip()) / LESSAC).read_bytes() == data


def test_a_download_left_by_an_earlier_run_resumes_where_it_stopped(hub, tmp_path):
    cache = tmp_path / "hub"
    data = hub.repos["rhasspy/piper-voices"].files[THORSTEN]
    sha = hashlib.sha256(data).hexdigest()
    blobs = repo_dir(cache, "rhasspy/piper-voices") / "blobs"
    blobs.mkdir(parents=True)
    (blobs / (sha + ".incomplete")).write_bytes(data[:12345])
    result = pull(hub, cache, "rhasspy/piper-voices", "--include", THORSTEN)
    assert result.returncode == 0, result.stderr
    assert [f["range"] for f in hub.requests("/cdn/" + sha)] == ["bytes=12345-"]
    assert (blobs / sha).read_bytes() == data
    assert not (blobs / (sha + ".incomplete")).exists()


def test_bytes_that_do_not_match_the_hubs_digest_are_not_kept(hub, tmp_path):
    cache = tmp_path / "hub"
    data = hub.repos["rhasspy/piper-voices"].files[LESSAC]
    sha = hashlib.sha256(data).hexdigest()
    hub.corrupt.add(sha)
    result = pull(hub, cache, "rhasspy/piper-voices", "--include", LESSAC)
    assert result.returncode == 7, result.stderr
    assert "SHA-256" in result.stderr and "not kept" in result.stderr
    folder = repo_dir(cache, "rhasspy/piper-voices")
    assert not list((folder / "blobs").glob(sha + "*"))
    assert not (folder / "snapshots" / hub.repos["rhasspy/piper-voices"].commit / LESSAC).exists()


def test_a_gated_repository_needs_a_token_that_never_reaches_the_cdn(hub, tmp_path):
    cache = tmp_path / "hub"
    anonymous = pull(hub, cache, "FunAudioLLM/CosyVoice2-0.5B")
    assert anonymous.returncode == 3 and "HF_TOKEN" in anonymous.stderr, anonymous.stderr
    refused = pull(hub, cache, "FunAudioLLM/CosyVoice2-0.5B", token=NO_ACCESS_TOKEN)
    assert refused.returncode == 3 and "accept its conditions" in refused.stderr, refused.stderr
    allowed = pull(hub, cache, "FunAudioLLM/CosyVoice2-0.5B", token=GOOD_TOKEN)
    assert allowed.returncode == 0, allowed.stderr
    assert (pathlib.Path(allowed.stdout.strip()) / "llm.pt").read_bytes() == \
        hub.repos["FunAudioLLM/CosyVoice2-0.5B"].files["llm.pt"]
    authorized = [r for r in hub.requests("CosyVoice2") if r["auth"]]
    assert authorized and all(r["auth"] == "Bearer " + GOOD_TOKEN or
                              r["auth"] == "Bearer " + NO_ACCESS_TOKEN for r in authorized)
    cdn = hub.requests("/cdn/")
    assert cdn and all(r["auth"] is None for r in cdn), cdn


def test_the_token_stored_by_the_hubs_login_and_hf_home_are_read(hub, tmp_path):
    home = tmp_path / "hf-home"
    home.mkdir()
    (home / "token").write_text(GOOD_TOKEN + "\n")
    result = pull(hub, tmp_path / "unused", "FunAudioLLM/CosyVoice2-0.5B",
                  env={"HF_HOME": str(home), "HF_HUB_CACHE": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith(str(home / "hub" / "models--FunAudioLLM--CosyVoice2-0.5B"))


@pytest.mark.parametrize("args, token, code, words", [
    (["nobody/nothing"], GOOD_TOKEN, 4, "no repository nobody/nothing"),
    (["rhasspy/piper-voices", "--revision", "v9"], None, 4, "no revision 'v9'"),
    (["rhasspy"], None, 2, "OWNER/NAME"),
    (["rhasspy/piper..voices"], None, 2, "'..'"),
    (["rhasspy/piper-voices", "--revision", "../../escape"], None, 2, "--revision"),
    (["--piper-voice", "lessac"], None, 2, "LANG_REGION-VOICE-QUALITY"),
    ([], None, 2, "repo"),
])
def test_bad_names_get_an_exit_code_and_a_reason(hub, tmp_path, args, token, code, words):
    result = pull(hub, tmp_path / "hub", *args, token=token)
    assert result.returncode == code, result.stderr
    assert words in result.stderr, result.stderr
    assert not (tmp_path / "hub").exists() or code == 4


def test_an_unreachable_hub_is_exit_5(tmp_path):
    class Closed:
        url = "http://127.0.0.1:9"
    result = pull(Closed, tmp_path / "hub", "rhasspy/piper-voices")
    assert result.returncode == 5 and "cannot reach the hub" in result.stderr, result.stderr


def js_snapshot(hub, cache):
    if not JS_DEPS:
        pytest.skip("HUB_JS_DEPS unset (needs node and npm)")
    result = subprocess.run(["node", str(HERE / "hf_js_snapshot.mjs"), hub.url,
                             "rhasspy/piper-voices", str(cache)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "HUB_JS_DEPS": JS_DEPS})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_hubs_own_client_and_voxserve_share_one_cache(hub, tmp_path):
    # What the official client downloaded, voxserve finds: nothing fetched again.
    cache = tmp_path / "js-first"
    js_folder = js_snapshot(hub, cache)
    fetched = len(hub.requests("/resolve/"))
    assert fetched >= 5  # the client asks each file's size first, then its bytes
    ours = pull(hub, cache, "rhasspy/piper-voices")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.strip() == js_folder
    assert "5 already in the cache" in ours.stderr
    assert len(hub.requests("/resolve/")) == fetched

    # What voxserve pulled, the official client finds: it fetches no file.
    cache = tmp_path / "voxserve-first"
    ours = pull(hub, cache, "rhasspy/piper-voices")
    assert ours.returncode == 0, ours.stderr
    fetched = len(hub.requests("/resolve/"))
    assert js_snapshot(hub, cache) == ours.stdout.strip()
    assert len(hub.requests("/resolve/")) == fetched


def serve_and_speak(folder, model, voice):
    """voxserve --models FOLDER as it is: speaks `voice` of `model`; returns /v1/voices."""
    sys.path.insert(0, str(HERE.parent / "integration"))
    from conftest import VoxServer
    server = VoxServer(VOXSERVE, ["--models", str(folder), "--grpc-enabled", "false"]).start()
    try:
        voices = requests.get(server.url + "/v1/voices", timeout=10).json()["data"]
        spoken = requests.post(server.url + "/v1/audio/speech", timeout=60, json={
            "model": model, "voice": voice, "input": "Hello there.", "response_format": "wav",
            "stream": False})
        assert spoken.status_code == 200 and len(spoken.content) > 1000, spoken.text
        return voices
    finally:
        assert server.stop() == 0, server.log()


def test_a_pulled_piper_voice_is_served_from_its_folder_as_is(hub, tmp_path):
    """One voice by name out of a piper-voices-like repository (real graphs: tests/onnx_models),
    pulled into a folder that `--models` loads unchanged, and spoken."""
    sys.path.insert(0, str(HERE.parent / "onnx_models"))
    import make_test_models
    built = tmp_path / "built"
    subprocess.run([sys.executable, make_test_models.__file__, "--out", str(built)], check=True,
                   stdout=subprocess.DEVNULL)
    voice = "en/en_US/test/medium/en_US-test-medium.onnx"
    hub.repos["rhasspy/piper-voices"] = Repo(
        {voice: (built / "models" / "en_US-test-medium.onnx").read_bytes(),
         voice + ".json": (built / "models" / "en_US-test-medium.onnx.json").read_bytes(),
         "de/de_DE/test/medium/de_DE-test-medium.onnx":
             (built / "models" / "de_DE-test-medium.onnx").read_bytes()},
        lfs_paths=[voice, "de/de_DE/test/medium/de_DE-test-medium.onnx"])
    folder = tmp_path / "voices"
    result = pull(hub, tmp_path / "hub", "--piper-voice", "en_US-test-medium", "--dir", str(folder))
    assert result.returncode == 0, result.stderr
    voices = serve_and_speak(folder, "tts-1", "en_US-test-medium")
    piper = {v["id"] for v in voices if v["engine"] == "piper" and "alias_of" not in v}
    assert piper == {"en_US-test-medium"}, voices  # not de_DE-test-medium


def test_kokoros_onnx_release_pulled_as_documented_is_served_from_its_folder_as_is(hub, tmp_path):
    """onnx-community/Kokoro-82M-v1.0-ONNX's layout (graphs in onnx/, voices/<name>.bin, a
    transformers config.json without a vocabulary and the vocabulary in tokenizer.json, both at
    the root), a Kokoro-interface graph of tests/onnx_models in it, pulled with docs/models.md's
    command: `--models` finds the model one folder down, its voices and vocabulary one folder up,
    and speaks."""
    sys.path.insert(0, str(HERE.parent / "onnx_models"))
    import io
    import json
    import numpy as np
    import onnx
    from onnx import TensorProto
    import make_test_models as models

    def graph_bytes():
        out = io.BytesIO()
        onnx.save(models.kokoro_graph("input_ids", TensorProto.FLOAT, False, False), out)
        return out.getvalue()
    graph = graph_bytes()
    tokenizer = {"version": "1.0", "model": {"type": "WordLevel",
                                             "vocab": {"$": 0, **models.KOKORO_VOCAB}}}
    files = {"onnx/model.onnx": graph, "onnx/model_quantized.onnx": random_bytes(4, 50_000),
             "config.json": json.dumps({"model_type": "style_text_to_speech_2"}).encode(),
             "tokenizer.json": json.dumps(tokenizer, ensure_ascii=False).encode(),
             "README.md": b"# Kokoro\n"}
    for index, name in enumerate(models.KOKORO_VOICES):
        files[f"voices/{name}.bin"] = models.voice_pack(index).astype(np.float32).tobytes()
    hub.repos["onnx-community/Kokoro-82M-v1.0-ONNX"] = Repo(
        files, lfs_paths=["onnx/model.onnx", "onnx/model_quantized.onnx"])
    folder = tmp_path / "voices" / "kokoro"
    result = pull(hub, tmp_path / "hub", "onnx-community/Kokoro-82M-v1.0-ONNX",
                  "--include", "onnx/model.onnx", "--include", "voices/*",
                  "--include", "config.json", "--include", "tokenizer.json", "--dir", str(folder))
    assert result.returncode == 0, result.stderr
    assert not (folder / "onnx" / "model_quantized.onnx").exists()
    docs = (HERE.parents[1] / "docs" / "models.md").read_text()
    assert "--include 'tokenizer.json'" in docs  # the command the docs give is this one
    voices = serve_and_speak(folder, "kokoro", "af_test")
    kokoro = {v["id"] for v in voices if v["engine"] == "kokoro" and "alias_of" not in v}
    assert kokoro == set(models.KOKORO_VOICES), voices
