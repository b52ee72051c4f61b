#!/usr/bin/python3
"""CosyVoice load points against a running voxserve (stdlib only; driven by cosyvoice_bench.sh).

  register --port P --model M --wav prompt.wav --transcript T      prints the voice id
  point --port P --model M --voice V -c N [--sse] --label L ...    one JSON line per point
  table results.jsonl                                              markdown tables

A point sends N requests at once (N threads released together; each sends --per-client
requests one after another) and measures from that release to the last response:
  tokens/s   speech tokens out / wall. Tokens are counted from the audio: one CosyVoice2 speech
             token is 2 mel frames x 480 samples = 960 samples at 24 kHz = 1/25 s (flow.py's
             token_mel_ratio 2, HiFT's 480-sample hop), so tokens = audio seconds x 25 exactly.
             They include the flow + HiFT time that runs inside the engine's step (end to end).
  RTF        per request, latency / its audio seconds (mean and max); aggregate: wall / all the
             audio (as upstream's Triton client computes it).
  CPU s      with --server-pid: the server's CPU time (user + system, its children's included)
             over the point, and per request.
  TTFA       with --sse: the first speech.audio.delta's arrival after the request was sent.
  gaps       with --sse: for each stream, the time between two deltas against the audio length
             of the earlier one (the client plays that chunk while it waits); a ratio > 1 means
             that chunk ran dry. "stalls" replays each stream from its first delta and counts
             streams whose player would have run out of audio at least once; continuity is
             the share of streams that never did.
"""
import argparse
import base64
import http.client
import json
import os
import sys
import threading
import time
import uuid

SAMPLE_RATE = 24000
TOKENS_PER_SECOND = 25  # 24000 / 960 samples per speech token (see the docstring)


def post_json(port, path, body, timeout):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return conn, conn.getresponse()


def speech(port, model, voice, text, sse, timeout, seed):
    """One request; returns a dict with status, latency, audio seconds and (SSE) the deltas."""
    body = {"model": model, "input": text, "voice": voice, "response_format": "pcm"}
    if sse:
        body["stream_format"] = "sse"
    else:
        body["stream"] = False  # the whole file: the route streams unless told otherwise
    start = time.monotonic()
    result = {"ok": False, "text": text}
    try:
        conn, response = post_json(port, "/v1/audio/speech", body, timeout)
        if response.status != 200:
            result["error"] = f"HTTP {response.status}: {response.read()[:200]!r}"
            return result
        deltas = []  # (seconds after start, samples)
        samples = 0
        if sse:
            while True:
                line = response.readline()
                if not line:
                    break
                if not line.startswith(b"data: "):
                    continue
                event = json.loads(line[len(b"data: "):])
                if event.get("type") == "speech.audio.delta":
                    n = len(base64.b64decode(event["audio"])) // 2
                    deltas.append((time.monotonic() - start, n))
                    samples += n
                elif event.get("type") == "error":
                    result["error"] = json.dumps(event)[:200]
                    return result
        else:
            data = response.read()
            samples = len(data) // 2
            deltas.append((time.monotonic() - start, samples))
        conn.close()
    except (OSError, http.client.HTTPException) as error:  # timeouts are OSErrors
        result["error"] = f"{type(error).__name__}: {error}"
        return result
    result.update(ok=True, latency=time.monotonic() - start, audio=samples / SAMPLE_RATE,
                  deltas=deltas)
    return result


def stream_gaps(deltas):
    """Largest gap / earlier chunk's audio, and whether a player fed by these deltas stalls."""
    worst, stalled = 0.0, False
    play_end = None
    for (t_prev, n_prev), (t, n) in zip(deltas, deltas[1:]):
        worst = max(worst, (t - t_prev) / (n_prev / SAMPLE_RATE))
    for t, n in deltas:
        if play_end is not None and t > play_end + 1e-3:
            stalled = True
        play_end = max(play_end or t, t) + n / SAMPLE_RATE
    return worst, stalled


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def cpu_seconds(pid):
    """User + system time of `pid` and its waited-for children (/proc/PID/stat fields 14-17)."""
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def run_point(args):
    texts = args.text
    results = []
    lock = threading.Lock()
    release = threading.Barrier(args.c + 1)

    def client(index):
        release.wait()
        for k in range(args.per_client):
            text = texts[(index + k) % len(texts)]
            r = speech(args.port, args.model, args.voice, text, args.sse, args.max_seconds,
                       args.seed)
            with lock:
                results.append(r)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.c)]
    for t in threads:
        t.start()
    cpu_before = cpu_seconds(args.server_pid)
    release.wait()
    start = time.monotonic()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    cpu = cpu_seconds(args.server_pid)
    ok = [r for r in results if r["ok"]]
    audio = sum(r["audio"] for r in ok)
    point = {"label": args.label, "model": args.model, "c": args.c, "sse": args.sse,
             "requests": len(results), "ok": len(ok), "wall_s": round(wall, 2),
             "audio_s": round(audio, 2), "tokens": round(audio * TOKENS_PER_SECOND),
             "tokens_per_s": round(audio * TOKENS_PER_SECOND / wall, 2),
             "loadavg": open("/proc/loadavg").read().split()[:3]}
    if cpu is not None:
        point.update(cpu_s=round(cpu - cpu_before, 1),
                     cpu_s_per_request=round((cpu - cpu_before) / max(1, len(results)), 2))
    if audio > 0:
        point["rtf_aggregate"] = round(wall / audio, 3)
    errors = [r["error"] for r in results if not r["ok"]]
    if errors:
        point["errors"] = errors[:3]
    if ok:
        rtf = [r["latency"] / r["audio"] for r in ok if r["audio"] > 0]
        point.update(rtf_mean=round(sum(rtf) / len(rtf), 3), rtf_max=round(max(rtf), 3),
                     latency_p50=round(percentile([r["latency"] for r in ok], 50), 2))
    if args.sse and ok:
        ttfa = [r["deltas"][0][0] for r in ok if r["deltas"]]
        gaps = [stream_gaps(r["deltas"]) for r in ok if len(r["deltas"]) > 0]
        point.update(ttfa_p50=round(percentile(ttfa, 50), 3), ttfa_p99=round(percentile(ttfa, 99), 3),
                     ttfa_max=round(max(ttfa), 3),
                     chunks_per_stream=round(sum(len(r["deltas"]) for r in ok) / len(ok), 1),
                     gap_ratio_max=round(max(g for g, _ in gaps), 3),
                     streams_stalled=sum(1 for _, s in gaps if s),
                     continuity_pct=round(100 * sum(1 for _, s in gaps if not s) / len(ok), 1))
        worst = max(ok, key=lambda r: stream_gaps(r["deltas"])[0])
        point["worst_stream"] = [(round(t, 2), round(n / SAMPLE_RATE, 2))
                                 for t, n in worst["deltas"]]
    print(json.dumps(point), flush=True)


def register(args):
    boundary = uuid.uuid4().hex
    wav = open(args.wav, "rb").read()
    parts = []
    for name, value in (("name", args.name), ("model", args.model),
                        ("transcript", args.transcript)):
        parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n"
                     f"{value}\r\n".encode())
    parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"audio_sample\"; "
                 f"filename=\"prompt.wav\"\r\nContent-Type: audio/wav\r\n\r\n".encode() + wav +
                 b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=600)
    conn.request("POST", "/v1/audio/voices", b"".join(parts),
                 {"Content-Type": f"multipart/form-data; boundary={boundary}"})
    response = conn.getresponse()
    body = response.read()
    if response.status != 200:
        sys.exit(f"voice registration failed: HTTP {response.status}: {body[:300]!r}")
    print(json.loads(body)["id"])


def table(args):
    points = [json.loads(line) for line in open(args.results) if line.strip()]
    print("| configuration | c | requests ok | wall s | audio s | tokens/s | RTF aggregate "
          "| RTF mean | RTF max | TTFA P50 s | TTFA P99 s | TTFA max s | chunks/stream "
          "| max gap / chunk audio | continuity | CPU s (per request) | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in points:
        continuity = f"{p['continuity_pct']} %" if "continuity_pct" in p else "-"
        cpu = f"{p['cpu_s']} ({p['cpu_s_per_request']})" if "cpu_s" in p else "-"
        cells = [p["label"], p["c"], f"{p['ok']}/{p['requests']}", p["wall_s"], p["audio_s"],
                 p["tokens_per_s"], p.get("rtf_aggregate", "-"), p.get("rtf_mean", "-"),
                 p.get("rtf_max", "-"), p.get("ttfa_p50", "-"), p.get("ttfa_p99", "-"),
                 p.get("ttfa_max", "-"), p.get("chunks_per_stream", "-"),
                 p.get("gap_ratio_max", "-"), continuity, cpu, " ".join(p["loadavg"])]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    by = {(p["label"], p["c"]): p["tokens_per_s"] for p in points}
    print()
    for (label, c), tps in sorted(by.items()):
        base = by.get((label, 1))
        if c != 1 and base:
            print(f"- {label}: tokens/s at c={c} = {tps / base:.2f} x c=1")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    reg = sub.add_parser("register")
    reg.add_argument("--port", type=int, required=True)
    reg.add_argument("--model", required=True)
    reg.add_argument("--wav", required=True)
    reg.add_argument("--transcript", required=True)
    reg.add_argument("--name", default="Bench Voice")
    point = sub.add_parser("point")
    point.add_argument("--port", type=int, required=True)
    point.add_argument("--model", required=True)
    point.add_argument("--voice", required=True)
    point.add_argument("-c", type=int, required=True)
    point.add_argument("--per-client", type=int, default=1)
    point.add_argument("--sse", action="store_true")
    point.add_argument("--label", required=True)
    point.add_argument("--text", action="append", required=True,
                       help="texts; client i starts at text i mod count")
    point.add_argument("--max-seconds", type=float, default=600,
                       help="a request taking longer is counted as failed")
    point.add_argument("--seed", type=int, default=None)
    point.add_argument("--server-pid", type=int, default=None,
                       help="the server's pid: its CPU time over the point is reported")
    tab = sub.add_parser("table")
    tab.add_argument("results")
    args = parser.parse_args()
    {"register": register, "point": run_point, "table": table}[args.command](args)


if __name__ == "__main__":
    main()
