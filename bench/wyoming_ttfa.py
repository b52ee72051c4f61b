#!/usr/bin/python3
"""Time to first audio over Wyoming against REST streaming, for the same text and voice (issue 25).

Starts BUILD/bin/voxserve with the Wyoming listener (espeak-ng, one instance: nothing else on the
machine competes with the engine) and measures, one request at a time and interleaved so that a
disturbance hits every protocol alike, from the moment the client starts connecting to the first
audio byte it holds, each on a new connection (as Home Assistant opens one per request):
  Wyoming synthesize   `synthesize` event → first audio-chunk (the reference client, wyoming 1.9.0)
  Wyoming stream       synthesize-start, the text as synthesize-chunks of 8 characters,
                       synthesize-stop → first audio-chunk
  REST chunked         POST /v1/audio/speech stream_format=audio, pcm → first body byte
  REST SSE             POST /v1/audio/speech stream_format=sse, pcm → first speech.audio.delta
and beside it the server's own figure from its request log (arrival → first audio bytes, the
same definition for every transport; a stream's counts from synthesize-start). Prints a markdown
table (ms) with the machine and the date.

Usage: bench/wyoming_ttfa.py [--build build] [--runs 40] [--text "..."]
The reference client is read from $VOXSERVE_WYOMING_REF (default ../shared/oracles/wyoming).
"""
import argparse
import asyncio
import datetime
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEXT = ("Good morning. The weather today is sunny with a light breeze, and the "
                "temperature will reach twenty degrees. Have a nice day.")
CONFIG = """models:
  - id: espeak
    engine: espeak
    default_voice: en-us
    scheduling: {instances: 1, max_batch_size: 1, max_queue_delay_ms: 0}
    warmup: ["Hello."]
"""


def load_reference():
    path = os.environ.get("VOXSERVE_WYOMING_REF",
                          os.path.join(HERE, "..", "..", "shared", "oracles", "wyoming"))
    sys.path.insert(0, os.path.abspath(path))
    import wyoming.client
    import wyoming.tts
    return wyoming


def start_server(build, work):
    config = os.path.join(work, "bench.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    log_path = os.path.join(work, "voxserve.log")
    log = open(log_path, "w")
    process = subprocess.Popen(
        [os.path.join(build, "bin", "voxserve"), "--config", config, "--host", "127.0.0.1",
         "--port", "0", "--grpc-enabled", "false", "--wyoming-enabled", "true",
         "--wyoming-port", "0"],
        stdout=subprocess.DEVNULL, stderr=log)
    return process, log_path


def wait_ports(process, log_path):
    deadline = time.monotonic() + 60
    http = wyo = None
    while time.monotonic() < deadline and (http is None or wyo is None):
        text = open(log_path).read()
        m = re.search(r"listening on http://[0-9.]+:(\d+)", text)
        w = re.search(r"Wyoming listening on [0-9.]+:(\d+)", text)
        http = int(m.group(1)) if m else None
        wyo = int(w.group(1)) if w else None
        if process.poll() is not None:
            raise RuntimeError("voxserve exited:\n" + text)
        time.sleep(0.05)
    if http is None or wyo is None:
        raise RuntimeError("voxserve did not start:\n" + open(log_path).read())
    while time.monotonic() < deadline:
        if http_get(http, "/health/ready").startswith(b"HTTP/1.1 200"):
            return http, wyo
        time.sleep(0.05)
    raise RuntimeError("voxserve did not become ready")


def http_get(port, path):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data


def rest_first_audio(port, text, stream_format, request_id):
    """Seconds from connecting to the first audio byte (chunked) or delta event (SSE). The
    answer is read to its end, so the server logs the request's own time to first audio."""
    body = json.dumps({"model": "tts-1", "voice": "en-us", "response_format": "pcm",
                       "stream_format": stream_format, "input": text}).encode()
    start = time.perf_counter()
    first = None
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     b"X-Request-Id: " + request_id.encode() + b"\r\n"
                     b"Content-Type: application/json\r\nContent-Length: " +
                     str(len(body)).encode() + b"\r\n\r\n" + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            head, sep, rest = data.partition(b"\r\n\r\n")
            if first is not None or not sep:
                continue
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.decode(errors="replace"))
            if stream_format == "sse":
                if b"speech.audio.delta" in rest:
                    first = time.perf_counter() - start
            else:
                # Chunked: "<hex size>\r\n" then the bytes; a non-empty chunk is audio.
                size, crlf, after = rest.partition(b"\r\n")
                if crlf and int(size, 16) > 0 and after:
                    first = time.perf_counter() - start
    if first is None:
        raise RuntimeError("no audio: " + data[:300].decode(errors="replace"))
    return first


def server_first_audio(log_path):
    """The server's own time to first audio (its request log: from the request's arrival, the
    same definition for every transport), by protocol, in seconds."""
    found = {}
    for line in open(log_path):
        if " request " not in line:
            continue
        ttfa = re.search(r"time_to_first_audio_seconds=([0-9.e-]+)", line)
        transport = re.search(r"transport=(\w+)", line)
        if not ttfa or not transport:
            continue
        if transport.group(1) == "wyoming":
            method = re.search(r"method=(\S+)", line).group(1)
            name = "Wyoming stream" if method == "synthesize-start" else "Wyoming synthesize"
        else:
            request_id = re.search(r"request_id=(\S+)", line).group(1)
            if request_id.startswith("warmup"):
                continue
            name = "REST SSE" if request_id.startswith("sse") else "REST chunked"
        found.setdefault(name, []).append(float(ttfa.group(1)))
    return found


async def wyoming_first_audio(wy, port, text, streamed):
    start = time.perf_counter()
    async with wy.client.AsyncTcpClient("127.0.0.1", port) as connection:
        voice = wy.tts.SynthesizeVoice(name="en-us")
        if streamed:
            await connection.write_event(wy.tts.SynthesizeStart(voice=voice).event())
            for i in range(0, len(text), 8):
                await connection.write_event(wy.tts.SynthesizeChunk(text=text[i:i + 8]).event())
            await connection.write_event(wy.tts.SynthesizeStop().event())
        else:
            await connection.write_event(wy.tts.Synthesize(text=text, voice=voice).event())
        first = None
        while True:
            event = await connection.read_event()
            if event is None or event.type == "error":
                raise RuntimeError(f"no audio: {event}")
            if event.type == "audio-chunk" and first is None:
                first = time.perf_counter() - start
            if event.type == ("synthesize-stopped" if streamed else "audio-stop"):
                return first


def summary(samples):
    ms = sorted(1000 * s for s in samples)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return statistics.median(ms), p90, statistics.fmean(ms), ms[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--text", default=DEFAULT_TEXT)
    args = parser.parse_args()
    wy = load_reference()
    with tempfile.TemporaryDirectory() as work:
        process, log_path = start_server(args.build, work)
        try:
            http, wyo = wait_ports(process, log_path)
            protocols = {
                "Wyoming synthesize": lambda i: asyncio.run(
                    wyoming_first_audio(wy, wyo, args.text, False)),
                "Wyoming stream": lambda i: asyncio.run(
                    wyoming_first_audio(wy, wyo, args.text, True)),
                "REST chunked": lambda i: rest_first_audio(http, args.text, "audio", f"chunked-{i}"),
                "REST SSE": lambda i: rest_first_audio(http, args.text, "sse", f"sse-{i}"),
            }
            warmup = 5
            samples = {name: [] for name in protocols}
            for i in range(warmup + args.runs):
                for name, measure in protocols.items():
                    seconds = measure(i if i >= warmup else f"warmup{i}")
                    if i >= warmup:
                        samples[name].append(seconds)
        finally:
            process.terminate()
            process.wait()
        server = server_first_audio(log_path)
    for name in ("Wyoming synthesize", "Wyoming stream"):  # their warm-up runs are logged too
        server[name] = server.get(name, [])[warmup:]
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    print(f"machine: {os.cpu_count()} cores, {cpu}; load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
    print(f"date: {datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ}; {args.runs} runs each, interleaved, "
          f"one at a time; text of {len(args.text)} characters, {args.text.count('.')} sentences")
    print()
    print("| protocol | client: first audio P50 ms | P90 | mean | min | server: P50 ms | P90 |")
    print("|---|---|---|---|---|---|---|")
    for name, values in samples.items():
        p50, p90, mean, low = summary(values)
        s50, s90, _, _ = summary(server[name]) if server.get(name) else (0, 0, 0, 0)
        print(f"| {name} | {p50:.1f} | {p90:.1f} | {mean:.1f} | {low:.1f} | {s50:.1f} | {s90:.1f} |")


if __name__ == "__main__":
    main()
