"""gRPC behind the same API keys, limits and TLS certificates as HTTP."""
import grpc
import pytest

from conftest import VoxServer
from grpc_support import CHANNEL_OPTIONS, stubs
from security_support import Pki, start_tls_server, write_keys

KEY = "sk-grpc-0123456789abcdef"
LIMITED = "sk-grpc-limited-0123456789"


def request(text="Hello there.", model=""):
    pb = stubs().pb
    return pb.SynthesizeRequest(text=text, options=pb.SynthesisOptions(voice="alloy", model=model))


@pytest.fixture(scope="module")
def keyed(voxserve_bin, tmp_path_factory):
    keys = write_keys(tmp_path_factory.mktemp("grpc-keys") / "keys.yaml", [
        {"name": "reader", "key": KEY},
        {"name": "other-model-only", "key": LIMITED, "models": ["kokoro"]},
    ])
    instance = VoxServer(voxserve_bin, ["--api-keys-file", keys]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def stub_for(target, credentials=None):
    channel = (grpc.secure_channel(target, credentials, options=CHANNEL_OPTIONS) if credentials
               else grpc.insecure_channel(target, options=CHANNEL_OPTIONS))
    return stubs().rpc.TextToSpeechStub(channel)


def test_calls_without_a_key_are_unauthenticated(keyed):
    stub = stub_for(keyed.grpc_target)
    for call in (lambda: stub.Synthesize(request(), timeout=30),
                 lambda: stub.ListVoices(stubs().pb.ListVoicesRequest(), timeout=30)):
        with pytest.raises(grpc.RpcError) as error:
            call()
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_wrong_key_is_unauthenticated(keyed):
    with pytest.raises(grpc.RpcError) as error:
        stub_for(keyed.grpc_target).Synthesize(
            request(), metadata=[("authorization", "Bearer sk-wrong")], timeout=30)
    assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("metadata", [[("authorization", f"Bearer {KEY}")], [("x-api-key", KEY)]])
def test_the_right_key_is_served(keyed, metadata):
    response = stub_for(keyed.grpc_target).Synthesize(request(), metadata=metadata, timeout=30)
    assert len(response.audio) > 1000


def test_a_model_the_key_may_not_use_is_permission_denied(keyed):
    with pytest.raises(grpc.RpcError) as error:
        stub_for(keyed.grpc_target).Synthesize(
            request(), metadata=[("authorization", f"Bearer {LIMITED}")], timeout=30)
    assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_grpc_serves_tls_with_the_http_certificate(voxserve_bin, tmp_path):
    pki = Pki(tmp_path / "pki")
    server = start_tls_server(voxserve_bin, pki)
    try:
        with open(pki.ca, "rb") as ca:
            credentials = grpc.ssl_channel_credentials(root_certificates=ca.read())
        target = f"localhost:{server.grpc_target.rsplit(':', 1)[1]}"
        response = stub_for(target, credentials).Synthesize(request(), timeout=30)
        assert len(response.audio) > 1000
        with pytest.raises(grpc.RpcError) as error:
            stub_for(server.grpc_target).Synthesize(request(), timeout=10)
        assert error.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        assert server.stop() == 0, server.log()
