"""Startup readiness, failed models and the SIGTERM drain, against the real binary."""
import concurrent.futures
import signal
import time

import requests

from audio_check import decode

LONG_TEXT = " ".join(f"This is sentence number {i} of a rather long warm-up text." for i in range(60))


def write_config(tmp_path, text):
    path = tmp_path / "voxserve.yaml"
    path.write_text(text)
    return str(path)


def test_live_at_once_ready_only_after_warmup(make_server, tmp_path):
    warmup = ", ".join(f'"{LONG_TEXT}"' for _ in range(8))
    config = write_config(tmp_path, f"models:\n  - id: espeak\n    warmup: [{warmup}]\n")
    server = make_server("--config", config, wait_ready=False)
    assert requests.get(server.url + "/health/live", timeout=5).status_code == 200
    ready = requests.get(server.url + "/health/ready", timeout=5)
    assert ready.status_code == 503, "ready before warm-up finished"
    health = requests.get(server.url + "/health", timeout=5).json()
    assert health["models"][0]["state"] in ("loading", "warming_up")
    early = requests.post(server.url + "/v1/audio/speech", timeout=5,
                          json={"model": "tts-1", "input": "Too early.", "voice": "alloy"})
    assert early.status_code == 503 and early.json()["error"]["message"]
    server.wait_ready()
    assert requests.get(server.url + "/health", timeout=5).json()["models"][0]["state"] == "ready"


def test_a_model_that_fails_to_load_keeps_the_server_unready(make_server, tmp_path):
    config = write_config(tmp_path, "models:\n  - id: espeak\n    default_voice: klingon\n")
    server = make_server("--config", config, wait_ready=False)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        model = requests.get(server.url + "/health", timeout=5).json()["models"][0]
        if model["state"] == "failed":
            break
        time.sleep(0.05)
    assert model["state"] == "failed" and "klingon" in model["error"]
    assert requests.get(server.url + "/health/ready", timeout=5).status_code == 503
    assert requests.get(server.url + "/health/live", timeout=5).status_code == 200


def test_invalid_configuration_exits_with_a_message(voxserve_bin, tmp_path):
    import subprocess
    result = subprocess.run([voxserve_bin, "--port", "99999"], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 2 and "--port" in result.stderr


def test_sigterm_finishes_accepted_requests_then_exits_zero(make_server):
    server = make_server()
    body = {"model": "tts-1", "input": LONG_TEXT, "voice": "alloy", "response_format": "wav"}

    def request(_):
        response = requests.post(server.url + "/v1/audio/speech", json=body, timeout=120)
        return response.status_code, response.content

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(request, i) for i in range(8)]
        # Wait until the requests are accepted (in flight), then ask the server to stop.
        deadline = time.monotonic() + 30
        in_flight = 0
        while time.monotonic() < deadline and in_flight < 8:
            in_flight = requests.get(server.url + "/health", timeout=5).json()["in_flight"]
            time.sleep(0.005)
        assert in_flight == 8, "the requests finished before the test could signal"
        server.process.send_signal(signal.SIGTERM)
        results = [future.result() for future in futures]
    for status, content in results:
        assert status == 200
        assert decode(content, "wav").duration > 60, "audio was cut short"
    assert server.process.wait(60) == 0
    assert any("draining" in line for line in server.log_lines)
