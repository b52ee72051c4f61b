"""Fixtures for voxctl and voxbench end to end: the real voxserve (reusing tests/integration's
VoxServer) and the paths of the two tools."""
import importlib.util
import os
import sys

import pytest

INTEGRATION = os.path.join(os.path.dirname(__file__), "..", "integration")
sys.path.insert(0, INTEGRATION)  # audio_check
_spec = importlib.util.spec_from_file_location("voxserve_fixtures", os.path.join(INTEGRATION, "conftest.py"))
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
VoxServer = _fixtures.VoxServer


def pytest_addoption(parser):
    for tool in ("voxserve", "voxctl", "voxbench"):
        parser.addoption(f"--{tool}-bin", help=f"path to the {tool} binary")


def _binary(pytestconfig, tool):
    path = pytestconfig.getoption(f"--{tool}-bin")
    if not path or not os.path.exists(path):
        pytest.fail(f"pass --{tool}-bin PATH")
    return path


@pytest.fixture(scope="session")
def voxctl_bin(pytestconfig):
    return _binary(pytestconfig, "voxctl")


@pytest.fixture(scope="session")
def voxbench_bin(pytestconfig):
    return _binary(pytestconfig, "voxbench")


@pytest.fixture(scope="session")
def server(pytestconfig):
    """One voxserve with fault injection for every test here; faults cleared after each use."""
    instance = VoxServer(_binary(pytestconfig, "voxserve"),
                         ["--fault-injection", "true"]).start()
    yield instance
    instance.stop()


@pytest.fixture(autouse=True)
def server_survives(request):
    """Fails a test during which the shared server died, with the server's exit code and log: the
    next test would otherwise only see "connection refused"."""
    yield
    if "server" not in request.fixturenames:
        return
    server = request.getfixturevalue("server")
    if server.process.poll() is not None:
        pytest.fail(f"voxserve exited ({server.process.returncode}) during this test:\n"
                    + "\n".join(server.log_lines[-100:]))
