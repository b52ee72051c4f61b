"""deploy/compose end to end with the real Docker engine: the image built from the Dockerfile,
the real compose file brought up (only the published ports differ, through its own variables),
load through nginx with voxbench (libvoxclient), a replica killed mid-run and one stopped
(drained) under load, every streaming transport through nginx, Prometheus scraping both replicas.
Everything the test creates (containers, the network, volumes) is removed at the end.

Run by `make test-deploy` (a phase of `make test`): tests/deploy/run-e2e.sh starts dockerd when it
is not running and builds the images first."""
import asyncio
import json
import os
import pathlib
import resource
import socket
import subprocess
import sys
import threading
import time

import pytest
import requests
import websockets
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMPOSE_DIR = ROOT / "deploy" / "compose"
sys.path.insert(0, str(ROOT / "tests" / "integration"))
from audio_check import decode  # noqa: E402
from grpc_support import CHANNEL_OPTIONS, stubs  # noqa: E402

VOXBENCH = os.environ.get("VOXBENCH_BIN")
PROJECT = f"vxdeploy{os.getpid()}"
REPLICAS = ("voxserve-a", "voxserve-b")
TEXT = "The quick brown fox jumps over the lazy dog."
SPEECH = {"model": "tts-1", "voice": "alloy"}  # OpenAI's required fields


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Compose:
    """The compose project under test; ports published on loopback only. `files`: the compose
    files, in order (compose.yaml first; its folder is the project's)."""

    def __init__(self, files=(COMPOSE_DIR / "compose.yaml",), project=PROJECT):
        self.files, self.project = [str(f) for f in files], project
        self.http_port, self.grpc_port, self.prom_port = free_port(), free_port(), free_port()
        self.env = dict(os.environ,
                        VOXSERVE_HTTP_PORT=f"127.0.0.1:{self.http_port}",
                        VOXSERVE_GRPC_PORT=f"127.0.0.1:{self.grpc_port}",
                        PROMETHEUS_PORT=f"127.0.0.1:{self.prom_port}",
                        # compose.yaml's 65536 unless this machine's hard limit is lower
                        VOXSERVE_NOFILE=str(min(65536,
                                                resource.getrlimit(resource.RLIMIT_NOFILE)[1])))

    def run(self, *args, timeout=300, check=True):
        files = [arg for f in self.files for arg in ("-f", f)]
        result = subprocess.run(["docker-compose", "-p", self.project, *files, *args],
                                env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"docker-compose {' '.join(args)}: {result.stderr}")
        return result

    @property
    def url(self):
        return f"http://127.0.0.1:{self.http_port}"

    def container(self, service):
        return self.run("ps", "-q", service).stdout.strip()

    def replica_url(self, service):
        """The replica's own HTTP address on the project's network (reachable from the host
        that runs dockerd), bypassing nginx."""
        out = subprocess.run(["docker", "inspect", "-f",
                              "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
                              self.container(service)], capture_output=True, text=True)
        return f"http://{out.stdout.strip()}:8080"

    def health(self, service):
        """The replica's Docker health status (its HEALTHCHECK: voxctl health --ready)."""
        out = subprocess.run(["docker", "inspect", "-f", "{{.State.Health.Status}}",
                              self.container(service)], capture_output=True, text=True)
        return out.stdout.strip()

    def replica_health(self, service):
        """/health of one replica as JSON, read inside its container with voxctl."""
        out = subprocess.run(["docker", "exec", self.container(service), "voxctl", "--url",
                              "http://127.0.0.1:8080", "health"], capture_output=True, text=True,
                             timeout=10)
        try:
            return json.loads(out.stdout)
        except json.JSONDecodeError:
            return None

    def wait(self, what, predicate, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.2)  # polling an external system's state, not synchronizing threads
        raise AssertionError(f"timed out waiting for {what}:\n" + self.run("logs", "--tail", "50",
                                                                           check=False).stdout)

    def back_in_rotation(self, service, timeout=60):
        """Waits until nginx sends requests to `service` again and it answers them: after a
        failure nginx skips a replica for fail_timeout (10 s) even once it is healthy, and a
        second failure inside that window would leave no live upstream."""
        def answered():
            for _ in range(8):
                requests.post(self.url + "/v1/audio/speech", json={**SPEECH, "input": TEXT},
                              timeout=30)
            return (served(self, service) or 0) > 0
        self.wait(f"{service} back in rotation", answered, timeout)

    def nginx_workers(self):
        """PIDs of nginx's worker processes, read from /proc inside its container."""
        out = self.run("exec", "-T", "nginx", "sh", "-c",
                       "for d in /proc/[0-9]*; do printf '%s ' ${d#/proc/}; "
                       "tr '\\0' ' ' < $d/cmdline; echo; done", check=False).stdout
        return {line.split()[0] for line in out.splitlines() if "worker process" in line}

    def reset_nginx_peer_state(self):
        """nginx's passive health check (max_fails) is counted per worker, and a failure is
        only forgotten after a success once fail_timeout has passed in that worker; an earlier
        test's killed replica can so stay half-failed in one worker, and one more failure there
        leaves it no live upstream. A reload starts fresh workers: this waits until every old
        one has exited and new ones run."""
        old = self.nginx_workers()
        self.run("exec", "-T", "nginx", "nginx", "-s", "reload")
        self.wait("nginx's workers replaced",
                  lambda: (lambda now: now and not (now & old))(self.nginx_workers()), 60)

    def wait_healthy(self, services=REPLICAS, timeout=180):
        self.wait(f"{services} healthy", lambda: all(self.health(s) == "healthy" for s in services),
                  timeout)

    def up(self, *services):
        """Brings the project (or `services` and what they depend on) up and waits until both
        replicas are healthy and nginx answers."""
        self.run("up", "-d", *services, timeout=600)
        self.wait_healthy()
        self.wait("nginx", lambda: _ready(self.url))

    def down(self):
        """Removes everything the project made, and checks that nothing is left."""
        self.run("down", "-v", "--remove-orphans", "--timeout", "10", check=False)
        label = f"label=com.docker.compose.project={self.project}"
        leftovers = [item for kind in (["ps", "-a"], ["network", "ls"], ["volume", "ls"])
                     for item in subprocess.run(["docker", *kind, "-q", "--filter", label],
                                                capture_output=True, text=True).stdout.split()]
        assert not leftovers, f"left behind: {leftovers}"


@pytest.fixture(scope="module")
def compose():
    c = Compose()
    try:
        c.up()
        yield c
    finally:
        c.down()


def _ready(url):
    try:
        return requests.get(url + "/health/ready", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def voxbench(compose, seconds, concurrency, retries, stream=False, protocol="rest", text=TEXT):
    """Starts voxbench through nginx; returns (process, path of its JSON result)."""
    out = pathlib.Path(f"/tmp/{PROJECT}-{time.monotonic_ns()}.json")
    url = compose.url if protocol == "rest" else f"grpc://127.0.0.1:{compose.grpc_port}"
    args = [VOXBENCH, "--url", url, "--protocol", protocol, "-c", str(concurrency),
            "-d", str(seconds), "--warmup", "0", "--text", text, "--retries", str(retries),
            "--timeout", "30", "--json", str(out)]
    if stream:
        args.append("--stream")
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), out


def finish(process, out, compose=None):
    log, _ = process.communicate(timeout=180)
    if compose is not None:  # nginx's view, for a failure's message
        lines = compose.run("logs", "nginx", check=False).stdout.splitlines()
        log += "\n".join(l for l in lines if "[error]" in l or "[warn]" in l or '" 50' in l)
    assert process.returncode in (0, 1), log  # 1: some requests failed (counted below)
    (point,) = json.loads(out.read_text())["points"]
    out.unlink()
    return point, log


def in_flight(compose, service):
    """Requests one replica has in flight now (its /health)."""
    health = compose.replica_health(service)
    return health.get("in_flight", 0) if health else 0


def served(compose, service):
    """Speech requests one replica answered 200 since it started, as Prometheus scraped it."""
    query = ('sum(voxserve_http_requests_total{route="/v1/audio/speech",code="200",'
             f'instance="{service}:8080"}})')
    try:
        result = requests.get(f"http://127.0.0.1:{compose.prom_port}/api/v1/query",
                              params={"query": query}, timeout=5).json()["data"]["result"]
    except (requests.RequestException, ValueError, KeyError):
        return None
    return float(result[0]["value"][1]) if result else 0.0


# --- every transport through nginx ----------------------------------------------------------

def test_rest_whole_file_chunked_and_sse_pass_through_nginx(compose):
    r = requests.post(compose.url + "/v1/audio/speech", json={**SPEECH, "input": TEXT}, timeout=30)
    assert r.status_code == 200 and decode(r.content, "wav").duration > 1
    chunks = []
    with requests.post(compose.url + "/v1/audio/speech", stream=True, timeout=30,
                       json={**SPEECH, "input": TEXT + " " + TEXT, "response_format": "pcm",
                             "stream_format": "audio"}) as r:
        assert r.status_code == 200 and r.headers.get("Transfer-Encoding") == "chunked"
        chunks = [c for c in r.iter_content(chunk_size=None) if c]
    assert decode(b"".join(chunks), "pcm").duration > 2
    with requests.post(compose.url + "/v1/audio/speech", stream=True, timeout=30,
                       json={**SPEECH, "input": TEXT, "stream_format": "sse"}) as r:
        assert r.headers["Content-Type"] == "text/event-stream"
        events = [line for line in r.iter_lines() if line.startswith(b"data:")]
    kinds = [json.loads(e[5:])["type"] for e in events]
    assert kinds[-1] == "speech.audio.done" and "speech.audio.delta" in kinds


def test_websocket_streams_through_nginx(compose):
    async def talk():
        async with websockets.connect(f"ws://127.0.0.1:{compose.http_port}/v1/audio/speech/stream",
                                      max_size=None, open_timeout=10) as ws:
            await ws.send(json.dumps({"response_format": "pcm"}))
            await ws.send(json.dumps({"text": "Hello through the proxy. "}))
            await ws.send(json.dumps({"close": True}))
            kinds, audio = [], b""
            async for message in ws:
                if isinstance(message, bytes):
                    audio += message
                else:
                    kinds.append(json.loads(message)["type"])
            return kinds, audio
    kinds, audio = asyncio.run(asyncio.wait_for(talk(), 30))
    assert kinds[0] == "ready" and kinds[-1] == "done" and "segment_done" in kinds
    assert decode(audio, "pcm").duration > 0.5


def test_grpc_unary_and_server_streaming_pass_through_nginx(compose):
    import grpc
    with grpc.insecure_channel(f"127.0.0.1:{compose.grpc_port}", options=CHANNEL_OPTIONS) as ch:
        stub = stubs().rpc.TextToSpeechStub(ch)
        request = stubs().pb.SynthesizeRequest(text=TEXT + " " + TEXT)
        whole = stub.Synthesize(request, timeout=30)
        assert len(whole.audio) > 1000
        events = [r.WhichOneof("event") for r in stub.SynthesizeStream(request, timeout=30)]
        assert events.count("audio") >= 2 and events[-1] == "done"


def test_prometheus_scrapes_both_replicas(compose):
    url = f"http://127.0.0.1:{compose.prom_port}/api/v1/targets"

    def both_up():
        try:
            targets = requests.get(url, timeout=5).json()["data"]["activeTargets"]
        except (requests.RequestException, ValueError, KeyError):
            return False
        return sorted((t["labels"]["instance"], t["health"]) for t in targets) == [
            ("voxserve-a:8080", "up"), ("voxserve-b:8080", "up")]
    compose.wait("Prometheus targets up", both_up, timeout=60)


def test_prometheus_evaluates_the_shipped_alert_rules(compose):
    """deploy/monitoring/alerts.yaml, mounted into the stack's Prometheus: every alert loaded and
    evaluated without error against the live replicas' series, and none firing on a healthy
    stack."""
    shipped = {rule["alert"] for group in yaml.safe_load(
        (ROOT / "deploy" / "monitoring" / "alerts.yaml").read_text())["groups"]
        for rule in group["rules"]}
    url = f"http://127.0.0.1:{compose.prom_port}/api/v1/rules"

    def evaluated():
        try:
            groups = requests.get(url, timeout=5).json()["data"]["groups"]
        except (requests.RequestException, ValueError, KeyError):
            return None
        rules = [rule for group in groups for rule in group["rules"]]
        return rules if rules and all(rule["health"] != "unknown" for rule in rules) else None
    compose.wait("alert rules evaluated", lambda: evaluated() is not None, timeout=90)
    rules = evaluated()
    assert {rule["name"] for rule in rules} == shipped
    assert all(rule["health"] == "ok" for rule in rules), rules
    assert [rule["name"] for rule in rules if rule["state"] == "firing"] == []


# --- failover and drain -----------------------------------------------------------------------

@pytest.mark.skipif(not VOXBENCH, reason="VOXBENCH_BIN unset")
@pytest.mark.parametrize("retries,stream", [(0, False), (3, False), (0, True), (3, True)])
def test_a_killed_replica_fails_at_most_its_in_flight_requests(compose, retries, stream):
    """Whole-file requests on the killed replica had sent nothing yet, so nginx retries them on
    the other one; streams cut after their first audio byte cannot be retried by anyone (the
    client already played that audio), so those fail, at most one per client."""
    compose.wait_healthy()
    # An earlier test's failures may leave nginx skipping voxserve-a for a while, and then no
    # load reaches it to be cut (a CI run once waited 30 s in vain).
    compose.reset_nginx_peer_state()
    compose.back_in_rotation("voxserve-a")
    concurrency = 8
    process, out = voxbench(compose, seconds=12, concurrency=concurrency, retries=retries,
                            stream=stream, text=" ".join([TEXT] * 4))
    compose.wait("load on voxserve-a", lambda: in_flight(compose, "voxserve-a") > 0, timeout=30)
    subprocess.run(["docker", "kill", compose.container("voxserve-a")], check=True,
                   capture_output=True)
    point, log = finish(process, out)
    failed = point["requests"] - point["ok"]
    print(f"\nkill, {'chunked stream' if stream else 'whole file'}, client retries={retries}: "
          f"sent {point['requests']}, failed {failed}, "
          f"retried {point['retries']}, errors {point['errors']}")
    assert point["ok"] > 0, log
    if retries and not stream:
        assert failed == 0, log
    else:
        # Only what was in flight on the killed replica can fail: at most one per client.
        assert failed <= concurrency, log
    # docker kill counts as a deliberate stop for restart: unless-stopped; bring it back.
    compose.run("start", "voxserve-a")
    compose.wait_healthy()
    compose.back_in_rotation("voxserve-a")


@pytest.mark.skipif(not VOXBENCH, reason="VOXBENCH_BIN unset")
def test_a_restarted_replica_gets_traffic_only_once_ready(compose):
    compose.wait_healthy()
    compose.reset_nginx_peer_state()  # no failure of an earlier test counts against voxserve-a
    subprocess.run(["docker", "restart", "-t", "0", compose.container("voxserve-b")], check=True,
                   capture_output=True)
    # Load while voxserve-b starts: requests nginx sends there before it is ready are refused
    # (connection refused, or 503 while warming up) and retried on voxserve-a by nginx.
    process, out = voxbench(compose, seconds=8, concurrency=4, retries=0)
    compose.wait_healthy(("voxserve-b",))
    point, log = finish(process, out, compose)
    print(f"\nrestart under load: sent {point['requests']}, failed "
          f"{point['requests'] - point['ok']}")
    assert point["requests"] == point["ok"], log
    # And it serves again once ready (its counters restarted with it; Prometheus scrapes every
    # 5 s, so the load runs until a scrape has seen it answer).
    compose.back_in_rotation("voxserve-b")


@pytest.mark.skipif(not VOXBENCH, reason="VOXBENCH_BIN unset")
# REST needs no client retry: a draining replica refuses new requests with 503 (or its listener is
# closed) and nginx passes them to the other one. gRPC refuses new connections at once (nginx
# retries those) and answers calls on connections already open with UNAVAILABLE in the trailers
# of an HTTP 200, which nginx cannot see (grpc_next_upstream acts on connection errors only), so a
# call that reached the draining replica in its last moments is the client's to retry: once.
# No call may end CANCELLED (docs/grpc-drain.md: nginx.conf's gRPC upstream has no keepalive).
@pytest.mark.parametrize("protocol,retries", [("rest", 0), ("grpc", 1)])
def test_a_stopped_replica_drains_without_losing_a_request(compose, protocol, retries):
    compose.wait_healthy()
    process, out = voxbench(compose, seconds=10, concurrency=6, retries=retries, protocol=protocol)
    compose.wait("load on voxserve-b", lambda: in_flight(compose, "voxserve-b") > 0, timeout=30)
    stop = subprocess.run(["docker", "stop", "-t", "30", compose.container("voxserve-b")],
                          capture_output=True, text=True)
    assert stop.returncode == 0, stop.stderr
    point, log = finish(process, out)
    failed = point["requests"] - point["ok"]
    print(f"\ndocker stop under {protocol} load, client retries={retries}: sent "
          f"{point['requests']}, failed {failed}, retried {point['retries']}")
    assert failed == 0, log
    exit_code = subprocess.run(["docker", "inspect", "-f", "{{.State.ExitCode}}",
                                compose.container("voxserve-b")], capture_output=True,
                               text=True).stdout.strip()
    assert exit_code == "0", "a drained replica exits 0"
    compose.run("start", "voxserve-b")
    compose.wait_healthy()
    compose.back_in_rotation("voxserve-b")


# --- one box for Home Assistant (compose.single.yaml) ---------------------------------------


def piper_voices_stand_in(tmp_path):
    """A hub stand-in (tests/hub/hub_stand_in.py) holding a piper-voices-like repository with
    one real-interface Piper voice (tests/onnx_models) and another that must not be pulled."""
    sys.path.insert(0, str(ROOT / "tests" / "hub"))
    sys.path.insert(0, str(ROOT / "tests" / "onnx_models"))
    import make_test_models
    from hub_stand_in import HubStandIn, Repo
    built = tmp_path / "built"
    subprocess.run([sys.executable, make_test_models.__file__, "--out", str(built)], check=True,
                   stdout=subprocess.DEVNULL)
    voice = "en/en_US/test/medium/en_US-test-medium"
    other = "de/de_DE/test/medium/de_DE-test-medium"
    files = {f"{path}{ext}": (built / "models" / (pathlib.Path(path).name + ext)).read_bytes()
             for path in (voice, other) for ext in (".onnx", ".onnx.json")}
    hub = HubStandIn()
    hub.repos["rhasspy/piper-voices"] = Repo(files, lfs_paths=[voice + ".onnx", other + ".onnx"])
    return hub


def test_the_one_box_compose_file_serves_rest_and_wyoming_and_pulls_its_piper_voices(tmp_path):
    """compose.single.yaml as shipped, on the host's network: its models-pull service puts the
    Piper voice named in VOXSERVE_PIPER_VOICES into the models volume (from a hub stand-in), and
    voxserve, started after it, speaks it; REST and the Wyoming reference client both answered.
    A second `up` fetches nothing again. Loopback and free ports here (its variables), so the
    mDNS announcement stays off and nothing reaches a real network
    (tests/integration/test_wyoming_zeroconf.py checks discovery in a namespace of its own)."""
    from types import SimpleNamespace
    from wyoming_support import synthesize
    single = Compose(files=(COMPOSE_DIR / "compose.single.yaml",), project=f"{PROJECT}single")
    wyoming_port = free_port()
    with piper_voices_stand_in(tmp_path) as hub:
        single.env.update(VOXSERVE_HOST="127.0.0.1", VOXSERVE_HTTP_PORT=str(single.http_port),
                          VOXSERVE_WYOMING_PORT=str(wyoming_port), HF_ENDPOINT=hub.url,
                          VOXSERVE_PIPER_VOICES="en_US-test-medium")
        try:
            single.run("up", "-d", timeout=600)
            single.wait("the one box healthy", lambda: single.health("voxserve") == "healthy")
            voices = requests.get(single.url + "/v1/voices", timeout=10).json()["data"]
            piper = {v["id"] for v in voices if v["engine"] == "piper" and "alias_of" not in v}
            assert piper == {"en_US-test-medium"}, voices
            pulled = requests.post(single.url + "/v1/audio/speech", timeout=30, json={
                "model": "tts-1", "voice": "en_US-test-medium", "input": TEXT,
                "response_format": "wav", "stream": False})
            assert pulled.status_code == 200 and decode(pulled.content, "wav").duration > 0.1
            spoken = requests.post(single.url + "/v1/audio/speech", timeout=30,
                                   json={**SPEECH, "input": TEXT, "response_format": "wav"})
            assert spoken.status_code == 200 and decode(spoken.content, "wav").duration > 1
            speech = asyncio.run(asyncio.wait_for(
                synthesize(SimpleNamespace(wyoming_port=wyoming_port), TEXT), 60))
            assert "audio-stop" in speech.types and len(speech.pcm) > 16000
            logs = single.run("logs", "voxserve").stdout
            assert "not announcing Wyoming" in logs, logs[-2000:]

            downloads, asked = len(hub.requests("/cdn/")), len(hub.requests("/revision/"))
            assert downloads == 1, hub.log  # the voice's graph; its .json is a plain file
            single.run("up", "-d", timeout=600)  # runs models-pull again
            single.wait("models-pull asked the hub again",
                        lambda: len(hub.requests("/revision/")) > asked)
            single.wait("the pull done", lambda: "Exit 0" in single.run("ps", "models-pull").stdout)
            assert len(hub.requests("/cdn/")) == downloads, hub.log
        finally:
            single.down()
