"""gRPC status codes, backpressure, cancellation and the drain, against the real binary."""
import concurrent.futures
import signal
import time

import grpc
import pytest

from audio_check import decode
from grpc_support import channel, stubs, trailer
from probes import in_flight, metric, wait_for

LONG_TEXT = " ".join(f"Sentence number {i} is here to make the text long enough to stream."
                     for i in range(40))


@pytest.fixture(scope="module")
def stub(server):
    with channel(server) as ch:
        yield stubs().rpc.TextToSpeechStub(ch)


def request(text, **options):
    return stubs().pb.SynthesizeRequest(text=text, options=stubs().pb.SynthesisOptions(**options))


def failure(call, *args, **kwargs):
    with pytest.raises(grpc.RpcError) as error:
        result = call(*args, **kwargs)
        list(result) if hasattr(result, "__iter__") else result
    return error.value


@pytest.mark.parametrize("text,options,param", [
    ("Too fast.", {"speed": 10.0}, "speed"),
    ("   ", {}, "text"),
    ("Bad format.", {"format": 99}, "format"),
    ("Bad timeout.", {"timeout_ms": -5}, "timeout_ms"),
    ("Long instructions.", {"instructions": "x" * 4097}, "instructions"),
])
def test_bad_options_are_invalid_argument_naming_the_field(stub, text, options, param):
    error = failure(stub.Synthesize, request(text, **options), timeout=30)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert trailer(error, "voxserve-error-param") == param


@pytest.mark.parametrize("options,code", [({"voice": "klingon"}, "voice_not_found"),
                                          ({"model": "no-such-model"}, "model_not_found")])
def test_unknown_voice_or_model_is_not_found(stub, options, code):
    error = failure(stub.SynthesizeStream, request("Hello.", **options), timeout=30)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert trailer(error, "voxserve-error-code") == code


def raw_unary(ch, method):
    """A unary call of voxserve.v1.TextToSpeech that sends and returns bytes as they are."""
    return ch.unary_unary(f"/voxserve.v1.TextToSpeech/{method}")


@pytest.mark.parametrize("method", ["Synthesize", "ListVoices", "ListModels", "RegisterVoice",
                                    "ListClonedVoices", "GetVoice", "DeleteVoice"])
@pytest.mark.parametrize("payload", [
    b"\x0a\xff\xff\xff\xff\x0f",  # field 1, length-delimited, its length far past the end
    b"\x0a\x05ab",                # field 1 says 5 bytes, 2 follow
    b"\x07",                       # wire type 7 does not exist
])
def test_an_unparsable_unary_message_is_invalid_argument_with_a_message(server, method, payload):
    before = metric(server, "voxserve_grpc_requests_total",
                    f'method="{method}",code="invalid_argument"')
    with channel(server) as ch:
        error = failure(raw_unary(ch, method), payload, timeout=30)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
    assert "not a valid voxserve.v1." in error.details()
    assert trailer(error, "voxserve-error-code") == "invalid_message"
    assert metric(server, "voxserve_grpc_requests_total",
                  f'method="{method}",code="invalid_argument"') == before + 1


def test_an_unparsable_synthesize_stream_request_is_invalid_argument_with_a_message(server):
    with channel(server) as ch:
        call = ch.unary_stream("/voxserve.v1.TextToSpeech/SynthesizeStream")
        error = failure(call, b"\x0a\x05ab", timeout=30)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
    assert "not a valid voxserve.v1.SynthesizeRequest" in error.details()
    assert trailer(error, "voxserve-error-code") == "invalid_message"


def test_a_string_that_is_not_utf8_is_invalid_argument_and_logged_in_the_servers_format(server):
    with channel(server) as ch:
        # SynthesizeRequest.text (field 1) holding the bytes ff fe: a string must be UTF-8.
        error = failure(raw_unary(ch, "Synthesize"), b"\x0a\x02\xff\xfe", timeout=30)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
        assert "not a valid voxserve.v1.SynthesizeRequest" in error.details()
        # An empty message is a valid one: a raw call that parses is answered as ever.
        reply = raw_unary(ch, "ListModels")(b"", timeout=30)
    assert stubs().pb.ListModelsResponse.FromString(reply).models
    assert wait_for(lambda: any("invalid UTF-8" in line and "component=protobuf" in line
                                for line in server.log_lines))
    assert not any("[libprotobuf" in line for line in server.log_lines), server.log()


def test_a_tiny_grpc_deadline_on_a_long_text_is_deadline_exceeded(stub):
    error = failure(stub.Synthesize, request(LONG_TEXT), timeout=0.02)
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_a_tiny_timeout_option_is_deadline_exceeded_from_the_server(server, stub):
    labels = 'method="Synthesize",code="deadline_exceeded"'
    assert wait_for(lambda: in_flight(server) == 0)  # earlier calls are counted by now
    before = metric(server, "voxserve_grpc_requests_total", labels)
    error = failure(stub.Synthesize, request(LONG_TEXT, timeout_ms=1), timeout=30)
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert metric(server, "voxserve_grpc_requests_total", labels) == before + 1


@pytest.mark.parametrize("options,param", [({"speed": 10.0}, "speed"),
                                           ({"timeout_ms": -5}, "timeout_ms"),
                                           ({"instructions": "x" * 4097}, "instructions")])
def test_bidi_options_are_checked_on_the_config_before_any_text(stub, options, param):
    # The service's one check (service::CheckRequestOptions), as for Synthesize and WebSocket.
    pb = stubs().pb
    error = failure(stub.StreamingSynthesize, iter([pb.StreamingSynthesizeRequest(
        config=pb.SynthesisOptions(voice="en-us", **options))]), timeout=30)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert trailer(error, "voxserve-error-param") == param


def test_bidi_config_errors_end_the_call_at_once(stub):
    pb = stubs().pb
    text_first = failure(stub.StreamingSynthesize,
                         iter([pb.StreamingSynthesizeRequest(text="No config.")]), timeout=30)
    assert text_first.code() == grpc.StatusCode.INVALID_ARGUMENT
    # An unknown voice is refused on the config, before any text is sent.
    bad_voice = failure(stub.StreamingSynthesize, iter([pb.StreamingSynthesizeRequest(
        config=pb.SynthesisOptions(voice="klingon"))]), timeout=30)
    assert bad_voice.code() == grpc.StatusCode.NOT_FOUND


def test_a_full_queue_is_resource_exhausted_with_retry_after(make_server, tmp_path):
    config = tmp_path / "voxserve.yaml"
    config.write_text("models:\n  - id: espeak\n    scheduling: {queue_capacity: 2}\n")
    server = make_server("--config", str(config))
    text = " ".join(LONG_TEXT.split(". ")[:10])
    with channel(server) as ch:
        tts = stubs().rpc.TextToSpeechStub(ch)

        def call(_):
            try:
                return tts.Synthesize(request(text, format=stubs().pb.AUDIO_FORMAT_PCM), timeout=60)
            except grpc.RpcError as error:
                return error

        with concurrent.futures.ThreadPoolExecutor(30) as pool:
            results = list(pool.map(call, range(30)))
    refused = [r for r in results if isinstance(r, grpc.RpcError)]
    assert refused and len(refused) < len(results), [getattr(r, "code", None) for r in results]
    assert {r.code() for r in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert int(trailer(refused[0], "retry-after-ms")) >= 1000
    assert trailer(refused[0], "voxserve-error-code") == "queue_full"
    for response in results:
        if not isinstance(response, grpc.RpcError):
            assert decode(response.audio, "pcm").duration > 10
    assert metric(server, "voxserve_grpc_requests_total",
                  'method="Synthesize",code="resource_exhausted"') == len(refused)


def test_a_stream_nobody_reads_pauses_and_cancelling_it_drops_its_work(make_server):
    server = make_server("--stream-buffer-bytes", "65536")
    synthesized = lambda: metric(server, "voxserve_segments_synthesized_total", 'model="espeak"')
    paused = lambda: metric(server, "voxserve_requests_paused")

    def settled():
        count = synthesized()
        time.sleep(0.3)
        return paused() == 1 and synthesized() == count

    before = synthesized()
    # Without BDP probing the client's HTTP/2 window stays at 64 KiB instead of growing to MiBs,
    # so the server's own bound is what stops the request.
    with grpc.insecure_channel(server.grpc_target, options=[("grpc.http2.bdp_probe", 0)]) as ch:
        stream = stubs().rpc.TextToSpeechStub(ch).SynthesizeStream(request(LONG_TEXT), timeout=60)
        assert next(stream).WhichOneof("event") == "audio"
        # Read nothing more: the window fills, then the server's bounded queue; it pauses.
        assert wait_for(settled, timeout=20), "the request never paused"
        assert synthesized() <= before + 6, "synthesis went on for nobody"
        stream.cancel()
        assert wait_for(lambda: in_flight(server) == 0)
    assert wait_for(lambda: metric(server, "voxserve_requests_failed_total",
                                   'model="espeak",code="cancelled"') == 1)
    assert wait_for(lambda: metric(server, "voxserve_grpc_requests_total",
                                   'method="SynthesizeStream",code="cancelled"') == 1)
    assert paused() == 0
    assert synthesized() <= before + 6, "the cancelled request's queued sentences were synthesized"


def test_cancelling_a_bidi_stream_ends_its_synthesis(server, stub):
    pb = stubs().pb
    before = metric(server, "voxserve_grpc_requests_total",
                    'method="StreamingSynthesize",code="cancelled"')
    stream = stub.StreamingSynthesize(iter([
        pb.StreamingSynthesizeRequest(config=pb.SynthesisOptions(voice="en-us")),
        pb.StreamingSynthesizeRequest(text=LONG_TEXT + " More")]), timeout=60)
    assert next(stream).WhichOneof("event") == "audio"
    stream.cancel()
    assert wait_for(lambda: in_flight(server) == 0)
    assert wait_for(lambda: metric(server, "voxserve_grpc_requests_total",
                                   'method="StreamingSynthesize",code="cancelled"') == before + 1)


def test_during_the_drain_health_is_not_serving_and_new_calls_are_unavailable(make_server):
    server = make_server()
    pb, health = stubs().pb, stubs()
    long_text = " ".join(f"This is sentence number {i} of a rather long text." for i in range(30))
    with channel(server) as ch:
        tts = stubs().rpc.TextToSpeechStub(ch)
        check = health.health_rpc.HealthStub(ch).Check
        # gRPC health follows readiness by sampling it: wait for SERVING first, or a NOT_SERVING
        # from before the sample would pass for the drain's.
        serving = health.health_pb.HealthCheckResponse.SERVING
        assert wait_for(lambda: check(health.health_pb.HealthCheckRequest(), timeout=10).status
                        == serving, timeout=5)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            calls = [pool.submit(tts.Synthesize, request(long_text), timeout=120) for _ in range(4)]
            assert wait_for(lambda: in_flight(server) == 4, timeout=30), "finished too soon"
            server.process.send_signal(signal.SIGTERM)
            not_serving = health.health_pb.HealthCheckResponse.NOT_SERVING
            assert wait_for(lambda: check(health.health_pb.HealthCheckRequest(), timeout=10).status
                            == not_serving, timeout=5)
            refused = failure(tts.Synthesize, request("Too late."), timeout=10)
            assert refused.code() == grpc.StatusCode.UNAVAILABLE
            assert trailer(refused, "voxserve-error-code") == "server_draining"
            # A new connection is refused (what a proxy retries elsewhere: docs/grpc-drain.md).
            with grpc.insecure_channel(server.grpc_target) as late:
                with pytest.raises(grpc.FutureTimeoutError):
                    grpc.channel_ready_future(late).result(timeout=1)
            for call in calls:
                assert decode(call.result().audio, "wav").duration > 30, "audio was cut short"
    assert server.process.wait(60) == 0
