#!/usr/bin/python3
"""Figures of the cloned-voice store backends (issue 24), dir against postgres, through the real
binary (test cloner, espeak): registration latency, the cost of a synthesis request naming a
cached cloned voice, how fast a registration and a deletion reach a second replica, and how long
a full resync of the registry takes at 1000 voices. PostgreSQL is started as the tests do
(tests/integration/postgres_support.py).

    bench/voice_store_bench.py --build build [--registrations 50] [--requests 300]
"""
import argparse
import os
import re
import statistics
import sys
import tempfile
import time

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from conftest import VoxServer  # noqa: E402
from postgres_support import Postgres  # noqa: E402
from test_voice_cloning import SAMPLE  # noqa: E402

VOICES = "/v1/audio/voices"


def ms(values):
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"p50 {1000 * statistics.median(values):.2f} ms, p95 {1000 * p95:.2f} ms"


def register(server, name):
    started = time.perf_counter()
    answer = requests.post(server.url + VOICES, data={"name": name, "transcript": "hello"},
                           files={"audio_sample": ("s.wav", SAMPLE, "audio/wav")}, timeout=30)
    assert answer.status_code == 200, answer.text
    return time.perf_counter() - started, answer.json()


def speech_latency(server, voice, count, expect):
    session = requests.Session()
    times = []
    for _ in range(count):
        started = time.perf_counter()
        answer = session.post(server.url + "/v1/audio/speech", timeout=30,
                              json={"model": "espeak", "input": "Hi.", "voice": voice})
        times.append(time.perf_counter() - started)
        assert answer.status_code == expect, answer.text
    return times


def histogram(server, name, labels):
    text = requests.get(server.url + "/metrics", timeout=10).text
    def value(suffix):
        match = re.search(re.escape(f"{name}_{suffix}{{{labels}}}") + r" (\S+)", text)
        return float(match.group(1)) if match else 0.0
    return value("sum"), value("count")


def until(predicate):
    started = time.perf_counter()
    while not predicate():
        time.sleep(0.001)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--registrations", type=int, default=50)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    binary = os.path.join(args.build, "bin", "voxserve")
    pg = Postgres().start()
    servers = []
    try:
        common = ["--voices-test-cloner", "true"]
        tmp = tempfile.mkdtemp(prefix="voice-bench-")
        dir_server = VoxServer(binary, ["--voices-dir", tmp, *common]).start()
        pg_args = ["--voices-backend", "postgres", "--voices-postgres-dsn", pg.dsn, *common]
        a = VoxServer(binary, pg_args).start()
        b = VoxServer(binary, pg_args).start()
        servers = [dir_server, a, b]
        until(lambda: all(requests.get(s.url + "/health", timeout=5).json().get("voices", {})
                          .get("status") == "ok" for s in (a, b)))

        print(f"registration latency ({args.registrations} sequential, HTTP, test cloner):")
        for label, server in (("dir", dir_server), ("postgres", a)):
            times = [register(server, f"{label} {i}")[0] for i in range(args.registrations)]
            print(f"  {label:9s} {ms(times)}")

        print(f"synthesis request naming a cached cloned voice ({args.requests} sequential; "
              "espeak answers 501 after resolving it and loading its profile from the cache):")
        for label, server in (("dir", dir_server), ("postgres", a)):
            speech_latency(server, f"{label} 0", 20, 501)  # warm: the profile is now cached
            print(f"  {label:9s} {ms(speech_latency(server, f'{label} 0', args.requests, 501))}")
        print(f"  no cloned voice (espeak 'alloy', full synthesis, for scale): "
              f"{ms(speech_latency(a, 'alloy', args.requests // 3, 200))}")

        seen, gone = [], []
        for i in range(20):
            _, voice = register(a, f"propagate {i}")
            url = b.url + VOICES + "/" + voice["id"]
            seen.append(until(lambda: requests.get(url, timeout=5).status_code == 200))
            requests.delete(a.url + VOICES + "/" + voice["id"], timeout=10)
            gone.append(until(lambda: requests.get(url, timeout=5).status_code == 404))
        print("replica B sees A's change (20 each, from A's answer to B's):")
        print(f"  registration {ms(seen)}")
        print(f"  deletion     {ms(gone)}")

        total = 1000
        existing = len(requests.get(a.url + VOICES, timeout=10).json()["data"])
        pg.sql("INSERT INTO voxserve_voices SELECT 'voice_' || lpad(to_hex(g), 24, '0'), 'espeak', "
               "'bulk ' || g, 'bulk ' || g, 'test', 'hello', 0, 1.0, 4096, "
               f"decode(repeat('00', 4096), 'hex') FROM generate_series(1, {total - existing}) g")
        pg.sql("NOTIFY voxserve_voices")
        until(lambda: len(requests.get(b.url + VOICES, timeout=10).json()["data"]) == total)
        labels = 'backend="postgres",operation="resync"'
        before = histogram(b, "voxserve_voice_store_operation_seconds", labels)
        for _ in range(20):
            pg.sql("NOTIFY voxserve_voices")
        until(lambda: histogram(b, "voxserve_voice_store_operation_seconds", labels)[1] >=
              before[1] + 1)
        time.sleep(0.5)  # lets the notifications drain (they coalesce into fewer resyncs)
        after = histogram(b, "voxserve_voice_store_operation_seconds", labels)
        runs = after[1] - before[1]
        print(f"full resync of {total} voices (metadata): "
              f"{1000 * (after[0] - before[0]) / runs:.2f} ms mean over {runs:.0f} resyncs")
    finally:
        for server in servers:
            server.stop()
        pg.remove()


if __name__ == "__main__":
    main()
