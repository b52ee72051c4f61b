"""Helpers for the security and operations tests: test certificates (openssl CLI), API key files,
servers with TLS, and polling."""
import json
import os
import socket
import subprocess
import time

import requests

from conftest import VoxServer


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


class Pki:
    """A throwaway CA with a server certificate for 127.0.0.1/localhost and client certificates."""

    def __init__(self, directory, ca_name="voxserve-test-ca"):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.ca_name = ca_name
        self.ca = self.path(ca_name + ".pem")
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-keyout", self.path(ca_name + ".key"), "-out", self.ca,
                "-subj", f"/CN={ca_name}", cwd=self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def issue(self, name, subject, server=False):
        """Signs a certificate; returns (cert path, key path)."""
        key, csr, cert = (self.path(name + suffix) for suffix in (".key", ".csr", ".pem"))
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                "-subj", subject, cwd=self.dir)
        extensions = self.path(name + ".ext")
        with open(extensions, "w") as out:
            if server:
                out.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                          "extendedKeyUsage=serverAuth\n")
            else:
                out.write("extendedKeyUsage=clientAuth\n")
        openssl("x509", "-req", "-in", csr, "-CA", self.ca,
                "-CAkey", self.path(self.ca_name + ".key"), "-CAcreateserial", "-days", "2",
                "-out", cert, "-extfile", extensions, cwd=self.dir)
        return cert, key

    def subject_of(self, cert):
        """The subject as voxserve reports it (RFC 2253)."""
        result = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-subject",
                                 "-nameopt", "RFC2253"], capture_output=True, text=True,
                                check=True)
        return result.stdout.strip().removeprefix("subject=")


def write_keys(path, keys):
    """A keys file; JSON is YAML, so no YAML library is needed."""
    with open(path, "w") as out:
        json.dump({"keys": keys}, out)
    return str(path)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(predicate, timeout=10, interval=0.05, message="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {message}")


def start_tls_server(voxserve_bin, pki, *args, client_cert=None):
    """A voxserve serving HTTPS with the PKI's server certificate, once ready. `client_cert`
    (cert, key) is what the readiness probe presents, for servers that require one."""
    cert, key = pki.issue("server", "/CN=localhost", server=True)
    instance = VoxServer(voxserve_bin, ["--tls-cert-file", cert, "--tls-key-file", key, *args])
    instance.start(wait_ready=False)
    instance.https = f"https://127.0.0.1:{instance.port}"

    def ready():
        try:
            return requests.get(instance.https + "/health/ready", verify=pki.ca, cert=client_cert,
                                timeout=2).ok
        except requests.RequestException:
            return False

    try:
        wait_for(ready, timeout=60, message="the TLS server to become ready")
    except AssertionError:
        instance.kill()
        raise
    return instance


def speech_body(text="Hello there.", **fields):
    return {"model": "tts-1", "input": text, "voice": "alloy", "response_format": "wav", **fields}
