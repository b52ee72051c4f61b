#!/usr/bin/python3
"""The response cache on an IVR-style workload (issue 26): 20 prompts drawn with a Zipf
distribution (the greeting far more often than the rare ones), 8 clients in a closed loop, against
BUILD/bin/voxserve (espeak-ng, its default worker processes) with the cache off and then on, the
same seeded sequence of prompts for both. Prints a markdown table: requests/s, P50 and P99
latency, and the cache's hit ratio from /metrics, with the machine and the date.

Usage: bench/cache_bench.py [--build build] [--seconds 20] [--concurrency 8] [--zipf 1.1]
Each server runs alone (the other is stopped): they would share the cores otherwise.
"""
import argparse
import asyncio
import datetime
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from load import percentile, read_response  # noqa: E402

PROMPTS = [
    "Thank you for calling. Your call is important to us.",
    "Please hold while we connect you to the next available agent.",
    "For billing, press one. For technical support, press two.",
    "Please enter your account number, followed by the pound key.",
    "I'm sorry, I didn't understand that.",
    "Your estimated wait time is less than five minutes.",
    "To repeat these options, press nine.",
    "Please say or enter your date of birth.",
    "Our offices are open Monday to Friday, from nine to five.",
    "Goodbye.",
    "You can also reach us online at any time.",
    "Please stay on the line for a short survey after this call.",
    "To speak to an operator, press zero.",
    "Your payment has been received. Thank you.",
    "That account number is not valid. Please try again.",
    "Transferring your call now.",
    "All of our agents are busy helping other customers.",
    "This call may be recorded for quality and training purposes.",
    "Please have your invoice number ready.",
    "We are experiencing a high volume of calls.",
]


def zipf_weights(n, s):
    return [1 / (rank ** s) for rank in range(1, n + 1)]


def start_server(binary, cache):
    log = tempfile.TemporaryFile(mode="w+")  # a pipe nobody reads would block the server
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", "0", "--grpc-enabled",
                                "false", "--cache-enabled", "true" if cache else "false",
                                "--log-level", "warn"],
                               stdout=subprocess.DEVNULL, stderr=log, text=True)
    # No request log lines at warn, nor the "listening" line: the port comes from /proc.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        port = listening_port(process.pid)
        if port:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=2):
                    return process, port
            except OSError:
                pass
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError("voxserve exited:\n" + log.read())
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("voxserve did not become ready")


def listening_port(pid):
    """The TCP port `pid` listens on (its only listener with gRPC off), or None."""
    try:
        inodes = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] for fd in os.listdir(f"/proc/{pid}/fd")
                  if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")}
    except OSError:
        return None
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                return int(fields[1].split(":")[1], 16)
    return None


def request_bytes(text):
    body = json.dumps({"model": "tts-1", "input": text, "voice": "alloy",
                       "response_format": "pcm", "sample_rate": 8000,
                       "stream": False}).encode()
    return (b"POST /v1/audio/speech HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


async def run_load(port, seconds, concurrency, draws):
    requests = [request_bytes(text) for text in PROMPTS]
    latencies, statuses = [], {}
    next_draw = 0
    deadline = time.monotonic() + seconds

    async def client():
        nonlocal next_draw
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.monotonic() < deadline:
                index = draws[next_draw % len(draws)]
                next_draw += 1
                started = time.monotonic()
                writer.write(requests[index])
                await writer.drain()
                status, _, _, _ = await read_response(reader)
                latencies.append(time.monotonic() - started)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return latencies, statuses, time.monotonic() - started


def cache_counts(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    counts = {}
    for name in ("hits", "misses"):
        match = re.search(rf'^voxserve_response_cache_{name}_total{{model="espeak"}} (\S+)$', text,
                          re.M)
        counts[name] = float(match.group(1)) if match else 0.0
    return counts


def cpu_model():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent s")
    args = parser.parse_args()
    binary = os.path.join(args.build, "bin", "voxserve")

    rng = random.Random(26)
    draws = rng.choices(range(len(PROMPTS)), weights=zipf_weights(len(PROMPTS), args.zipf),
                        k=100_000)
    rows = []
    for cache in (False, True):
        process, port = start_server(binary, cache)
        try:
            latencies, statuses, elapsed = asyncio.run(
                run_load(port, args.seconds, args.concurrency, draws))
            counts = cache_counts(port)
        finally:
            process.terminate()
            process.wait(timeout=60)
        looked_up = counts["hits"] + counts["misses"]
        rows.append({"cache": "on" if cache else "off", "requests": len(latencies),
                     "rps": len(latencies) / elapsed,
                     "p50_ms": percentile(latencies, 50) * 1000,
                     "p99_ms": percentile(latencies, 99) * 1000,
                     "hit_ratio": counts["hits"] / looked_up if looked_up else None,
                     "statuses": statuses})

    print(f"{datetime.date.today()} · {os.cpu_count()} cores ({cpu_model()}) · "
          f"{platform.system()} {platform.release()} · {args.seconds:g} s per run, "
          f"c={args.concurrency}, 20 prompts, Zipf s={args.zipf}, pcm 8 kHz")
    print()
    print("| cache | requests | requests/s | P50 ms | P99 ms | hit ratio | statuses |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        ratio = "" if row["hit_ratio"] is None else f"{row['hit_ratio']:.3f}"
        print(f"| {row['cache']} | {row['requests']} | {row['rps']:.1f} | {row['p50_ms']:.2f} | "
              f"{row['p99_ms']:.2f} | {ratio} | {row['statuses']} |")
    print()
    off, on = rows
    print(f"cache on / off: {on['rps'] / off['rps']:.1f}x requests/s, "
          f"P99 {on['p99_ms'] / off['p99_ms']:.2f}x")


if __name__ == "__main__":
    main()
