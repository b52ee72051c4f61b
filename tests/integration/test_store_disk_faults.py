"""The dir stores (pronunciation dictionaries, cloned voices) on a disk that fills up or turns
read-only (issue 39): a full disk is a 507 `disk_full` naming the cause, a read-only one a 500
naming it; nothing half-written is left, what was stored stays readable, the server keeps
serving, and writes work again once there is room. The disk is a small tmpfs mounted by the
test (root only; skipped otherwise)."""
import os
import subprocess

import pytest
import requests

from test_pronunciation_dictionaries import API
from test_voice_cloning import register

VOICES = "/v1/audio/voices"


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def remount(mount, mode):
    subprocess.run(["mount", "-o", f"remount,{mode}", str(mount)], check=True)


def rules(count, tag):
    return [{"type": "alias", "string_to_replace": f"{tag}{i}", "alias": f"the word number {i}"}
            for i in range(count)]


def add(server, name, count=400):
    return requests.post(server.url + API + "/add-from-rules", timeout=30,
                         json={"name": name, "rules": rules(count, name)})


def leftovers(directory):
    """Temporary files of interrupted writes anywhere under `directory`."""
    return [name for _, _, files in os.walk(directory) for name in files if ".tmp-" in name]


def test_dictionaries_on_a_disk_that_fills_up_or_turns_read_only(make_server, small_disk):
    store = small_disk / "dictionaries"
    server = make_server("--dictionaries-dir", str(store))
    kept = add(server, "kept")
    assert kept.status_code == 200, kept.text
    kept = kept.json()

    # Fill the disk: every add answers 200 until one answers 507 disk_full, never a 5xx.
    for i in range(100):
        answer = add(server, f"fill{i}")
        if answer.status_code != 200:
            break
    else:
        pytest.fail("512 KiB never filled up")
    assert answer.status_code == 507, answer.text
    error = answer.json()["error"]
    assert error["code"] == "disk_full" and "No space left on device" in error["message"], error
    # An update of an existing one hits the same wall, and changes nothing.
    grown = requests.post(f"{server.url}{API}/{kept['id']}/add-rules", timeout=30,
                          json={"rules": rules(400, "more")})
    assert grown.status_code == 507, grown.text
    assert leftovers(store) == []
    got = requests.get(f"{server.url}{API}/{kept['id']}", timeout=10).json()
    assert got["latest_version_id"] == kept["version_id"]
    assert requests.get(server.url + "/health", timeout=10).json()["status"] == "ready"

    # Room again: a deletion frees it, and writes work.
    listed = requests.get(server.url + API, timeout=10).json()["pronunciation_dictionaries"]
    # Not `kept`: it is read below (all were made within a second or so, and listed newest first,
    # ties by id, so it may be anywhere in the list).
    for dictionary in [d for d in listed if d["id"] != kept["id"]][:3]:
        assert requests.delete(f"{server.url}{API}/{dictionary['id']}", timeout=10).status_code \
            == 200
    assert add(server, "after").status_code == 200

    # Read-only: a clear 500 naming it, reads unaffected.
    remount(small_disk, "ro")
    try:
        refused = add(server, "readonly", count=5)
        assert refused.status_code == 500, refused.text
        assert "Read-only file system" in refused.json()["error"]["message"]
        assert requests.get(f"{server.url}{API}/{kept['id']}", timeout=10).status_code == 200
    finally:
        remount(small_disk, "rw")
    assert add(server, "writable again", count=5).status_code == 200

    # A restart finds everything acknowledged, and nothing else.
    acknowledged = {d["id"] for d in
                    requests.get(server.url + API, timeout=10).json()["pronunciation_dictionaries"]}
    restarted = make_server("--dictionaries-dir", str(store))
    assert {d["id"] for d in requests.get(restarted.url + API, timeout=10).json()
            ["pronunciation_dictionaries"]} == acknowledged


def test_cloned_voices_on_a_full_disk(make_server, small_disk):
    store = small_disk / "voices"
    server = make_server("--voices-dir", str(store), "--voices-test-cloner", "true")
    registered = []
    for i in range(200):
        answer = register(server, f"voice {i}")
        if answer.status_code != 200:
            break
        registered.append(answer.json()["id"])
    else:
        pytest.fail("512 KiB never filled up")
    assert registered, "not even one voice fitted"
    assert answer.status_code == 507, answer.text
    assert answer.json()["error"]["code"] == "disk_full", answer.text
    assert leftovers(store) == []
    listed = sorted(v["id"] for v in requests.get(server.url + VOICES, timeout=10).json()["data"])
    assert listed == sorted(registered)
    assert requests.delete(f"{server.url}{VOICES}/{registered[0]}", timeout=10).status_code == 200
    assert register(server, "after").status_code == 200
