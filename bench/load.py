#!/usr/bin/python3
"""A small asyncio load generator for voxserve's REST API (stdlib only, Debian's python3).

Closed loop (-c N: N clients, each sending its next request when the previous one ends) or open
loop (--rate R: Poisson arrivals at R requests/s). Per request it records status, time to the
first body byte (time to first audio when streaming) and total latency, then prints one JSON
object with throughput, percentiles and status counts. voxbench (issue 7) will replace it.
"""
import argparse
import asyncio
import json
import random
import time


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


async def read_response(reader):
    """Reads one HTTP/1.1 response; returns (status, first_body_byte_time, body_bytes)."""
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("connection closed")
    status = int(status_line.split()[1])
    headers = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    first = None
    size = 0
    if "content-length" in headers:
        length = int(headers["content-length"])
        while size < length:
            chunk = await reader.read(min(65536, length - size))
            if not chunk:
                raise ConnectionError("short body")
            first = first or time.monotonic()
            size += len(chunk)
    elif headers.get("transfer-encoding") == "chunked":
        while True:
            length = int((await reader.readline()).strip(), 16)
            if length == 0:
                await reader.readline()
                break
            data = await reader.readexactly(length + 2)
            first = first or time.monotonic()
            size += length
    return status, first, size, headers.get("connection") == "close"


class Client:
    def __init__(self, host, port, request):
        self.host, self.port, self.request = host, port, request
        self.reader = self.writer = None

    async def send(self):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        started = time.monotonic()
        self.writer.write(self.request)
        await self.writer.drain()
        status, first, size, close = await read_response(self.reader)
        ended = time.monotonic()
        if close:
            self.writer.close()
            self.writer = None
        return {"status": status, "latency": ended - started,
                "ttfb": (first - started) if first else None, "bytes": size}


def build_request(args):
    body = {"model": "tts-1", "input": args.text, "voice": args.voice,
            "response_format": args.format}
    if args.stream:
        body["stream_format"] = "audio"
    else:
        body["stream"] = False  # the route streams unless told otherwise
    payload = json.dumps(body).encode()
    return (f"POST /v1/audio/speech HTTP/1.1\r\nHost: {args.host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n").encode() + payload


async def closed_loop(args, request, results, stop_at):
    async def worker():
        client = Client(args.host, args.port, request)
        while time.monotonic() < stop_at:
            try:
                results.append(await client.send())
            except (ConnectionError, OSError, asyncio.IncompleteReadError) as error:
                results.append({"status": "error:" + type(error).__name__})
                client.writer = None
    await asyncio.gather(*(worker() for _ in range(args.concurrency)))


async def open_loop(args, request, results, stop_at):
    tasks = []

    async def one():
        client = Client(args.host, args.port, request)
        try:
            results.append(await client.send())
        except (ConnectionError, OSError, asyncio.IncompleteReadError) as error:
            results.append({"status": "error:" + type(error).__name__})
        finally:
            if client.writer:
                client.writer.close()

    while time.monotonic() < stop_at:
        tasks.append(asyncio.create_task(one()))
        await asyncio.sleep(random.expovariate(args.rate))
    await asyncio.gather(*tasks)


def summarize(results, seconds):
    ok = [r for r in results if r["status"] == 200]
    statuses = {}
    for r in results:
        statuses[str(r["status"])] = statuses.get(str(r["status"]), 0) + 1
    latencies = [r["latency"] for r in ok]
    ttfbs = [r["ttfb"] for r in ok if r["ttfb"] is not None]
    ms = lambda v: None if v is None else round(v * 1000, 2)
    return {
        "requests": len(results), "ok": len(ok), "statuses": statuses,
        "ok_per_s": round(len(ok) / seconds, 1),
        "latency_ms": {p: ms(percentile(latencies, int(p[1:]))) for p in ("p50", "p95", "p99")},
        "ttfb_ms": {p: ms(percentile(ttfbs, int(p[1:]))) for p in ("p50", "p95", "p99")},
        "rejected_fraction": round(statuses.get("429", 0) / max(1, len(results)), 3),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("-c", "--concurrency", type=int, default=1)
    parser.add_argument("--rate", type=float, help="open loop: Poisson arrivals per second")
    parser.add_argument("-d", "--duration", type=float, default=10)
    parser.add_argument("--text", default="The quick brown fox jumps over the lazy dog.")
    parser.add_argument("--voice", default="alloy")
    parser.add_argument("--format", default="wav")
    parser.add_argument("--stream", action="store_true", help="stream_format=audio")
    args = parser.parse_args()
    request = build_request(args)
    results = []
    started = time.monotonic()
    stop_at = started + args.duration
    runner = open_loop if args.rate else closed_loop
    asyncio.run(runner(args, request, results, stop_at))
    print(json.dumps(summarize(results, time.monotonic() - started)))


if __name__ == "__main__":
    main()
