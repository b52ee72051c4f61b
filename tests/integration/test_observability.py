"""Operations: /metrics checked by promtool and scraped by a real Prometheus, JSON log lines that
carry the request id, /health detail."""
import json
import os
import re
import subprocess
import time
import urllib.parse

import pytest
import requests

from conftest import VoxServer
from security_support import free_port, speech_body, wait_for

KEY = "sk-observer-0123456789abcdef"


@pytest.fixture(scope="module")
def server(voxserve_bin, tmp_path_factory):
    keys = tmp_path_factory.mktemp("obs") / "keys.yaml"
    keys.write_text('{"keys": [{"name": "observer", "key": "%s"}]}' % KEY)
    instance = VoxServer(voxserve_bin, ["--log-format", "json", "--api-keys-file", str(keys)]).start()
    yield instance
    assert instance.stop() == 0, instance.log()


def speak(server, **headers):
    return requests.post(server.url + "/v1/audio/speech", json=speech_body("Hello. World."),
                         headers={"x-api-key": KEY, **headers}, timeout=30)


def test_metrics_pass_promtool(server):
    speak(server)
    requests.get(server.url + "/v1/voices", timeout=10)  # a 401, so auth metrics have children
    text = requests.get(server.url + "/metrics", timeout=10).text
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr


def test_metric_names_are_prefixed_and_labels_bounded(server):
    speak(server)
    text = requests.get(server.url + "/metrics", timeout=10).text
    names = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    assert all(name.startswith(("voxserve_", "process_")) for name in names), names
    for expected in ("voxserve_http_requests_total", "voxserve_time_to_first_audio_seconds",
                     "voxserve_synthesis_duration_seconds", "voxserve_real_time_factor",
                     "voxserve_queue_depth", "voxserve_batch_size", "voxserve_audio_seconds_total",
                     "voxserve_engine_errors_total", "voxserve_requests_in_flight",
                     "voxserve_build_info", "process_resident_memory_bytes", "process_open_fds",
                     "process_cpu_seconds_total", "process_start_time_seconds"):
        assert expected in names, expected
    labels = set(re.findall(r"[{,]([a-z_]+)=\"", text))
    assert labels <= {"route", "code", "model", "reason", "le", "key", "limit", "version", "what",
                      "result", "gpu", "worker"}, labels
    assert re.search(r'^voxserve_build_info\{version="[0-9.]+"\} 1$', text, re.M)
    rss = float(re.search(r"^process_resident_memory_bytes (\S+)$", text, re.M).group(1))
    assert rss > 1e6


def test_no_client_string_becomes_a_label_value(server):
    """Label values come from the server's own vocabulary (routes, configured models, codes),
    never from what a client sends: made-up model names, ids in paths, methods. Before issue 39
    a wrong method on a path with an id made its own route label (a scrape that grows without
    bound), and so did a made-up model on the inline-prompt path (now "unknown")."""
    tokens = [f"zz{i}madeup" for i in range(20)]
    headers = {"x-api-key": KEY}
    for token in tokens:
        body = speech_body("Hello.")
        body["model"] = token
        assert requests.post(server.url + "/v1/audio/speech", json=body, headers=headers,
                             timeout=30).status_code == 404
        assert requests.put(f"{server.url}/v1/audio/voices/{token}", headers=headers,
                            timeout=10).status_code == 405
        assert requests.get(f"{server.url}/{token}", headers=headers, timeout=10).status_code \
            == 404
        requests.request(token.upper(), server.url + "/v1/audio/speech", headers=headers,
                         timeout=10)
    text = requests.get(server.url + "/metrics", timeout=10).text
    leaked = [token for token in tokens if token in text.lower()]
    assert leaked == [], [line for line in text.splitlines() if leaked[0] in line.lower()]
    assert re.search(r'^voxserve_http_requests_total\{route="/v1/audio/voices/\*",code="405"\} 20',
                     text, re.M), text


def test_a_real_prometheus_scrapes_the_server(server, tmp_path):
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: voxserve\n    static_configs: [{{targets: ['127.0.0.1:{server.port}']}}]\n")
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    api = f"http://127.0.0.1:{port}/api/v1/query?query="

    def query(expression):
        try:
            reply = requests.get(api + urllib.parse.quote(expression), timeout=2).json()
        except (requests.RequestException, ValueError):
            return []
        return reply.get("data", {}).get("result", [])

    try:
        up = wait_for(lambda: query('up{job="voxserve"}'), timeout=40, interval=0.25,
                      message="Prometheus to scrape voxserve")
        assert up[0]["value"][1] == "1", up
        targets = requests.get(f"http://127.0.0.1:{port}/api/v1/targets", timeout=5).json()
        active = targets["data"]["activeTargets"][0]
        assert active["health"] == "up" and not active["lastError"], active
        build = query("voxserve_build_info")
        assert build and build[0]["metric"]["version"], build
    finally:
        prometheus.terminate()
        try:
            prometheus.wait(10)
        except subprocess.TimeoutExpired:
            prometheus.kill()


def json_lines(server):
    lines = []
    for line in server.log_lines:
        lines.append(json.loads(line))  # every line, not just request lines, must be JSON
    return lines


def test_log_lines_are_json_and_carry_the_request_id(server):
    given = speak(server, **{"X-Request-Id": "trace-obs-42"})
    generated = speak(server)
    assert given.headers["X-Request-Id"] == "trace-obs-42"
    generated_id = generated.headers["X-Request-Id"]

    def request_line(request_id):
        return next((line for line in json_lines(server)
                     if line.get("msg") == "request" and line.get("request_id") == request_id),
                    None)

    line = wait_for(lambda: request_line("trace-obs-42"), message="the request's log line")
    assert line["route"] == "/v1/audio/speech" and line["status"] == 200
    assert line["key"] == "observer" and line["model"] == "espeak" and line["voice"]
    assert line["chars"] == len("Hello. World.") and line["audio_seconds"] > 0.3
    for field in ("queue_wait_seconds", "time_to_first_audio_seconds", "total_seconds"):
        assert line[field] >= 0, field
    assert {"ts", "level", "transport", "method", "remote"} <= set(line)
    assert wait_for(lambda: request_line(generated_id), message="the generated id's line")
    messages = [line["msg"] for line in json_lines(server)]
    assert "config" in messages and "security" in messages


def test_health_detail(server):
    health = requests.get(server.url + "/health", timeout=10).json()
    assert health["status"] == "ready" and health["version"] and health["uptime_seconds"] > 0
    assert health["in_flight"] == 0
    model = health["models"][0]
    assert model["state"] == "ready" and model["queue_depth"] == 0
    if not os.path.exists("/dev/nvidiactl"):
        assert "gpus" not in health  # no driver: the field is omitted, not an error
    else:
        assert all(gpu["memory_total_bytes"] > 0 for gpu in health.get("gpus", []))


def test_every_rejected_request_is_counted_once_with_its_resolved_model(server):
    from probes import metric

    def rejected(model, reason):
        return metric(server, "voxserve_requests_rejected_total",
                      f'model="{model}",reason="{reason}"')

    url = server.url + "/v1/audio/speech"
    before_invalid = rejected("", "invalid")
    bad_json = requests.post(url, data="{not json", timeout=10,
                             headers={"Content-Type": "application/json", "x-api-key": KEY})
    assert bad_json.status_code == 400, bad_json.text
    missing = requests.post(url, json={"model": "tts-1", "voice": "alloy"}, timeout=10,
                            headers={"x-api-key": KEY})
    assert missing.status_code == 400, missing.text
    assert rejected("", "invalid") == before_invalid + 2

    before_not_found = rejected("espeak", "not_found")
    before_unnamed = rejected("", "not_found")
    unknown_voice = requests.post(url, json=speech_body(voice="no-such-voice"), timeout=10,
                                  headers={"x-api-key": KEY})
    assert unknown_voice.status_code == 404, unknown_voice.text
    assert rejected("espeak", "not_found") == before_not_found + 1
    assert rejected("", "not_found") == before_unnamed  # the model was resolved: it is named
