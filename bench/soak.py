#!/usr/bin/python3
"""Soak and overload runs against a real voxserve (issue 10, item 5), with voxbench as the load.

  soak.py soak     --build build --seconds 60   # ~70 % of capacity, REST + SSE + WebSocket + gRPC
  soak.py overload --build build --seconds 60   # 10x capacity over REST, /health/live probed

Both start their own voxserve (bench config below), measure its capacity first with a short
closed-loop probe (REST, the same corpus), then offer open-loop Poisson load with one voxbench
process per protocol side by side, while a sampler reads the server's /proc/PID/status (VmRSS,
VmHWM) and /proc/PID/fd once a second. They print a report (and --json writes it) and exit 1 when
a check fails; every threshold is printed beside its figure.

Soak checks (the run is cut into windows; the first third of a short run, at most two minutes,
is the warm-up: the heap grows to the load's working set in the first tens of seconds, which a
60-second run would otherwise read as a leak):
  - errors = 0: every request voxbench counted in any window, and the server's own rejected and
    failed counters over the whole run (so a failure outside voxbench's windows is not missed);
  - RSS flat: least-squares slope of VmRSS over the samples after the warm-up, times the
    post-warm-up duration (the growth the fit predicts), at most max(8 MiB, 5 % of mean RSS,
    1.5 x the spread of the samples around the fitted line, 5th to 95th percentile). Without a
    leak the server's RSS swings with the audio of the requests in flight (+-8 MiB within
    seconds at ~50 req/s here, more when a stall of the shared machine queues requests), and a
    line fitted over 60 s of such swings "grows" by up to their height. A leak raises the line
    and leaves the spread around it alone, so the spread is the noise floor the growth must
    clear. Measured on a 400 s run without a leak (bench/RESULTS.md, "Soak"): over every 60 s
    span, growth <= 0.84 of that limit; a synthetic 20 MiB/min leak added to the same samples
    fails 60 of 66 spans. The 30-minute run (--seconds 1800) is the fine-grained leak test; the
    60-second one catches leaks of tens of MiB a minute (a request's audio kept) and every error;
  - fds flat: the same fit over the fd count, at most max(8, 10 % of the mean) descriptors, and
    once the load has stopped the fd count returns to its value before the load (bounded poll);
  - latency drift: P50/P99 of the first measured window against the last, per protocol
    (reported; not a failure, the shared machines this runs on are too noisy for that).
Overload checks (10x the probed capacity for --seconds):
  - /health/live answers every probe, P99 under --health-p99-ms;
  - rejections are 429s (no 503, timeout or broken connection), P99 under --reject-p99-ms;
  - accepted requests finish within their deadline (limits.request_timeout_ms below);
  - peak RSS (VmHWM) under  RSS_warm + N_req * 4 * B_audio + N_conn * 64 KiB + 32 MiB, where
    RSS_warm = VmRSS after the capacity probe (engine, pools and caches warm),
    N_req = queue_capacity + instances * max_batch_size (a request's first segment is only
    admitted while fewer than queue_capacity segments wait, so at most that many requests hold
    audio besides those at the engine), B_audio = 16-bit PCM bytes of the longest corpus text
    (4x: float samples, resampled copy, encoded bytes, response body), N_conn = the client
    connections voxbench may open (64 KiB each: Beast buffers and session state), 32 MiB for
    allocator arenas and gRPC's lazily created state.
"""
import argparse
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "mixed.txt")

# One espeak instance (the default config's); queue and deadline explicit because the overload
# bound and the deadline check are derived from them. The soak's queue is deep: it is not about
# admission control, and a dip in the (shared) machine's speed must queue, not fail the run.
INSTANCES = 1
MAX_BATCH_SIZE = 1
QUEUE_CAPACITY = {"soak": 1024, "overload": 64}
REQUEST_TIMEOUT_MS = 20_000


def server_config(mode):
    return f"""
limits:
  request_timeout_ms: {REQUEST_TIMEOUT_MS}
models:
  - id: espeak
    engine: espeak
    default_voice: en-us
    scheduling: {{instances: {INSTANCES}, max_batch_size: {MAX_BATCH_SIZE}, max_queue_delay_ms: 0,
                 queue_capacity: {QUEUE_CAPACITY[mode]}}}
    warmup: ["Hello."]
"""


MIB = 1 << 20


class Server:
    """voxserve on ephemeral ports; its log goes to a file next to the config."""

    def __init__(self, binary, workdir, mode):
        config = os.path.join(workdir, "soak.yaml")
        with open(config, "w") as f:
            f.write(server_config(mode))
        self.log_path = os.path.join(workdir, "voxserve.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "--config", config, "--host", "127.0.0.1", "--port", "0", "--grpc-port", "0"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        self.pid = self.process.pid
        self.port = self.grpc_port = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (self.port is None or self.grpc_port is None):
            text = open(self.log_path).read()
            http = re.search(r"listening on http://[0-9.]+:(\d+)", text)
            grpc = re.search(r"gRPC listening on [0-9.]+:(\d+)", text)
            self.port = int(http.group(1)) if http else None
            self.grpc_port = int(grpc.group(1)) if grpc else None
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        if self.port is None or self.grpc_port is None:
            self.stop()
            sys.exit("voxserve did not start:\n" + open(self.log_path).read())
        while time.monotonic() < deadline:
            try:
                if self.get("/health/ready")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        sys.exit("voxserve did not become ready:\n" + open(self.log_path).read())

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def get(self, path):
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def counter_sum(self, prefix):
        """Sum of every sample of the metric family `prefix` in /metrics."""
        total = 0.0
        for line in self.get("/metrics")[1].splitlines():
            if line.startswith(prefix + "{") or line.startswith(prefix + " "):
                total += float(line.split()[-1])
        return total

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Sampler(threading.Thread):
    """Once a second: (t, VmRSS, VmHWM, fds) of the server, plus /health's in_flight."""

    def __init__(self, server, interval=1.0):
        super().__init__(daemon=True)
        self.server, self.interval = server, interval
        self.samples = []
        self.max_in_flight = 0
        self._done = threading.Event()
        self.start_time = time.monotonic()

    def run(self):
        while not self._done.is_set():
            status = proc_status(self.server.pid)
            self.samples.append((time.monotonic() - self.start_time, status["VmRSS"],
                                 status["VmHWM"], fd_count(self.server.pid)))
            try:
                self.max_in_flight = max(self.max_in_flight,
                                         json.loads(self.server.get("/health")[1])["in_flight"])
            except (OSError, ValueError, KeyError):
                pass
            self._done.wait(self.interval)

    def stop(self):
        self._done.set()
        self.join()


def least_squares_slope(points):
    """Slope of the least-squares line through (x, y) points (0 for fewer than 2)."""
    if len(points) < 2:
        return 0.0
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return sxy / sxx if sxx > 0 else 0.0


def spread_around_fit(points, slope):
    """5th-to-95th percentile range of the points' distances from the fitted line."""
    if len(points) < 2:
        return 0.0
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    residuals = sorted(y - (mean_y + slope * (x - mean_x)) for x, y in points)
    last = len(residuals) - 1
    return residuals[round(0.95 * last)] - residuals[round(0.05 * last)]


def voxbench(build, url, protocol, json_path, *args):
    command = [os.path.join(build, "bin", "voxbench"), "--url", url, "--protocol", protocol,
               "--corpus", CORPUS, "--json", json_path, "--timeout", "60", *map(str, args)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(process, json_path, seconds):
    """voxbench's report, once it has run its `seconds` (plus time to finish its requests)."""
    try:
        _, stderr = process.communicate(timeout=seconds + 120)
    except subprocess.TimeoutExpired:
        process.kill()
        sys.exit(f"voxbench did not finish {seconds + 120:.0f} s after starting")
    if process.returncode != 0:
        sys.exit(f"voxbench failed ({process.returncode}): {stderr}")
    with open(json_path) as f:
        return json.load(f)


def probe_capacity(build, server, workdir, seconds):
    """Successful REST requests per second, closed loop with enough clients to keep the
    engine busy (8 per instance: encoding and HTTP overlap synthesis)."""
    path = os.path.join(workdir, "probe.json")
    report = finish(voxbench(build, server.url, "rest", path, "-c", 8 * INSTANCES, "-d",
                             seconds, "--warmup", 1), path, seconds + 1)
    point = report["points"][0]
    if point["ok"] == 0:
        sys.exit(f"capacity probe got no successful request: {point['errors']}")
    return point["qps"]


def longest_audio_bytes(server):
    """16-bit PCM bytes of the longest corpus text (the overload bound's B_audio)."""
    texts = [line.strip() for line in open(CORPUS, encoding="utf-8")
             if line.strip() and not line.lstrip().startswith("#")]
    longest = max(texts, key=len)
    request = urllib.request.Request(
        server.url + "/v1/audio/speech",
        data=json.dumps({"model": "tts-1", "input": longest, "voice": "alloy",
                         "response_format": "pcm"}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return len(answer.read())


def server_error_count(server):
    return (server.counter_sum("voxserve_requests_rejected_total") +
            server.counter_sum("voxserve_requests_failed_total"))


def wait_for_fds(server, target, timeout=30.0):
    deadline = time.monotonic() + timeout
    count = fd_count(server.pid)
    while count > target and time.monotonic() < deadline:
        time.sleep(0.1)
        count = fd_count(server.pid)
    return count


def run_soak(args, server, workdir, report):
    capacity = probe_capacity(args.build, server, workdir, args.probe_seconds)
    window = max(10.0, min(60.0, args.seconds / 6))
    windows = max(2, round(args.seconds / window))  # measured windows after the warm-up
    warmup_windows = max(1, math.ceil(min(120.0, args.seconds / 3) / window))
    warmup = warmup_windows * window
    protocols = [("rest", server.url, []), ("sse", server.url, []),
                 ("websocket", f"ws://127.0.0.1:{server.port}", []),
                 ("grpc", f"grpc://127.0.0.1:{server.grpc_port}", ["--stream"])]
    rate = round(args.load * capacity / len(protocols), 3)
    report.update(capacity_rps=capacity, offered_rps=rate * len(protocols),
                  rate_per_protocol=rate, window_s=window, windows=windows + warmup_windows,
                  warmup_s=warmup)
    print(f"capacity {capacity:.2f} req/s (REST, closed loop); offering {args.load:.0%}: "
          f"{rate} req/s on each of {', '.join(p for p, _, _ in protocols)}; "
          f"{warmup:.0f} s of warm-up, then {windows} windows of {window:.0f} s", flush=True)

    fds_before = fd_count(server.pid)
    errors_before = server_error_count(server)
    sampler = Sampler(server)
    sampler.start()
    rates = ",".join([str(rate)] * (windows + warmup_windows))
    runs = []
    for index, (protocol, url, extra) in enumerate(protocols):
        path = os.path.join(workdir, f"soak-{protocol}.json")
        runs.append((protocol, path, voxbench(args.build, url, protocol, path, "--rate", rates,
                                              "-d", window, "--warmup", 0, "--seed", index + 1,
                                              *extra)))
    # Each window ends by waiting for its requests, each bounded by its deadline.
    expected = (window + REQUEST_TIMEOUT_MS / 1000) * (windows + warmup_windows)
    results = {protocol: finish(process, path, expected) for protocol, path, process in runs}
    load_end = time.monotonic() - sampler.start_time
    fds_after = wait_for_fds(server, fds_before)
    sampler.stop()
    server_errors = server_error_count(server) - errors_before

    failures = []
    requests = errors = 0
    per_protocol = {}
    for protocol, result in results.items():
        points = result["points"]
        requests += sum(p["requests"] for p in points)
        bad = {}
        for p in points:
            for kind, count in p["errors"].items():
                bad[kind] = bad.get(kind, 0) + count
        errors += sum(bad.values())
        first, last = points[warmup_windows], points[-1]
        per_protocol[protocol] = {
            "requests": sum(p["requests"] for p in points), "errors": bad,
            "p50_first_ms": first["latency_ms"]["p50"], "p50_last_ms": last["latency_ms"]["p50"],
            "p99_first_ms": first["latency_ms"]["p99"], "p99_last_ms": last["latency_ms"]["p99"],
            "qps_per_window": [p["qps"] for p in points]}
    # Served against offered, over the measured windows: well below 1 means the machine got
    # slower than the probe found it (a shared host), and the figures include a growing backlog.
    served = sum(p["ok"] for r in results.values() for p in r["points"][warmup_windows:])
    served /= window * windows
    kept_up = served / (rate * len(protocols))
    if errors:
        failures.append(f"{errors} request(s) failed in voxbench's windows")
    if server_errors:
        failures.append(f"the server counted {server_errors:.0f} rejected/failed request(s)")

    warm = [s for s in sampler.samples if warmup <= s[0] <= load_end]
    span = (warm[-1][0] - warm[0][0]) if len(warm) > 1 else 0.0
    rss_mean = statistics.fmean(s[1] for s in warm) if warm else 0.0
    fds_mean = statistics.fmean(s[3] for s in warm) if warm else 0.0
    rss_points = [(s[0], s[1]) for s in warm]
    rss_slope = least_squares_slope(rss_points)  # bytes/s
    rss_spread = spread_around_fit(rss_points, rss_slope)
    fd_slope = least_squares_slope([(s[0], s[3]) for s in warm])  # fds/s
    rss_growth, fd_growth = rss_slope * span, fd_slope * span
    rss_limit = max(8 * MIB, 0.05 * rss_mean, 1.5 * rss_spread)
    fd_limit = max(8.0, 0.10 * fds_mean)
    if rss_growth > rss_limit:
        failures.append(f"RSS grows: fitted {rss_growth / MIB:.1f} MiB over {span:.0f} s "
                        f"> {rss_limit / MIB:.1f} MiB")
    if fd_growth > fd_limit:
        failures.append(f"fds grow: fitted {fd_growth:.1f} over {span:.0f} s > {fd_limit:.1f}")
    if fds_after > fds_before:
        failures.append(f"fds did not return to {fds_before} after the load: {fds_after}")

    rss = [s[1] for s in sampler.samples]
    report.update(
        duration_s=round(load_end, 1), requests=requests, errors=errors,
        served_rps=round(served, 2), served_share_of_offered=round(kept_up, 3),
        server_errors=server_errors, protocols=per_protocol,
        rss_start_mib=round(warm[0][1] / MIB, 1) if warm else None,
        rss_end_mib=round(warm[-1][1] / MIB, 1) if warm else None,
        rss_max_mib=round(max(rss) / MIB, 1) if rss else None,
        rss_slope_kib_per_min=round(rss_slope * 60 / 1024, 1),
        rss_fitted_growth_mib=round(rss_growth / MIB, 2), rss_limit_mib=round(rss_limit / MIB, 1),
        rss_spread_mib=round(rss_spread / MIB, 1),
        fds_before_load=fds_before, fds_start=warm[0][3] if warm else None,
        fds_end=warm[-1][3] if warm else None, fds_after_load=fds_after,
        fd_slope_per_min=round(fd_slope * 60, 2), fd_fitted_growth=round(fd_growth, 2),
        fd_limit=round(fd_limit, 1), samples=len(sampler.samples), failures=failures)

    print(f"\nsoak: {load_end:.0f} s, {requests} requests, {errors} errors in voxbench, "
          f"{server_errors:.0f} rejected/failed on the server")
    print(f"served {served:.2f} of the {rate * len(protocols):.2f} req/s offered "
          f"({kept_up:.0%})" + ("" if kept_up >= 0.9 else
                                "; below 90 %: the machine did not sustain the probed capacity, "
                                "so latency, errors and RSS include a growing backlog"))
    print(f"RSS after warm-up: {report['rss_start_mib']} -> {report['rss_end_mib']} MiB "
          f"(max {report['rss_max_mib']}); slope {report['rss_slope_kib_per_min']} KiB/min, "
          f"fitted growth {rss_growth / MIB:.2f} MiB (limit {rss_limit / MIB:.1f}; spread around "
          f"the fit {rss_spread / MIB:.1f})")
    print(f"fds: {fds_before} before the load, {report['fds_start']} -> {report['fds_end']} "
          f"after warm-up, {fds_after} after the load; slope {fd_slope * 60:.2f}/min, "
          f"fitted growth {fd_growth:.1f} (limit {fd_limit:.1f})")
    print(f"{'protocol':10} {'requests':>8} {'P50 first':>10} {'P50 last':>9} "
          f"{'P99 first':>10} {'P99 last':>9}  errors")
    for protocol, p in per_protocol.items():
        print(f"{protocol:10} {p['requests']:8d} {p['p50_first_ms']:10.1f} "
              f"{p['p50_last_ms']:9.1f} {p['p99_first_ms']:10.1f} {p['p99_last_ms']:9.1f}  "
              f"{p['errors'] or 0}")
    return failures


def run_overload(args, server, workdir, report):
    capacity = probe_capacity(args.build, server, workdir, args.probe_seconds)
    audio_bytes = longest_audio_bytes(server)
    rate = round(args.factor * capacity, 2)
    health_rate = 20
    max_in_flight = 512  # voxbench threads and connections: 429s come back fast, few pile up
    rss_warm = proc_status(server.pid)["VmRSS"]
    n_req = QUEUE_CAPACITY["overload"] + INSTANCES * MAX_BATCH_SIZE
    n_conn = max_in_flight + health_rate
    bound = rss_warm + n_req * 4 * audio_bytes + n_conn * 64 * 1024 + 32 * MIB
    print(f"capacity {capacity:.2f} req/s; offering {rate} req/s ({args.factor:g}x) over REST for "
          f"{args.seconds:.0f} s, /health/live at {health_rate}/s", flush=True)
    print(f"peak RSS bound: {rss_warm / MIB:.1f} MiB warm + {n_req} requests x 4 x "
          f"{audio_bytes / 1024:.0f} KiB + {n_conn} connections x 64 KiB + 32 MiB = "
          f"{bound / MIB:.1f} MiB", flush=True)

    sampler = Sampler(server, interval=0.5)
    sampler.start()
    speech_path = os.path.join(workdir, "overload-rest.json")
    health_path = os.path.join(workdir, "overload-health.json")
    speech = voxbench(args.build, server.url, "rest", speech_path, "--rate", rate, "-d",
                      args.seconds, "--warmup", 0, "--max-in-flight", max_in_flight)
    health = voxbench(args.build, server.url, "rest", health_path, "--call", "health", "--rate",
                      health_rate, "-d", args.seconds, "--warmup", 0)
    speech_seconds = args.seconds + REQUEST_TIMEOUT_MS / 1000  # + the last requests' deadline
    speech_point = finish(speech, speech_path, speech_seconds)["points"][0]
    health_point = finish(health, health_path, args.seconds)["points"][0]
    sampler.stop()
    peak = proc_status(server.pid)["VmHWM"]

    failures = []
    rejected = speech_point["errors"].get("http_429", 0)
    other = {k: v for k, v in speech_point["errors"].items() if k != "http_429"}
    accepted = speech_point["ok"]
    if rejected == 0:
        failures.append("no request was rejected: the load did not overload the server")
    if accepted == 0:
        failures.append("no request was accepted")
    if other:
        failures.append(f"failures other than 429: {other}")
    if speech_point["latency_ms"]["max"] > REQUEST_TIMEOUT_MS:
        failures.append(f"an accepted request took {speech_point['latency_ms']['max']:.0f} ms, "
                        f"past its {REQUEST_TIMEOUT_MS} ms deadline")
    reject_p99 = speech_point["error_latency_ms"]["p99"]
    if reject_p99 > args.reject_p99_ms:
        failures.append(f"429 P99 {reject_p99:.1f} ms > {args.reject_p99_ms} ms")
    health_p99 = health_point["latency_ms"]["p99"]
    if health_point["errors"]:
        failures.append(f"/health/live failed: {health_point['errors']}")
    if health_p99 > args.health_p99_ms:
        failures.append(f"/health/live P99 {health_p99:.1f} ms > {args.health_p99_ms} ms")
    if peak > bound:
        failures.append(f"peak RSS {peak / MIB:.1f} MiB > bound {bound / MIB:.1f} MiB")

    report.update(
        capacity_rps=capacity, offered_rps=rate, duration_s=args.seconds,
        offered=speech_point["requests"], accepted=accepted, rejected=rejected,
        other_errors=other, accepted_p50_ms=speech_point["latency_ms"]["p50"],
        accepted_p99_ms=speech_point["latency_ms"]["p99"],
        accepted_max_ms=speech_point["latency_ms"]["max"], deadline_ms=REQUEST_TIMEOUT_MS,
        reject_p50_ms=speech_point["error_latency_ms"]["p50"], reject_p99_ms=reject_p99,
        health_probes=health_point["requests"], health_errors=health_point["errors"],
        health_p50_ms=health_point["latency_ms"]["p50"], health_p99_ms=health_p99,
        health_max_ms=health_point["latency_ms"]["max"],
        rss_warm_mib=round(rss_warm / MIB, 1), peak_rss_mib=round(peak / MIB, 1),
        peak_rss_bound_mib=round(bound / MIB, 1), longest_audio_kib=round(audio_bytes / 1024),
        max_in_flight_seen=sampler.max_in_flight, failures=failures)
    print(f"\noverload: {speech_point['requests']} requests completed in {args.seconds:.0f} s: "
          f"{accepted} accepted (P50 {report['accepted_p50_ms']:.0f} ms, P99 "
          f"{report['accepted_p99_ms']:.0f} ms, max {report['accepted_max_ms']:.0f} ms; deadline "
          f"{REQUEST_TIMEOUT_MS} ms), {rejected} rejected with 429 (P50 "
          f"{report['reject_p50_ms']:.1f} ms, P99 {reject_p99:.1f} ms; limit "
          f"{args.reject_p99_ms} ms), other errors {other or 0}")
    print(f"/health/live: {health_point['requests']} probes, errors {health_point['errors'] or 0}, "
          f"P50 {report['health_p50_ms']:.1f} ms, P99 {health_p99:.1f} ms (limit "
          f"{args.health_p99_ms} ms)")
    print(f"peak RSS {peak / MIB:.1f} MiB (bound {bound / MIB:.1f} MiB); most requests in flight "
          f"seen by /health: {sampler.max_in_flight}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["soak", "overload"])
    parser.add_argument("--build", default="build", help="build tree with bin/voxserve, voxbench")
    parser.add_argument("--seconds", type=float,
                        help="load duration (default: $SOAK_SECONDS or $OVERLOAD_SECONDS, else 60)")
    parser.add_argument("--probe-seconds", type=float, default=5)
    parser.add_argument("--load", type=float, default=0.7, help="soak: share of capacity")
    parser.add_argument("--factor", type=float, default=10, help="overload: times capacity")
    # 1 s: on 2 cores shared by the server and voxbench's hundreds of threads at 10x, the tail
    # is mostly the load generator's own scheduling (P50s stay under 1 ms on a quiet machine).
    parser.add_argument("--reject-p99-ms", type=float, default=1000)
    parser.add_argument("--health-p99-ms", type=float, default=1000)
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args()
    if args.seconds is None:
        args.seconds = float(os.environ.get(args.mode.upper() + "_SECONDS", 60))
    for tool in ("voxserve", "voxbench"):
        if not os.access(os.path.join(args.build, "bin", tool), os.X_OK):
            sys.exit(f"missing {args.build}/bin/{tool}: build first")

    report = {"mode": args.mode, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "cores": os.cpu_count(), "load_average": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="voxserve-soak-") as workdir:
        server = Server(os.path.join(args.build, "bin", "voxserve"), workdir, args.mode)
        try:
            run = run_soak if args.mode == "soak" else run_overload
            failures = run(args, server, workdir, report)
        finally:
            code = server.stop()
        if code != 0:
            failures.append(f"voxserve exited with {code}:\n" + open(server.log_path).read())
    report["failures"] = failures
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
