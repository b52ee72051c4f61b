"""A real PostgreSQL server for tests (Debian's `postgresql` package): initdb in a temporary
directory, run as an unprivileged user (PostgreSQL refuses root: `nobody` when the tests run as
root), listening on a free loopback port only, trust authentication, torn down with the test.
Used by test_voice_postgres.py and bench/voice_store_bench.py."""
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def postgres_bin_dir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not found:
        raise RuntimeError("PostgreSQL is not installed (scripts/install-deps.sh installs it)")
    return os.path.dirname(found[-1])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


class Postgres:
    """One PostgreSQL cluster. start()/kill() may be repeated: the data directory stays."""

    def __init__(self, user="voxserve"):
        self.bin = postgres_bin_dir()
        self.root = tempfile.mkdtemp(prefix="voxserve-pg-")
        self.data = os.path.join(self.root, "data")
        self.user = user
        self.port = free_port()
        self.process = None
        self.log_path = os.path.join(self.root, "postgres.log")
        self._as_user = None
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.root, nobody.pw_uid, nobody.pw_gid)
            self._as_user = (nobody.pw_uid, nobody.pw_gid)
        self._run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", user,
                   "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])

    @property
    def dsn(self):
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres"

    def _demote(self):
        if self._as_user:
            os.setgid(self._as_user[1])
            os.setuid(self._as_user[0])

    def _run(self, args):
        result = subprocess.run(args, preexec_fn=self._demote, capture_output=True, text=True,
                                cwd=self.root, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({result.returncode}):\n{result.stderr}")
        return result.stdout

    def start(self, timeout=60):
        log = open(self.log_path, "a")
        # fsync off: the tests kill the server process, never the machine, so the page cache
        # keeps every committed write; no Unix socket, loopback TCP only.
        self.process = subprocess.Popen(
            [os.path.join(self.bin, "postgres"), "-D", self.data, "-p", str(self.port),
             "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
             "-c", "fsync=off", "-c", "max_connections=50"],
            preexec_fn=self._demote, stdout=log, stderr=log, cwd=self.root)
        log.close()
        deadline = time.monotonic() + timeout
        while True:  # waits for a state (accepting connections), not for time to pass
            ready = subprocess.run([os.path.join(self.bin, "pg_isready"), "-q", "-h", "127.0.0.1",
                                    "-p", str(self.port)])
            if ready.returncode == 0:
                return self
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("PostgreSQL did not start:\n" + self.log())
            time.sleep(0.05)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def sql(self, statement):
        """Runs one statement with psql; returns its rows as lists of strings."""
        out = self._run([os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-F", "\t",
                         "-v", "ON_ERROR_STOP=1", "-d", self.dsn, "-c", statement])
        return [line.split("\t") for line in out.splitlines() if line]

    def _children(self):
        children = []
        for task in glob.glob(f"/proc/{self.process.pid}/task/*/children"):
            with open(task) as f:
                children += [int(pid) for pid in f.read().split()]
        return children

    def _signal_all(self, signum):
        for pid in [self.process.pid] + self._children():
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    def freeze(self):
        """SIGSTOP to the postmaster and its backends: a paused VM, or a node that stops
        answering while the kernel keeps TCP open and acknowledged."""
        self._signal_all(signal.SIGSTOP)

    def thaw(self):
        self._signal_all(signal.SIGCONT)

    def kill(self):
        """SIGKILL, the postmaster and its backends alike (a crash, no shutdown)."""
        if self.process is None or self.process.poll() is not None:
            return
        children = self._children()
        for pid in children + [self.process.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(timeout=30)
        # Every process gone (dead or a zombie) before a restart may take the port and data.
        deadline = time.monotonic() + 30
        for pid in children:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.02)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def remove(self):
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
