"""The gRPC API (voxserve.v1.TextToSpeech, health, reflection) driven by Debian's python3-grpcio,
against the real binary: every RPC, audio that decodes to plausible speech, incremental text."""
import threading
import time

import grpc
import pytest

from audio_check import decode
from grpc_support import channel, stubs
from probes import metric, wait_for

SENTENCES = [f"Sentence number {i} is here to make the text long enough to stream."
             for i in range(12)]


@pytest.fixture(scope="module")
def stub(server):
    with channel(server) as ch:
        yield stubs().rpc.TextToSpeechStub(ch)


def options(**fields):
    return stubs().pb.SynthesisOptions(**fields)


def synthesize_request(text, **fields):
    return stubs().pb.SynthesizeRequest(text=text, options=options(**fields))


def test_synthesize_returns_a_complete_wav_and_echoes_the_request_id(server, stub):
    pb = stubs().pb
    before = metric(server, "voxserve_grpc_requests_total", 'method="Synthesize",code="ok"')
    text = "Hello there. This is a test of the gRPC interface."
    response, call = stub.Synthesize.with_call(
        synthesize_request(text, voice="alloy"),
        metadata=[("x-request-id", "grpc-test-1")], timeout=60)
    assert response.format == pb.AUDIO_FORMAT_WAV
    audio = decode(response.audio, "wav")
    assert audio.sample_rate == response.sample_rate
    assert audio.duration == pytest.approx(response.usage.audio_seconds, abs=0.05)
    assert audio.duration > 2 and audio.rms > 0.01
    assert response.usage.segments == 2 and response.usage.input_characters == len(text)
    assert 0 < response.timings.time_to_first_audio_seconds <= response.timings.total_seconds
    assert response.model == "espeak" and response.voice
    assert ("x-request-id", "grpc-test-1") in call.initial_metadata()
    assert metric(server, "voxserve_grpc_requests_total",
                  'method="Synthesize",code="ok"') == before + 1


@pytest.mark.parametrize("fmt,name", [("pcm", "AUDIO_FORMAT_PCM"), ("mp3", "AUDIO_FORMAT_MP3"),
                                      ("flac", "AUDIO_FORMAT_FLAC")])
def test_synthesize_formats_decode(stub, fmt, name):
    response = stub.Synthesize(
        synthesize_request(" ".join(SENTENCES[:2]), format=getattr(stubs().pb, name)), timeout=60)
    audio = decode(response.audio, fmt)
    assert audio.duration == pytest.approx(response.usage.audio_seconds, abs=0.1)
    assert audio.rms > 0.01


def test_synthesize_stream_sends_a_chunk_per_sentence_then_done(stub):
    text = " ".join(SENTENCES)
    responses = list(stub.SynthesizeStream(synthesize_request(text, voice="nova"), timeout=60))
    kinds = [r.WhichOneof("event") for r in responses]
    assert kinds[-1] == "done" and kinds.count("done") == 1
    chunks = [r.audio for r in responses if r.WhichOneof("event") == "audio"]
    assert len(chunks) >= len(SENTENCES), "one chunk per sentence at least"
    assert {c.sample_rate for c in chunks} == {24000}
    assert {c.format for c in chunks} == {stubs().pb.AUDIO_FORMAT_PCM}
    streamed = decode(b"".join(c.audio for c in chunks), "pcm")
    done = responses[-1].done
    assert done.usage.segments == len(SENTENCES)
    assert streamed.duration == pytest.approx(done.usage.audio_seconds, abs=0.05)
    whole = stub.Synthesize(
        synthesize_request(text, voice="nova", format=stubs().pb.AUDIO_FORMAT_PCM), timeout=60)
    # Two runs of the same text, streamed and whole: every espeak-ng synthesis starts from the
    # same state (issue 29), so the two are the same samples.
    assert b"".join(c.audio for c in chunks) == whole.audio, (
        streamed.duration, decode(whole.audio, "pcm").duration)
    assert done.timings.time_to_first_audio_seconds < done.timings.total_seconds


class BidiClient:
    """Sends what `script` yields; `script` may wait on what has been received so far."""

    def __init__(self, stub):
        self.stub = stub
        self.received = []
        self.changed = threading.Condition()

    def wait_until(self, predicate, timeout=20):
        with self.changed:
            return bool(self.changed.wait_for(lambda: predicate(self.received), timeout))

    def run(self, script, timeout=60):
        for response in self.stub.StreamingSynthesize(script(), timeout=timeout):
            with self.changed:
                self.received.append(response)
                self.changed.notify_all()
        return self.received


def text(piece):
    return stubs().pb.StreamingSynthesizeRequest(text=piece)


def kinds(responses):
    return [r.WhichOneof("event") for r in responses]


def sentences_done(responses):
    return [r.sentence_done.text for r in responses if r.WhichOneof("event") == "sentence_done"]


def test_a_slow_client_hears_the_first_sentence_before_sending_the_second(stub):
    pb = stubs().pb
    client = BidiClient(stub)
    heard_first_before_second = []

    def script():
        yield pb.StreamingSynthesizeRequest(config=options(voice="en-us"))
        yield text("The first sen")
        yield text("tence is here.")
        yield text(" The")  # the next word makes the first sentence certain
        heard_first_before_second.append(client.wait_until(lambda got: "audio" in kinds(got)))
        yield text(" second sentence follows.")
        yield pb.StreamingSynthesizeRequest(end=True)

    responses = client.run(script)
    assert heard_first_before_second == [True]
    assert sentences_done(responses) == ["The first sentence is here.",
                                         "The second sentence follows."]
    assert kinds(responses)[-1] == "done"
    # In order: sentence 0's audio, its sentence_done, sentence 1's audio, its sentence_done.
    order = kinds(responses)
    first_done, second_done = [i for i, k in enumerate(order) if k == "sentence_done"]
    assert "audio" in order[:first_done] and "audio" in order[first_done:second_done]
    assert "audio" not in order[second_done:]
    audio = decode(b"".join(r.audio.audio for r in responses if r.WhichOneof("event") == "audio"),
                   "pcm")
    assert audio.duration == pytest.approx(responses[-1].done.usage.audio_seconds, abs=0.1)
    assert audio.duration > 2 and audio.rms > 0.01


def test_pieces_cut_anywhere_keep_abbreviations_and_cjk_whole(stub):
    pb = stubs().pb
    english = BidiClient(stub).run(lambda: iter(
        [pb.StreamingSynthesizeRequest(config=options(voice="en-us"))] +
        [text(p) for p in ["Hello Mr.", " Smith, nice to", " meet you. It costs 3.", "50 now."]]))
    assert sentences_done(english) == ["Hello Mr. Smith, nice to meet you.", "It costs 3.50 now."]
    chinese = BidiClient(stub).run(lambda: iter(
        [pb.StreamingSynthesizeRequest(config=options(voice="cmn"))] +
        [text(p) for p in ["你好", "。今天", "天气很好！", "我们走吧"]] +
        [pb.StreamingSynthesizeRequest(end=True)]))
    assert sentences_done(chinese) == ["你好。", "今天天气很好！", "我们走吧"]


def test_flush_speaks_an_unfinished_sentence_at_once(stub):
    pb = stubs().pb
    client = BidiClient(stub)
    flushed_before_end = []

    def script():
        yield pb.StreamingSynthesizeRequest(config=options(voice="en-gb"))
        yield text("Hello there")
        yield pb.StreamingSynthesizeRequest(flush=True)
        flushed_before_end.append(client.wait_until(lambda got: sentences_done(got)))
        yield text("and goodbye")

    responses = client.run(script)  # the client half-closes: as `end`
    assert flushed_before_end == [True]
    assert sentences_done(responses) == ["Hello there", "and goodbye"]
    assert kinds(responses)[-1] == "done"


def test_a_sentence_with_nothing_speakable_is_skipped_and_the_call_goes_on(stub):
    # The same rule as the WebSocket stream (test_websocket.py): one service::SpeechSession.
    pb = stubs().pb
    responses = BidiClient(stub).run(lambda: iter([
        pb.StreamingSynthesizeRequest(config=options(voice="en-us")),
        text("..."), pb.StreamingSynthesizeRequest(flush=True),
        text("Hello there. "), pb.StreamingSynthesizeRequest(flush=True),
        text("—"), pb.StreamingSynthesizeRequest(flush=True),
        text("Goodbye."), pb.StreamingSynthesizeRequest(end=True)]))
    assert sentences_done(responses) == ["Hello there.", "Goodbye."]
    assert [r.sentence_done.index for r in responses
            if r.WhichOneof("event") == "sentence_done"] == [0, 1]
    assert kinds(responses)[-1] == "done"
    assert responses[-1].done.usage.segments == 2


def test_a_call_with_text_but_nothing_speakable_is_invalid_argument_empty_input(stub):
    pb = stubs().pb
    with pytest.raises(grpc.RpcError) as raised:
        BidiClient(stub).run(lambda: iter([
            pb.StreamingSynthesizeRequest(config=options(voice="en-us")),
            text("..."), pb.StreamingSynthesizeRequest(flush=True),
            text("!!!"), pb.StreamingSynthesizeRequest(end=True)]))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "nothing to speak" in raised.value.details()


def test_a_call_without_text_ends_with_an_empty_done(stub):
    pb = stubs().pb
    responses = BidiClient(stub).run(lambda: iter([
        pb.StreamingSynthesizeRequest(config=options(voice="en-us")),
        pb.StreamingSynthesizeRequest(end=True)]))
    assert kinds(responses) == ["done"]
    assert responses[0].done.usage.segments == 0


def test_list_voices_and_models(server, stub):
    pb = stubs().pb
    voices = stub.ListVoices(pb.ListVoicesRequest(), timeout=10).voices
    by_id = {v.id: v for v in voices}
    assert by_id["en-us"].model == "espeak" and by_id["en-us"].sample_rate == 22050
    assert by_id["alloy"].alias_of and by_id["zh_female"].alias_of == "cmn+f3"
    english = stub.ListVoices(pb.ListVoicesRequest(language="en"), timeout=10).voices
    assert english and all(v.language.startswith("en") for v in english)
    models = {m.id: m for m in stub.ListModels(pb.ListModelsRequest(), timeout=10).models}
    assert models["espeak"].state == pb.MODEL_STATE_READY and models["espeak"].voices > 100
    assert models["tts-1"].alias_of == "espeak"


def test_health_serves_the_whole_server_and_the_tts_service(server):
    health = stubs()
    with channel(server) as ch:
        check = health.health_rpc.HealthStub(ch).Check
        for name in ["", "voxserve.v1.TextToSpeech"]:
            reply = check(health.health_pb.HealthCheckRequest(service=name), timeout=10)
            assert reply.status == health.health_pb.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as error:
            check(health.health_pb.HealthCheckRequest(service="no.such.Service"), timeout=10)
        assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_health_is_not_serving_until_the_models_are_warm(make_server, tmp_path):
    long_text = " ".join(f"This is sentence number {i} of a long warm-up text." for i in range(60))
    config = tmp_path / "voxserve.yaml"
    config.write_text("models:\n  - id: espeak\n    warmup: [" +
                      ", ".join(f'"{long_text}"' for _ in range(8)) + "]\n")
    server = make_server("--config", str(config), wait_ready=False)
    health = stubs()
    with channel(server) as ch:
        check = health.health_rpc.HealthStub(ch).Check
        request = health.health_pb.HealthCheckRequest(service="")
        assert check(request, timeout=10).status == health.health_pb.HealthCheckResponse.NOT_SERVING
        server.wait_ready()
        assert wait_for(lambda: check(request, timeout=10).status ==
                        health.health_pb.HealthCheckResponse.SERVING, timeout=5)


def test_reflection_lists_the_services(server):
    with channel(server) as ch:
        info = ch.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        # ServerReflectionRequest{list_services: ""}: field 7, length-delimited, empty.
        replies = list(info(iter([b"\x3a\x00"]), timeout=10))
    assert b"voxserve.v1.TextToSpeech" in replies[0]
    assert b"grpc.health.v1.Health" in replies[0]
