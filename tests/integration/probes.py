"""What the integration tests read from a running server besides its answers: metric samples,
requests in flight, its worker processes, and polling for a condition."""
import os
import socket
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


def live_processes():
    """(pid, parent pid, argv as bytes) of every process that is not a zombie."""
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
        if fields[0] != "Z":
            yield int(entry), int(fields[1]), args


def workers_of(server, engine=None):
    """Pids of the server's live worker processes (children running `--worker`); with `engine`,
    only those whose worker spec names it (another model beside it has workers of its own)."""
    return sorted(pid for pid, ppid, args in live_processes()
                  if ppid == server.process.pid and b"--worker" in args and
                  (engine is None or engine.encode() in b" ".join(args)))


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


def stingy_socket(port):
    """A connection to `port` with a 4 KiB receive buffer: a client that takes almost nothing in."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    return sock


def send_until_held_back(sock, unit, most):
    """Sends `unit` up to `most` times and reads nothing; stops once the server has taken nothing
    for a second (it stopped reading and TCP holds us back). Answers how many went."""
    sock.setblocking(False)
    sent, refused_since = 0, None
    while sent < most:
        try:
            view = memoryview(unit)
            while view:
                view = view[sock.send(view):]
            sent += 1
            refused_since = None
        except BlockingIOError:
            refused_since = refused_since or time.monotonic()
            if time.monotonic() - refused_since > 1:
                break
            time.sleep(0.01)
        except (BrokenPipeError, ConnectionResetError):
            break  # cut off already
    return sent
