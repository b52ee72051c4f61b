"""What the integration tests read from a running server besides its answers: metric samples,
requests in flight, and polling for a condition."""
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


def wait_for(condition, timeout=20.0, interval=0.02):
    """True once condition() is, False if it never is within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False
