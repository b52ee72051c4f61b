"""Starts the real voxserve binary on an ephemeral port for the integration tests."""
import os
import re
import signal
import subprocess
import threading
import time

import pytest
import requests

LISTENING = re.compile(r"listening on https?://([0-9.]+):(\d+)")
GRPC_LISTENING = re.compile(r"gRPC listening on ([0-9.]+):(\d+)")
WYOMING_LISTENING = re.compile(r"Wyoming listening on ([0-9a-f.:]+):(\d+)")


def pytest_addoption(parser):
    parser.addoption("--voxserve-bin", default=os.environ.get("VOXSERVE_BIN"),
                     help="path to the voxserve binary under test")


class VoxServer:
    """One voxserve process. Its log (stderr) is collected in `log_lines`."""

    def __init__(self, binary, args=(), env=None, preexec_fn=None):
        self.binary = binary
        self.preexec_fn = preexec_fn  # runs in the child before exec (e.g. to set rlimits)
        self.args = list(args)
        self.env = dict(os.environ, **(env or {}))
        self.process = None
        self.port = None
        self.log_lines = []
        self._listening = threading.Event()
        self.grpc_port = None
        self._grpc_listening = threading.Event()
        self._wyoming_port = None
        self._wyoming_listening = threading.Event()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self, wait_ready=True, timeout=60):
        self.process = subprocess.Popen(
            [self.binary, "--host", "127.0.0.1", "--port", "0", "--grpc-port", "0", *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env, text=True,
            preexec_fn=self.preexec_fn)
        threading.Thread(target=self._read_log, daemon=True).start()
        if not self._listening.wait(timeout):
            self.kill()
            raise RuntimeError("voxserve did not start listening:\n" + self.log())
        if wait_ready:
            self.wait_ready(timeout)
        return self

    def _read_log(self):
        for line in self.process.stderr:
            self.log_lines.append(line.rstrip("\n"))
            match = LISTENING.search(line)
            if match and not self._listening.is_set():
                self.port = int(match.group(2))
                self._listening.set()
            match = GRPC_LISTENING.search(line)
            if match and not self._grpc_listening.is_set():
                self.grpc_port = int(match.group(2))
                self._grpc_listening.set()
            match = WYOMING_LISTENING.search(line)
            if match and not self._wyoming_listening.is_set():
                self._wyoming_port = int(match.group(2))
                self._wyoming_listening.set()

    @property
    def grpc_target(self):
        """host:port of the gRPC listener (logged right after HTTP's)."""
        if not self._grpc_listening.wait(30):
            raise RuntimeError("voxserve did not start gRPC:\n" + self.log())
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def wyoming_port(self):
        """The Wyoming listener's port (with --wyoming-enabled true; logged after gRPC's)."""
        if not self._wyoming_listening.wait(30):
            raise RuntimeError("voxserve did not start Wyoming:\n" + self.log())
        return self._wyoming_port

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/health/ready", timeout=2).status_code == 200:
                    return
            except requests.ConnectionError:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("voxserve did not become ready:\n" + self.log())

    def log(self):
        return "\n".join(self.log_lines)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends `sig` and waits; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="session")
def voxserve_bin(pytestconfig):
    binary = pytestconfig.getoption("--voxserve-bin")
    if not binary or not os.path.exists(binary):
        pytest.fail("pass --voxserve-bin PATH (or set VOXSERVE_BIN) to the voxserve binary")
    return binary


@pytest.fixture(scope="session")
def config_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("config") / "voxserve.yaml"
    path.write_text(
        "limits:\n"
        "  max_input_chars: 4096\n"
        "voice_aliases:\n"
        "  zh_female: cmn+f3\n"
        "  narrator: {model: espeak, voice: en-gb+m3}\n")
    return path


@pytest.fixture(scope="session")
def server(voxserve_bin, config_file):
    """A shared server for tests that do not change its state."""
    instance = VoxServer(voxserve_bin, ["--config", str(config_file)]).start()
    yield instance
    code = instance.stop()
    assert code == 0, "voxserve exited with %d:\n%s" % (code, instance.log())


@pytest.fixture
def make_server(voxserve_bin):
    """Factory for servers with their own flags; stopped (SIGKILL if needed) after the test."""
    started = []

    def factory(*args, wait_ready=True, env=None, preexec_fn=None):
        instance = VoxServer(voxserve_bin, args, env, preexec_fn).start(wait_ready=wait_ready)
        started.append(instance)
        return instance

    yield factory
    for instance in started:
        instance.kill()
