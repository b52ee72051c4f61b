"""voxbench end to end on a short run: its files, its counts against the server's own metrics,
and that it drives the HTTP layer far harder than synthesis can go."""
import csv
import json
import os
import re
import socket
import subprocess

import requests


def speech_count(server):
    text = requests.get(server.url + "/metrics", timeout=5).text
    match = re.search(r'voxserve_http_requests_total\{route="/v1/audio/speech",code="200"\} (\d+)', text)
    return int(match.group(1)) if match else 0


def run(binary, *args, returncode=0, env=None):
    result = subprocess.run([binary, *args], capture_output=True, timeout=120, env=env)
    assert result.returncode == returncode, result.stderr.decode()
    return result


def test_closed_loop_sweep_writes_json_csv_and_plot(voxbench_bin, server, tmp_path):
    before = speech_count(server)
    out = tmp_path / "sweep"
    run(voxbench_bin, "--url", server.url, "-c", "1,2", "-d", "1.5", "--warmup", "0.3",
        "--text", "Hello there. This is a test.", "--json", f"{out}.json", "--csv", f"{out}.csv",
        "--plot", f"{out}.png")
    report = json.loads((tmp_path / "sweep.json").read_text())
    points = report["points"]
    assert [p["concurrency"] for p in points] == [1, 2]
    for point in points:
        assert point["ok"] > 5 and point["errors"] == {}
        assert point["latency_ms"]["p50"] <= point["latency_ms"]["p99"] <= point["latency_ms"]["max"]
        assert 0 < point["ttfa_ms"]["p50"] <= point["latency_ms"]["max"]
        # pcm: audio length known, so the RTF is there (espeak is far faster than real time).
        assert point["rtf"]["count"] == point["ok"]
        assert 0 < point["rtf"]["p50"] < 1
    # Every request voxbench counted reached the server (plus warm-up and in-flight extras).
    assert speech_count(server) - before >= sum(p["ok"] for p in points)
    rows = list(csv.DictReader((tmp_path / "sweep.csv").open()))
    assert len(rows) == 2 and float(rows[0]["qps"]) > 0
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_open_loop_and_sse(voxbench_bin, server, tmp_path):
    run(voxbench_bin, "--url", server.url, "--rate", "20", "-d", "1.5", "--warmup", "0.3",
        "--protocol", "sse", "--text", "Hello there.", "--json", str(tmp_path / "open.json"))
    point = json.loads((tmp_path / "open.json").read_text())["points"][0]
    assert point["mode"] == "open" and point["rate"] == 20
    # Poisson arrivals (seeded): about 30 in the 1.5 s window, less the last few in flight.
    assert 15 <= point["ok"] <= 50, point
    assert point["rtf"]["count"] > 0  # SSE: from the server's usage (pcm: from the bytes)


def test_errors_are_counted_by_kind_and_a_run_without_one_success_exits_3(voxbench_bin, server,
                                                                          tmp_path):
    requests.post(server.url + "/testing/faults", json={"fail_next": 1000000, "status": 503},
                  timeout=5).raise_for_status()
    try:
        result = run(voxbench_bin, "--url", server.url, "-c", "2", "-d", "0.5", "--warmup", "0",
                     "--text", "Hi.", "--json", str(tmp_path / "errors.json"), returncode=3)
    finally:
        requests.delete(server.url + "/testing/faults", timeout=5)
    assert b"every request failed" in result.stderr
    point = json.loads((tmp_path / "errors.json").read_text())["points"][0]
    assert point["ok"] == 0 and point["errors"]["http_503"] > 0


def test_a_server_that_is_not_there_exits_3(voxbench_bin):
    with socket.socket() as probe:  # a port nobody listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        run(voxbench_bin, "--url", f"http://127.0.0.1:{port}", "-c", "1", "-d", "0.3",
            "--warmup", "0", "--text", "Hi.", returncode=3)


def test_voxserve_url_names_the_server_as_for_voxctl(voxbench_bin, server, tmp_path):
    before = speech_count(server)
    run(voxbench_bin, "-c", "1", "-d", "0.5", "--warmup", "0", "--text", "Hi.",
        "--json", str(tmp_path / "env.json"), env=dict(os.environ, VOXSERVE_URL=server.url))
    point = json.loads((tmp_path / "env.json").read_text())["points"][0]
    assert point["ok"] > 0 and point["errors"] == {}
    assert speech_count(server) - before >= point["ok"]


def test_drives_the_http_layer_much_harder_than_synthesis(voxbench_bin, server, tmp_path):
    run(voxbench_bin, "--url", server.url, "--call", "health", "-c", "4", "-d", "1", "--warmup",
        "0.2", "--text", "x", "--json", str(tmp_path / "live.json"))
    run(voxbench_bin, "--url", server.url, "-c", "4", "-d", "1", "--warmup", "0.2", "--text",
        "The quick brown fox jumps over the lazy dog.", "--json", str(tmp_path / "speech.json"))
    live = json.loads((tmp_path / "live.json").read_text())["points"][0]["qps"]
    speech = json.loads((tmp_path / "speech.json").read_text())["points"][0]["qps"]
    assert live > 3 * speech, (live, speech)


def test_grpc_streams(voxbench_bin, server, tmp_path):
    grpc_url = "grpc://" + server.grpc_target
    run(voxbench_bin, "--url", grpc_url, "--protocol", "grpc", "--stream", "-c", "2", "-d", "1",
        "--warmup", "0.2", "--text", "Hello there.", "--json", str(tmp_path / "grpc.json"))
    point = json.loads((tmp_path / "grpc.json").read_text())["points"][0]
    assert point["ok"] > 5 and point["errors"] == {}
    assert 0 < point["rtf"]["p50"] < 1


def test_shipped_corpus_mixes_languages_and_lengths(voxbench_bin, server, tmp_path):
    import pathlib
    corpus = pathlib.Path(__file__).resolve().parents[2] / "bench" / "corpus" / "mixed.txt"
    texts = [t for t in corpus.read_text(encoding="utf-8").splitlines() if t and not t.startswith("#")]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in "".join(texts))  # Chinese
    assert min(map(len, texts)) < 10 and max(map(len, texts)) > 200
    run(voxbench_bin, "--url", server.url, "-c", "2", "-d", "1", "--warmup", "0", "--corpus",
        str(corpus), "-v", "cmn", "--json", str(tmp_path / "corpus.json"))
    point = json.loads((tmp_path / "corpus.json").read_text())["points"][0]
    assert point["ok"] >= 2 and point["errors"] == {}


def test_the_default_corpus_works_from_any_directory(voxbench_bin, server, tmp_path):
    """No --corpus and a working directory without bench/: the built-in corpus is used."""
    # 4 s: the corpus has long texts, and only requests finished inside the window count.
    result = subprocess.run([voxbench_bin, "--url", server.url, "-c", "2", "-d", "4",
                             "--warmup", "0", "--json", str(tmp_path / "default.json")],
                            capture_output=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()  # was 2: no bench/corpus/mixed.txt here
    point = json.loads((tmp_path / "default.json").read_text())["points"][0]
    assert point["ok"] >= 1 and point["errors"] == {}, point


def test_websocket_streams_with_first_audio_and_rtf(voxbench_bin, server, tmp_path):
    ws_url = "ws" + server.url[len("http"):]
    run(voxbench_bin, "--url", ws_url, "--protocol", "websocket", "-c", "2", "-d", "1.5",
        "--warmup", "0.3", "--text", "Hello there. This is a test of the speech stream.",
        "--json", str(tmp_path / "ws.json"))
    report = json.loads((tmp_path / "ws.json").read_text())
    assert report["meta"]["protocol"] == "websocket"
    point = report["points"][0]
    assert point["ok"] > 5 and point["errors"] == {}, point
    # First audio (the first sentence) comes before the whole answer (two sentences).
    assert 0 < point["ttfa_ms"]["p50"] < point["latency_ms"]["p50"]
    assert point["rtf"]["count"] == point["ok"]
    assert 0 < point["rtf"]["p50"] < 1


def test_protocol_must_fit_the_url(voxbench_bin, server):
    result = subprocess.run([voxbench_bin, "--url", server.url, "--protocol", "ws", "-c", "1",
                             "-d", "0.1", "--text", "x"], capture_output=True, timeout=30)
    assert result.returncode == 2
    assert b"ws://" in result.stderr
