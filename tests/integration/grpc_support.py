"""gRPC clients for the integration tests: Debian's python3-grpcio with stubs that
python3-grpc-tools generates from proto/ at test time (nothing generated is checked in)."""
import atexit
import functools
import importlib
import pathlib
import shutil
import subprocess
import sys
import tempfile

import grpc

PROTO_ROOT = pathlib.Path(__file__).resolve().parents[2] / "proto"

# Long replies (a whole text as one WAV) exceed gRPC's default 4 MiB receive limit.
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 64 << 20)]


@functools.lru_cache(maxsize=None)
def stubs():
    """The generated modules (pb, rpc, health_pb, health_rpc), made once per test process."""
    out_dir = tempfile.mkdtemp(prefix="voxserve-stubs-")
    atexit.register(shutil.rmtree, out_dir, ignore_errors=True)
    return generate_stubs(out_dir)


def generate_stubs(out_dir):
    """Generates voxserve.v1 and grpc.health.v1 stubs into out_dir and imports them.

    The health proto is copied to grpc_health/v1/ first: generated as grpc/health/v1/ its Python
    package would be named `grpc` and hide grpcio itself. The wire names do not change."""
    out_dir = pathlib.Path(out_dir)
    health_dir = out_dir / "grpc_health" / "v1"
    health_dir.mkdir(parents=True)
    shutil.copy(PROTO_ROOT / "grpc" / "health" / "v1" / "health.proto", health_dir)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{out_dir}",
                    f"--python_out={out_dir}", f"--grpc_python_out={out_dir}",
                    "voxserve/v1/tts.proto", "grpc_health/v1/health.proto"],
                   check=True, capture_output=True, timeout=60)
    sys.path.insert(0, str(out_dir))
    modules = {name: importlib.import_module(module) for name, module in [
        ("pb", "voxserve.v1.tts_pb2"), ("rpc", "voxserve.v1.tts_pb2_grpc"),
        ("health_pb", "grpc_health.v1.health_pb2"),
        ("health_rpc", "grpc_health.v1.health_pb2_grpc")]}
    return type("Stubs", (), modules)


def channel(server):
    return grpc.insecure_channel(server.grpc_target, options=CHANNEL_OPTIONS)


def trailer(error, key):
    """A trailing metadata value of a failed call, or None."""
    return dict(error.trailing_metadata() or ()).get(key)
