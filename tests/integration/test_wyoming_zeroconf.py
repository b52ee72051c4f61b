"""Home Assistant discovers voxserve's Wyoming listener over mDNS (docs/wyoming.md): in a private
network namespace with a multicast interface of its own (no real network is touched), the
announcement is found by python3-zeroconf, the library Home Assistant uses, and the Wyoming
reference client speaks with the address and port it found; the announcement is withdrawn when
the server stops, and absent when switched off or when Wyoming listens on loopback only."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from wyoming_support import reference

HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CI runs as root)"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="needs iproute2's ip"),
]


@pytest.fixture
def namespace():
    pytest.importorskip("zeroconf", reason="needs python3-zeroconf (scripts/install-deps.sh)")
    reference()  # the Wyoming reference client, or a skip saying why
    name = f"voxzc{os.getpid()}"
    commands = [["netns", "add", name],
                ["-n", name, "link", "set", "lo", "up"],
                # A veth pair with both ends inside: a multicast-capable link that leads
                # nowhere else (mDNS between the namespace's processes, by multicast loopback).
                ["-n", name, "link", "add", "zc0", "type", "veth", "peer", "name", "zc1"],
                ["-n", name, "addr", "add", "10.231.0.1/24", "dev", "zc0"],
                ["-n", name, "link", "set", "zc0", "up"],
                ["-n", name, "link", "set", "zc1", "up"]]
    try:
        for command in commands:
            subprocess.run(["ip", *command], check=True, capture_output=True, timeout=30)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


def discover(namespace, voxserve_bin, *server_args, wait=30):
    result = subprocess.run(
        ["ip", "netns", "exec", namespace, sys.executable,
         os.path.join(HERE, "zeroconf_discovery.py"), "--voxserve", voxserve_bin,
         "--wait", str(wait), *server_args],
        capture_output=True, text=True, timeout=4 * wait + 120, cwd=HERE,
        env=dict(os.environ, PYTHONPATH=HERE))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_home_assistant_finds_wyoming_and_speaks_through_what_it_found(namespace, voxserve_bin):
    found = discover(namespace, voxserve_bin, "--wyoming-zeroconf-name", "kitchen")
    assert "service" in found, found["log"]
    assert found["service"]["name"] == "kitchen._wyoming._tcp.local."
    assert found["service"]["port"] == found["wyoming_port"]
    assert "10.231.0.1" in found["service"]["addresses"]
    assert found["spoken"]["tts"] == ["voxserve"]
    assert found["spoken"]["audio_bytes"] > 16000
    assert found["exit_code"] == 0
    assert found["withdrawn"], "no goodbye when the server stopped"


@pytest.mark.parametrize("switch", [["--wyoming-zeroconf", "false"],
                                    ["--wyoming-host", "127.0.0.1"]])
def test_nothing_is_announced_when_off_or_on_loopback_only(namespace, voxserve_bin, switch):
    # A bounded wait: absence can only be observed for a while.
    found = discover(namespace, voxserve_bin, *switch, wait=5)
    assert "service" not in found
    assert found["exit_code"] == 0
    assert "zeroconf: announcing" not in found["log"]
