"""The response cache (cache.*, docs/response-cache.md) through the real binary on espeak-ng:
a repeated request gets the very bytes an uncached server makes, on every HTTP API, gRPC and the
WebSocket stream; streamed answers (chunked and SSE) come back from the cache as streams in the
same pieces; `Cache-Control: no-cache` / `no-store` (gRPC metadata `cache-control`, the WebSocket
config's `cache_control`) bypass it; X-Cache says hit, miss or bypass; the metrics move as they
should; and a flood of distinct texts never takes it past its bounds.

Cloned voices (whose deletion invalidates their entries, also when another replica deletes them
through the postgres backend) are spoken only by CosyVoice: the service's unit tests
(tests/unit/service/response_cache_service_test.cc) cover their entries; here the postgres test
checks that a deletion on another replica reaches this one's cache hook."""
import asyncio
import base64
import concurrent.futures
import http.client
import json
import threading

import pytest
import requests
import websockets

from conftest import VoxServer
from grpc_support import channel, stubs
from probes import metric, wait_for

TIMEOUT = 60
TWO_SENTENCES = "The cache keeps this greeting. It also keeps this second sentence."


@pytest.fixture(scope="module")
def cached(voxserve_bin):
    instance = VoxServer(voxserve_bin, ["--cache-enabled", "true"]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


@pytest.fixture(scope="module")
def uncached(voxserve_bin):
    instance = VoxServer(voxserve_bin, []).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def speech(server, text, headers=None, **fields):
    body = {"model": "tts-1", "input": text, "voice": "alloy", "response_format": "wav", **fields}
    return requests.post(server.url + "/v1/audio/speech", json=body, headers=headers or {},
                         timeout=TIMEOUT)


def ok(response):
    assert response.status_code == 200, response.text
    return response


def cache_metrics(server):
    return {name: metric(server, "voxserve_response_cache_" + name, labels)
            for name, labels in [("hits_total", 'model="espeak"'),
                                 ("misses_total", 'model="espeak"'), ("bytes", ""),
                                 ("entries", ""), ("evictions_total", "")]}


def test_a_repeated_request_gets_the_uncached_bytes_from_the_cache(cached, uncached):
    text = "Welcome to the cached line."
    before = cache_metrics(cached)
    first = ok(speech(cached, text))
    second = ok(speech(cached, text))
    fresh = ok(speech(uncached, text))
    assert first.headers["X-Cache"] == "miss"
    assert second.headers["X-Cache"] == "hit"
    assert "X-Cache" not in fresh.headers  # the cache is off by default
    assert first.content == second.content == fresh.content
    assert len(first.content) > 10_000
    after = cache_metrics(cached)
    assert after["misses_total"] == before["misses_total"] + 1
    assert after["hits_total"] == before["hits_total"] + 1
    assert after["entries"] == before["entries"] + 1
    assert after["bytes"] >= before["bytes"] + len(first.content)
    # The uncached server counts nothing.
    assert cache_metrics(uncached)["misses_total"] == 0


def test_anything_that_changes_the_audio_misses(cached):
    text = "Every option is part of the key."
    ok(speech(cached, text))
    for change in [{"voice": "echo"}, {"speed": 1.5}, {"response_format": "mp3"},
                   {"sample_rate": 8000}, {"input": text + " Twice."}]:
        fields = dict(change)
        answer = ok(speech(cached, fields.pop("input", text), **fields))
        assert answer.headers["X-Cache"] == "miss", change


@pytest.mark.parametrize("path,field", [("/v1/synthesize", "text"), ("/tts", "text")])
def test_the_other_rest_routes_use_the_cache_and_honour_cache_control(cached, path, field):
    text = f"The {path} route is cached."

    def post(headers=None):
        return ok(requests.post(cached.url + path, json={field: text, "voice": "en-us"},
                                headers=headers or {}, timeout=TIMEOUT))

    refreshed = post({"Cache-Control": "no-cache"})
    assert refreshed.headers["X-Cache"] == "bypass"  # not read, but stored
    hit = post()
    assert hit.headers["X-Cache"] == "hit" and hit.content == refreshed.content
    assert post({"Cache-Control": "max-age=0"}).headers["X-Cache"] == "bypass"
    assert post({"Pragma": "no-cache"}).headers["X-Cache"] == "bypass"
    assert post({"Cache-Control": "max-age=60"}).headers["X-Cache"] == "hit"


def test_no_store_neither_reads_nor_stores(cached):
    text = "This answer is never kept."
    before = cache_metrics(cached)
    for _ in range(2):
        answer = ok(speech(cached, text, headers={"Cache-Control": "no-store"}))
        assert answer.headers["X-Cache"] == "bypass"
    after = cache_metrics(cached)
    assert after["entries"] == before["entries"]
    assert after["hits_total"] == before["hits_total"]
    assert after["misses_total"] == before["misses_total"]
    # Several Cache-Control lines are one list: the strictest directive wins.
    connection = http.client.HTTPConnection("127.0.0.1", cached.port, timeout=TIMEOUT)
    body = json.dumps({"model": "tts-1", "input": text, "voice": "alloy"}).encode()
    connection.putrequest("POST", "/v1/audio/speech")
    for name, value in [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                        ("Cache-Control", "max-age=60"), ("Cache-Control", "no-store")]:
        connection.putheader(name, value)
    connection.endheaders(body)
    answer = connection.getresponse()
    assert answer.status == 200 and answer.getheader("X-Cache") == "bypass"
    connection.close()
    assert ok(speech(cached, text)).headers["X-Cache"] == "miss"


def read_chunks(response):
    assert response.status_code == 200, response.text
    assert response.headers.get("Transfer-Encoding") == "chunked"
    return [chunk for chunk in response.raw.read_chunked(decode_content=False)]


def test_a_chunked_stream_from_the_cache_streams_the_same_chunks(cached):
    body = {"model": "tts-1", "input": TWO_SENTENCES + " Chunked.", "voice": "alloy",
            "response_format": "pcm", "stream_format": "audio"}

    def stream():
        with requests.post(cached.url + "/v1/audio/speech", json=body, stream=True,
                           timeout=TIMEOUT) as response:
            return response.headers.get("X-Cache"), read_chunks(response)

    missed, synthesized = stream()
    hit, replayed = stream()
    assert (missed, hit) == ("miss", "hit")
    assert len(replayed) >= 2, "a stream of two sentences came back in one piece"
    assert b"".join(replayed) == b"".join(synthesized)
    assert len(replayed) == len(synthesized)
    # A whole file of the same text is another entry (a stream's container differs).
    assert ok(speech(cached, body["input"], response_format="pcm",
                     stream=False)).headers["X-Cache"] == "miss"


def sse_events(response):
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "text/event-stream"
    return [json.loads(line[len("data: "):]) for line in response.iter_lines(decode_unicode=True)
            if line.startswith("data: ")]


def test_an_sse_stream_from_the_cache_sends_the_same_events(cached):
    body = {"model": "tts-1", "input": TWO_SENTENCES + " Events.", "voice": "alloy",
            "response_format": "pcm", "stream_format": "sse", "timestamps": "word"}

    def stream():
        with requests.post(cached.url + "/v1/audio/speech", json=body, stream=True,
                           timeout=TIMEOUT) as response:
            return response.headers.get("X-Cache"), sse_events(response)

    missed, synthesized = stream()
    hit, replayed = stream()
    assert (missed, hit) == ("miss", "hit")
    kinds = [event["type"] for event in replayed]
    assert kinds.count("speech.audio.delta") >= 2 and kinds[-1] == "speech.audio.done"
    assert kinds.count("speech.audio.timestamps") == 3  # one per sentence, as synthesized
    assert kinds == [event["type"] for event in synthesized]
    audio = [base64.b64decode(e["audio"]) for e in replayed if e["type"] == "speech.audio.delta"]
    assert audio == [base64.b64decode(e["audio"]) for e in synthesized
                     if e["type"] == "speech.audio.delta"]
    stamps = [e for e in replayed if e["type"] == "speech.audio.timestamps"]
    assert stamps == [e for e in synthesized if e["type"] == "speech.audio.timestamps"]


def elevenlabs(server, text, route="", headers=None):
    return requests.post(f"{server.url}/elevenlabs/v1/text-to-speech/en-us{route}",
                         params={"output_format": "pcm_16000"}, headers=headers or {},
                         json={"text": text, "model_id": "eleven_multilingual_v2"},
                         timeout=TIMEOUT)


def test_elevenlabs_routes_use_the_cache_sentence_by_sentence(cached, uncached):
    text = "ElevenLabs clients are cached too. Sentence by sentence."
    first = ok(elevenlabs(cached, text))
    second = ok(elevenlabs(cached, text))
    assert (first.headers["X-Cache"], second.headers["X-Cache"]) == ("miss", "hit")
    assert first.content == second.content == ok(elevenlabs(uncached, text)).content
    # One sentence new, one known: a miss overall.
    mixed = ok(elevenlabs(cached, "ElevenLabs clients are cached too. A new one."))
    assert mixed.headers["X-Cache"] == "miss"
    streamed = ok(elevenlabs(cached, text, route="/stream"))
    assert streamed.headers["X-Cache"] == "hit" and streamed.content == first.content
    assert ok(elevenlabs(cached, text, headers={"Cache-Control": "no-store"})
              ).headers["X-Cache"] == "bypass"


def test_grpc_reports_x_cache_and_honours_cache_control_metadata(cached):
    pb = stubs().pb
    request = pb.SynthesizeRequest(text="Cached over gRPC.", options=pb.SynthesisOptions())
    with channel(cached) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)

        def call(metadata=()):
            response, rpc = stub.Synthesize.with_call(request, metadata=metadata, timeout=TIMEOUT)
            return response.audio, dict(rpc.trailing_metadata()).get("x-cache")

        audio_miss, missed = call()
        audio_hit, hit = call()
        assert (missed, hit) == ("miss", "hit") and audio_hit == audio_miss
        assert call([("cache-control", "no-cache")])[1] == "bypass"
        assert call([("cache-control", "no-store")])[1] == "bypass"

        stream_request = pb.SynthesizeRequest(text=TWO_SENTENCES + " Over gRPC.",
                                              options=pb.SynthesisOptions())

        def stream():
            responses = stub.SynthesizeStream(stream_request, timeout=TIMEOUT)
            chunks = [r.audio.audio for r in responses if r.HasField("audio")]
            return chunks, dict(responses.trailing_metadata()).get("x-cache")

        synthesized, missed = stream()
        replayed, hit = stream()
        assert (missed, hit) == ("miss", "hit")
        assert replayed == synthesized and len(replayed) >= 2


def test_the_websocket_stream_uses_the_cache_unless_its_config_says_no_store(cached):
    async def converse(config):
        url = f"ws://127.0.0.1:{cached.port}/v1/audio/speech/stream"
        audio = b""
        async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
            await ws.send(json.dumps(config))
            await ws.send(json.dumps({"text": "Spoken over the socket.", "close": True}))
            async for message in ws:
                if isinstance(message, bytes):
                    audio += message
        return audio

    def hits():
        return metric(cached, "voxserve_response_cache_hits_total", 'model="espeak"')

    config = {"voice": "en-us", "response_format": "pcm"}
    first = asyncio.run(asyncio.wait_for(converse(config), TIMEOUT))
    before = hits()
    second = asyncio.run(asyncio.wait_for(converse(config), TIMEOUT))
    assert hits() == before + 1 and second == first and len(first) > 1000
    third = asyncio.run(asyncio.wait_for(converse({**config, "cache_control": "no-store"}),
                                         TIMEOUT))
    assert hits() == before + 1 and third == first


def test_a_flood_of_distinct_texts_stays_within_the_bounds(make_server):
    # 1 MiB is the least cache.max_bytes takes. The short prompts (~1 s, ~40 kB of WAV each) meet
    # max_entries first; the long ones (~6 s, ~250 kB) meet max_bytes first.
    max_bytes, max_entries = 1 << 20, 12
    server = make_server("--cache-enabled", "true", "--cache-max-bytes", str(max_bytes),
                         "--cache-max-entries", str(max_entries))
    seen = {"entries": 0, "bytes": 0}
    done = threading.Event()

    def watch():  # samples the gauges all through the flood
        while not done.is_set():
            sizes = cache_metrics(server)
            seen["entries"] = max(seen["entries"], sizes["entries"])
            seen["bytes"] = max(seen["bytes"], sizes["bytes"])

    texts = [f"Prompt {i}." for i in range(60)]
    texts += [f"A longer distinct prompt, number {i}, so that the bytes bound is the one that "
              f"holds: it goes on for several seconds of speech, and then some more."
              for i in range(40)]
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            for answer in pool.map(lambda t: speech(server, t), texts):
                assert ok(answer).headers["X-Cache"] == "miss"
    finally:
        done.set()
        watcher.join()
    sizes = cache_metrics(server)
    assert seen["entries"] == max_entries, "the short prompts never filled the entries"
    assert seen["bytes"] <= max_bytes
    assert 0 < sizes["entries"] < max_entries, "the long prompts never met the bytes bound"
    assert sizes["bytes"] <= max_bytes
    assert sizes["evictions_total"] >= len(texts) - max_entries
    assert sizes["misses_total"] == len(texts)
    # Still a working cache: a new text is stored and then served; the oldest is long gone.
    assert ok(speech(server, "After the flood.")).headers["X-Cache"] == "miss"
    assert ok(speech(server, "After the flood.")).headers["X-Cache"] == "hit"
    assert ok(speech(server, texts[0])).headers["X-Cache"] == "miss"


def test_a_request_may_turn_normalization_on_for_espeak(cached):
    # espeak-ng reads "3.5 kg" itself; "on" gives it the normalizer's words instead.
    as_sent = ok(speech(cached, "It weighs 3.5 kg."))
    normalized = ok(speech(cached, "It weighs 3.5 kg.", apply_text_normalization="on"))
    spelled = ok(speech(cached, "It weighs three point five kilograms."))
    assert normalized.content == spelled.content
    assert spelled.headers["X-Cache"] == "hit"  # the key holds the text as the engine gets it
    assert as_sent.content != normalized.content
    bad = speech(cached, "Hello.", apply_text_normalization="sometimes")
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid_text_normalization"


def test_a_voice_deleted_by_another_replica_is_forgotten_here_too(make_server):
    """Replica B learns of A's deletion through PostgreSQL's NOTIFY and drops what it holds of
    the voice: its profile and its cached answers (the hook the service's unit tests cover)."""
    from postgres_support import Postgres
    from test_voice_postgres import start, wait_connected, voice_ids
    from test_voice_cloning import register

    pg = Postgres().start()
    try:
        a = start(make_server, pg, "--cache-enabled", "true")
        b = start(make_server, pg, "--cache-enabled", "true")
        wait_connected(a)
        wait_connected(b)
        for round_ in range(3):  # A's own notification races its deletion: repeat it
            voice = register(a, f"Replicated {round_}").json()
            assert wait_for(lambda: voice_ids(b) == [voice["id"]], 5)
            assert requests.delete(f"{a.url}/v1/audio/voices/{voice['id']}",
                                   timeout=10).status_code == 200
            line = f"voices: {voice['id']} was deleted by another replica"
            assert wait_for(lambda: any(line in entry for entry in b.log_lines), 5), b.log()
            # A's own deletion is a local one: it is not reported as another's, even when its
            # notification comes back before the deletion is recorded.
            assert wait_for(lambda: voice_ids(a) == [], 5)
            assert not any(line in entry for entry in a.log_lines), a.log()
    finally:
        pg.remove()
