"""What the integration tests read from a running server besides its answers: metric samples,
requests in flight, its worker processes, and polling for a condition."""
import os
import time

import requests


def metric(server, name, labels=""):
    """The value of one sample from /metrics (0 when absent)."""
    prefix = name + (("{" + labels + "}") if labels else "")
    for line in requests.get(server.url + "/metrics", timeout=10).text.splitlines():
        if line.startswith(prefix + " "):
            return float(line.split()[-1])
    return 0.0


def in_flight(server):
    return requests.get(server.url + "/health", timeout=5).json()["in_flight"]


def workers_of(server, engine=None):
    """Pids of the server's live worker processes (children running `--worker`); with `engine`,
    only those whose worker spec names it (another model beside it has workers of its own)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                args = cmdline.read().split(b"\0")
        except OSError:
            continue
        state, ppid = fields[0], int(fields[1])
        if ppid == server.process.pid and b"--worker" in args and state != "Z" and (
                engine is None or engine.encode() in b" ".join(args)):
            pids.append(int(entry))
    return sorted(pids)


def wait_for(condition, timeout=20.0, interval=0.02):
    """True once condition() is, False if it never is within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False


def small_sanitizer_quarantine():
    """Environment for a server whose peak RSS a test bounds: under AddressSanitizer freed memory
    waits in a quarantine (256 MB) before reuse, so the peak would count every reply ever made,
    not the ones held. A 4 MB quarantine keeps the measure honest (no effect without ASan)."""
    return {"ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                                   "quarantine_size_mb=4"]))}


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
