"""The CosyVoice export image (deploy/docker/export.Dockerfile) as the GPU overlay's Job runs it:
a tiny random-weight checkpoint laid out as upstream's FunAudioLLM/CosyVoice2-0.5B
(tools/cosyvoice_export/fake_model_dir.py) on a volume, exported into a bundle by the image
running as the unprivileged user, checked by the voxserve image (`voxserve check-model`), kept
as it is when the Job runs again, exported again once the checkpoint changed. run-e2e.sh builds
both images first (voxserve-export:test from the upstream copy the oracle tests use)."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXPORT_IMAGE = "voxserve-export:test"


def docker(*args, **kwargs):
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=900, **kwargs)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    if not os.environ.get("VOXSERVE_COSYVOICE_REF"):
        pytest.skip("VOXSERVE_COSYVOICE_REF is unset: no upstream CosyVoice to build the image from")
    if docker("image", "inspect", EXPORT_IMAGE).returncode != 0:
        pytest.skip(f"no {EXPORT_IMAGE} image (tests/deploy/run-e2e.sh builds it)")
    models = tmp_path_factory.mktemp("models")
    subprocess.run(["/usr/bin/python3", str(ROOT / "tools" / "cosyvoice_export" / "fake_model_dir.py"),
                    str(models / "CosyVoice2-0.5B")], check=True, capture_output=True, timeout=600)
    # The Job's volume belongs to fsGroup 10001; here the folder is simply open to that user.
    subprocess.run(["chmod", "-R", "a+rwX", str(models)], check=True)
    return models


def export(models):
    return docker("run", "--rm", "--read-only", "--tmpfs", "/tmp", "-v", f"{models}:/models",
                  EXPORT_IMAGE, "--model-dir", "/models/CosyVoice2-0.5B",
                  "--out", "/models/cosyvoice2-bundle", "--skip-if-current", "--no-goldens")


def check(models):
    return docker("run", "--rm", "--read-only", "-v", f"{models}:/models:ro",
                  "--entrypoint", "voxserve", "voxserve:cpu", "check-model",
                  "/models/cosyvoice2-bundle")


def test_the_export_image_turns_a_checkpoint_into_a_bundle_the_server_takes(checkpoint):
    exported = export(checkpoint)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    assert "bundle /models/cosyvoice2-bundle:" in exported.stdout
    bundle = checkpoint / "cosyvoice2-bundle"
    assert (bundle / "manifest.json").stat().st_uid == 10001  # written as the image's user
    checked = check(checkpoint)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "(format 2, checkpoint)" in checked.stdout

    # The Job again: the same checkpoint keeps the bundle; a changed one is exported again.
    exported_at = (bundle / "manifest.json").stat().st_mtime_ns
    again = export(checkpoint)
    assert again.returncode == 0 and "is current" in again.stdout, again.stdout + again.stderr
    assert (bundle / "manifest.json").stat().st_mtime_ns == exported_at
    os.utime(checkpoint / "CosyVoice2-0.5B" / "flow.pt")
    changed = export(checkpoint)
    assert changed.returncode == 0 and "is current" not in changed.stdout, changed.stderr
    assert check(checkpoint).returncode == 0


def test_models_pull_exports_a_checkpoint_from_the_hub_with_the_image(checkpoint, tmp_path):
    """`voxserve models pull --export`: the checkpoint from a hub (the stand-in, serving the same
    files as FunAudioLLM/CosyVoice2-0.5B does its own) into the hub cache, then into a bundle by
    the export image, checked: Hugging Face weights to a servable bundle in one command."""
    binary = os.environ.get("VOXSERVE_BIN")
    if not binary:
        pytest.skip("VOXSERVE_BIN unset")
    sys.path.insert(0, str(ROOT / "tests" / "hub"))
    from hub_stand_in import HubStandIn, Repo
    source = checkpoint / "CosyVoice2-0.5B"
    files = {str(p.relative_to(source)): p.read_bytes() for p in source.rglob("*") if p.is_file()}
    lfs = [path for path in files if path.endswith((".pt", ".onnx"))]
    cache, bundle = tmp_path / "hub", tmp_path / "bundles" / "cosyvoice2"
    with HubStandIn() as hub:
        hub.repos["FunAudioLLM/CosyVoice2-0.5B"] = Repo(files, lfs_paths=lfs)
        pulled = subprocess.run(
            [binary, "models", "pull", "FunAudioLLM/CosyVoice2-0.5B", "--export", str(bundle),
             "--export-image", EXPORT_IMAGE],
            capture_output=True, text=True, timeout=900,
            env={**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(cache)})
    assert pulled.returncode == 0, pulled.stderr
    assert pulled.stdout.strip() == str(bundle)
    assert (bundle / "manifest.json").exists()
    # Again with an image that is not there: the pull is served from the cache, the export
    # fails with docker's words and exit 8.
    with HubStandIn() as hub:
        hub.repos["FunAudioLLM/CosyVoice2-0.5B"] = Repo(files, lfs_paths=lfs)
        no_image = subprocess.run(
            [binary, "models", "pull", "FunAudioLLM/CosyVoice2-0.5B", "--export",
             str(tmp_path / "other"), "--export-image", "voxserve-export:absent"],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(cache)})
        assert not hub.requests("/cdn/")  # every file already in the cache
    assert no_image.returncode == 8, no_image.stderr
    assert "build-export-image.sh" in no_image.stderr
