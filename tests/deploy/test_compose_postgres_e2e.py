"""deploy/compose with the shared voice registry: compose.yaml + compose.postgres.yaml brought up
unchanged (the `postgres` service from a stand-in image of Debian's PostgreSQL 15,
images/postgres.Dockerfile; a volume), both replicas on it behind nginx. A voice registered
through nginx is known at once on each replica and through nginx; one deleted through nginx is
gone from both within 1 s; a replica killed (SIGKILL) while registrations run loses no voice whose
registration was answered 200.

The image's model (espeak) cannot clone, so the replicas run with voices.test_cloner's stand-in
(compose.test-cloner.yaml, as tests/integration/test_voice_postgres.py does): synthesis with a
known cloned voice answers 501 naming it, after its profile was loaded from the registry; a
replica that does not know the voice answers 404 `voice_not_found`.

Run by `make test-deploy` after test_compose_e2e.py (tests/deploy/run-e2e.sh builds the images)."""
import os
import pathlib
import subprocess
import sys
import threading
import time

import grpc
import pytest
import requests

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "integration"))
from test_compose_e2e import COMPOSE_DIR, REPLICAS, Compose  # noqa: E402
from grpc_support import CHANNEL_OPTIONS, stubs, trailer  # noqa: E402
from test_voice_cloning import SAMPLE  # noqa: E402  (1 s of 16 kHz WAV)

VOICES = "/v1/audio/voices"
FILES = (COMPOSE_DIR / "compose.yaml", COMPOSE_DIR / "compose.postgres.yaml",
         HERE / "compose.test-cloner.yaml")


def register(url, name, timeout=30):
    return requests.post(url + VOICES, data={"name": name, "transcript": "hello world"},
                         files={"audio_sample": ("sample.wav", SAMPLE, "audio/wav")},
                         timeout=timeout)


def speak(session, url, voice):
    return session.post(url + "/v1/audio/speech", timeout=30,
                        json={"model": "espeak", "input": "Hello.", "voice": voice})


def error_code(response):
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def voice_ids(url):
    answer = requests.get(url + VOICES, timeout=10)
    assert answer.status_code == 200, answer.text
    return {v["id"] for v in answer.json()["data"]}


def stored_ids(compose):
    """The voices' ids as PostgreSQL holds them (psql in the postgres container)."""
    out = compose.run("exec", "-T", "postgres", "psql", "-U", "voxserve", "-d", "voxserve",
                      "-Atc", "SELECT id FROM voxserve_voices").stdout
    return set(out.split())


def store_connected(compose, service):
    health = compose.replica_health(service) or {}
    return health.get("voices") == {"backend": "postgres", "status": "ok"}


@pytest.fixture(scope="module")
def compose():
    c = Compose(FILES, project=f"vxdeploypg{os.getpid()}")
    try:
        c.up("postgres", "voxserve-a", "voxserve-b", "nginx")  # Prometheus is not needed here
        c.wait("both replicas connected to PostgreSQL",
               lambda: all(store_connected(c, s) for s in REPLICAS), 60)
        yield c
    finally:
        c.down()


def speak_grpc(stub, voice):
    """(gRPC status name, voxserve-error-code, details) of a unary Synthesize with `voice`."""
    request = stubs().pb.SynthesizeRequest(
        text="Hello.", options=stubs().pb.SynthesisOptions(model="espeak", voice=voice))
    try:
        stub.Synthesize(request, timeout=30)
    except grpc.RpcError as error:
        return error.code().name, trailer(error, "voxserve-error-code"), error.details()
    return "OK", None, ""


def test_a_voice_registered_through_nginx_speaks_on_every_replica_at_once(compose):
    created = register(compose.url, "Shared Narrator")
    assert created.status_code == 200, created.text
    voice = created.json()
    assert voice["family"] == "test"
    # Straight after the answer: each replica directly (its HTTP and its gRPC port) and nginx
    # (both ports), in turn, 50 times each, by id and by name.
    hosts = {s: compose.replica_url(s).removeprefix("http://").removesuffix(":8080")
             for s in REPLICAS}
    rest = {f"{s} http": f"http://{host}:8080" for s, host in hosts.items()}
    rest["nginx http"] = compose.url
    grpc_targets = {f"{s} grpc": f"{host}:9090" for s, host in hosts.items()}
    grpc_targets["nginx grpc"] = f"127.0.0.1:{compose.grpc_port}"
    channels = {t: grpc.insecure_channel(a, options=CHANNEL_OPTIONS)
                for t, a in grpc_targets.items()}
    answers = {target: [] for target in [*rest, *grpc_targets]}
    try:
        with requests.Session() as session:
            for i in range(50):
                name = voice["id"] if i % 2 == 0 else "shared narrator"
                for target, url in rest.items():
                    answer = speak(session, url, name)
                    answers[target].append((answer.status_code, error_code(answer), answer.text))
                for target, channel in channels.items():
                    answers[target].append(speak_grpc(stubs().rpc.TextToSpeechStub(channel), name))
    finally:
        for channel in channels.values():
            channel.close()
    not_found = {t: sum(code == "voice_not_found" for _, code, _ in a) for t, a in answers.items()}
    print(f"\n50 syntheses per target right after a registration through nginx: voice_not_found "
          f"{not_found}")
    assert not_found == {target: 0 for target in answers}
    for target, results in answers.items():
        for status, _, text in results:  # the profile was found and loaded: espeak declines it
            assert status in (501, "UNIMPLEMENTED") and voice["id"] in text, (target, text)
    for url in rest.values():
        assert voice["id"] in voice_ids(url)
    assert voice["id"] in stored_ids(compose)


def test_a_voice_deleted_through_nginx_is_gone_from_both_replicas_within_a_second(compose):
    created = register(compose.url, "Short Lived")
    assert created.status_code == 200, created.text
    voice_id = created.json()["id"]
    urls = [compose.replica_url(s) for s in REPLICAS]
    for url in urls:
        assert requests.get(url + VOICES + "/" + voice_id, timeout=10).status_code == 200

    deleted = requests.delete(compose.url + VOICES + "/" + voice_id, timeout=10)
    assert deleted.status_code == 200, deleted.text
    started = time.monotonic()
    gone = set()
    with requests.Session() as session:
        while len(gone) < len(urls) and time.monotonic() - started < 1.0:
            for url in set(urls) - gone:
                if session.get(url + VOICES + "/" + voice_id, timeout=1).status_code == 404:
                    gone.add(url)
            time.sleep(0.01)  # polling the replicas' answers, bounded by the 1 s above
    elapsed = time.monotonic() - started
    print(f"\ndeletion through nginx: 404 on both replicas after {elapsed * 1000:.0f} ms")
    assert gone == set(urls), f"still known after {elapsed:.2f} s: {set(urls) - gone}"
    with requests.Session() as session:
        for url in urls + [compose.url]:
            answer = speak(session, url, voice_id)
            assert answer.status_code == 404, answer.text
            assert error_code(answer) == "voice_not_found", answer.text
    assert voice_id not in stored_ids(compose)


def test_a_replica_killed_during_registrations_loses_no_committed_voice(compose):
    """Registrations run through nginx (3 clients) and straight to voxserve-a (1 client) while
    voxserve-a is killed. A registration answered 200 is committed: it must be in PostgreSQL and
    listed by both replicas (voxserve-a once it is back). One cut by the kill may have committed
    or not, but never half: every row is listed and speaks on both."""
    lock = threading.Lock()
    committed, failed = set(), []
    stop = threading.Event()
    direct_url = compose.replica_url("voxserve-a")

    def client(url, prefix):
        i = 0
        while not stop.is_set():
            i += 1
            try:
                answer = register(url, f"{prefix} {i}", timeout=10)
            except requests.RequestException as e:
                with lock:
                    failed.append(f"{prefix} {i}: {type(e).__name__}")
                if url == direct_url:
                    return  # voxserve-a is gone
                continue
            with lock:
                if answer.status_code == 200:
                    committed.add(answer.json()["id"])
                else:
                    failed.append(f"{prefix} {i}: {answer.status_code} {error_code(answer)}")

    def count():
        with lock:
            return len(committed)

    # At most voices.max_pending (4) registrations at once on one replica: none is refused 429.
    threads = [threading.Thread(target=client, args=(compose.url, f"burst {n}"))
               for n in range(3)] + [threading.Thread(target=client, args=(direct_url, "direct"))]
    victim = compose.container("voxserve-a")
    for t in threads:
        t.start()
    try:
        compose.wait("registrations under way", lambda: count() >= 20, 60)
        subprocess.run(["docker", "kill", victim], check=True, capture_output=True)
        at_kill = count()
        compose.wait("registrations after the kill", lambda: count() >= at_kill + 20, 60)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    print(f"\nregistrations while voxserve-a was killed: {len(committed)} answered 200 "
          f"({at_kill} before the kill), {len(failed)} failed: {failed[:8]}")

    stored = stored_ids(compose)
    assert committed <= stored, f"committed but not stored: {committed - stored}"
    b_url = compose.replica_url("voxserve-b")
    compose.wait("voxserve-b to list every stored voice", lambda: voice_ids(b_url) == stored, 5)

    # voxserve-a back (docker kill counts as a deliberate stop for restart: unless-stopped): it
    # reads the registry from PostgreSQL and knows every voice too.
    compose.run("start", "voxserve-a")
    compose.wait("voxserve-a connected again", lambda: store_connected(compose, "voxserve-a"), 120)
    a_url = compose.replica_url("voxserve-a")
    assert voice_ids(a_url) == stored
    with requests.Session() as session:
        for url in (a_url, b_url):
            for voice_id in stored:
                answer = speak(session, url, voice_id)
                assert answer.status_code == 501 and voice_id in answer.text, answer.text
