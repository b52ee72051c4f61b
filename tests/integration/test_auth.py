"""API keys over REST: who may call, which models, how often and how many at once; reload on
SIGHUP. Against the real binary with a keys file."""
import hashlib
import signal

import pytest
import requests

from conftest import VoxServer
from security_support import speech_body, wait_for, write_keys

ALICE = "sk-alice-0123456789abcdef"
BOB = "sk-bob-0123456789abcdef"
CAROL = "sk-carol-0123456789abcdef"
DAVE = "sk-dave-0123456789abcdef"
LONG_TEXT = " ".join(f"Sentence number {i} keeps this request busy for a while." for i in range(60))

KEYS = [
    {"name": "alice", "key": ALICE},
    # bob's secret is given as its SHA-256 only, and he may use another model, not espeak.
    {"name": "bob", "sha256": hashlib.sha256(BOB.encode()).hexdigest(), "models": ["kokoro"]},
    {"name": "carol", "key": CAROL, "rate_limit": {"requests_per_second": 0.2, "burst": 2}},
    {"name": "dave", "key": DAVE, "max_concurrent": 1},
]


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory):
    return write_keys(tmp_path_factory.mktemp("auth") / "keys.yaml", KEYS)


@pytest.fixture(scope="module")
def server(voxserve_bin, keys_file):
    instance = VoxServer(voxserve_bin, ["--api-keys-file", keys_file]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def speak(server, key=None, header="authorization", **fields):
    headers = {}
    if key is not None:
        headers[header] = f"Bearer {key}" if header == "authorization" else key
    return requests.post(server.url + "/v1/audio/speech", json=speech_body(**fields),
                         headers=headers, timeout=30)


def error_code(response):
    return response.json()["error"]["code"]


def test_no_key_is_401_with_a_bearer_challenge(server):
    response = speak(server)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert error_code(response) == "missing_api_key"
    assert response.json()["error"]["type"] == "authentication_error"


@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
def test_wrong_key_is_401(server, header):
    response = speak(server, "sk-alice-0123456789abcdeX", header)
    assert response.status_code == 401 and error_code(response) == "invalid_api_key"


def test_other_authorization_schemes_are_401(server):
    response = requests.post(server.url + "/v1/audio/speech", json=speech_body(), timeout=30,
                             headers={"Authorization": "Basic YWxpY2U6c2VjcmV0"})
    assert response.status_code == 401


@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
def test_right_key_is_served(server, header):
    response = speak(server, ALICE, header)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "audio/wav" and len(response.content) > 1000


def test_key_given_as_sha256_authenticates_but_forbidden_model_is_403(server):
    response = speak(server, BOB)
    assert response.status_code == 403, response.text
    assert error_code(response) == "model_not_allowed"
    assert response.json()["error"]["param"] == "model"
    assert response.json()["error"]["type"] == "permission_error"


def test_api_routes_need_a_key_health_and_metrics_stay_open(server):
    assert requests.get(server.url + "/v1/voices", timeout=10).status_code == 401
    assert requests.get(server.url + "/v1/nothing-here", timeout=10).status_code == 401
    headers = {"x-api-key": ALICE}
    assert requests.get(server.url + "/v1/voices", headers=headers, timeout=10).status_code == 200
    for path in ("/health/live", "/health/ready", "/health", "/metrics"):
        assert requests.get(server.url + path, timeout=10).status_code == 200, path


def test_rate_limit_gives_429_with_retry_after(server):
    statuses = [speak(server, CAROL) for _ in range(3)]
    assert [r.status_code for r in statuses[:2]] == [200, 200]
    limited = statuses[2]
    assert limited.status_code == 429 and error_code(limited) == "rate_limit_exceeded"
    assert 1 <= int(limited.headers["Retry-After"]) <= 5
    # Other keys are not affected by carol's bucket.
    assert speak(server, ALICE).status_code == 200


def test_concurrency_cap_gives_429_until_the_running_request_ends(server):
    held = requests.post(server.url + "/v1/audio/speech", stream=True, timeout=30,
                         headers={"x-api-key": DAVE},
                         json=speech_body(LONG_TEXT, response_format="pcm", stream_format="audio",
                                          speed=0.25))  # ~35 MB of audio: more than sockets hold
    assert held.status_code == 200
    chunks = held.iter_content(1024)  # kept: dropping the generator closes the connection
    next(chunks)  # running, and paused once the unread buffer fills
    second = speak(server, DAVE)
    assert second.status_code == 429 and error_code(second) == "concurrency_limit_exceeded"
    assert second.headers["Retry-After"] == "1"
    held.close()  # the client leaves: the request is cancelled and its slot freed
    wait_for(lambda: speak(server, DAVE).status_code == 200, timeout=10,
             message="dave's slot to be released")


def test_metrics_and_logs_name_keys_never_secrets(server):
    speak(server, ALICE)
    speak(server, "sk-wrong")
    text = requests.get(server.url + "/metrics", timeout=10).text
    assert 'voxserve_api_key_requests_total{key="alice"}' in text
    assert 'voxserve_auth_failures_total{reason="invalid_key"}' in text
    assert 'voxserve_api_key_limited_total{key="carol",limit="rate"}' in text
    assert any('"key":"alice"' in line or "key=alice" in line for line in server.log_lines)
    everything = text + server.log()
    for secret in (ALICE, BOB, CAROL, DAVE, "sk-wrong", hashlib.sha256(BOB.encode()).hexdigest()):
        assert secret not in everything


def test_sighup_reloads_keys_and_a_bad_file_keeps_the_old_ones(voxserve_bin, tmp_path):
    path = write_keys(tmp_path / "keys.yaml", [{"name": "alice", "key": ALICE}])
    instance = VoxServer(voxserve_bin, ["--api-keys-file", path, "--protect-health", "true",
                                        "--protect-metrics", "true"]).start(wait_ready=False)
    try:
        wait_for(lambda: requests.get(instance.url + "/health/ready", timeout=2,
                                      headers={"x-api-key": ALICE}).status_code == 200,
                 timeout=60, message="ready")
        assert requests.get(instance.url + "/metrics", timeout=10).status_code == 401
        assert requests.get(instance.url + "/health/live", timeout=10).status_code == 401
        assert speak(instance, "sk-frank-0123456789").status_code == 401

        write_keys(path, [{"name": "frank", "key": "sk-frank-0123456789"}])
        instance.process.send_signal(signal.SIGHUP)
        wait_for(lambda: speak(instance, "sk-frank-0123456789").status_code == 200,
                 message="frank's key to work after SIGHUP")
        assert speak(instance, ALICE).status_code == 401

        with open(path, "w") as out:
            out.write("keys: [ {name: broken")  # not YAML
        instance.process.send_signal(signal.SIGHUP)
        wait_for(lambda: any("reload failed" in line for line in instance.log_lines),
                 message="the failed reload to be logged")
        assert speak(instance, "sk-frank-0123456789").status_code == 200
        metrics = requests.get(instance.url + "/metrics", timeout=10,
                               headers={"x-api-key": "sk-frank-0123456789"}).text
        assert 'voxserve_config_reloads_total{what="api_keys",result="ok"} 1' in metrics
        assert 'voxserve_config_reloads_total{what="api_keys",result="error"} 1' in metrics
        assert instance.stop() == 0
    finally:
        instance.kill()


def test_auth_off_is_logged_loudly(server, voxserve_bin):
    # The shared module server has keys: no warning there.
    assert not any("AUTHENTICATION IS OFF" in line for line in server.log_lines)
    plain = VoxServer(voxserve_bin).start(wait_ready=False)
    try:
        wait_for(lambda: any("AUTHENTICATION IS OFF" in line for line in plain.log_lines),
                 message="the warning")
    finally:
        plain.kill()
