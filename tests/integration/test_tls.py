"""HTTPS and mutual TLS with certificates made here by the openssl CLI: curl and requests with
and without client certificates, TLS 1.1 refused, plain HTTP to the TLS port answered cleanly,
the client certificate's subject as a credential, and certificate reload without dropped
connections."""
import http.client
import shutil
import signal
import socket
import ssl
import subprocess
import warnings

import pytest
import requests

from security_support import Pki, speech_body, start_tls_server, wait_for, write_keys

KEY = "sk-tls-0123456789abcdef"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    authority = Pki(tmp_path_factory.mktemp("pki"))
    authority.client = authority.issue("client", "/CN=alice-client/O=Example")
    authority.bob = authority.issue("bob", "/C=DE/O=Example/CN=bob-client")
    rogue = Pki(tmp_path_factory.mktemp("rogue"), ca_name="rogue-ca")
    authority.rogue_client = rogue.issue("rogue-client", "/CN=alice-client/O=Example")
    return authority


@pytest.fixture(scope="module")
def optional_mtls(voxserve_bin, pki, tmp_path_factory):
    """Client certificates optional; API keys on, one of them granted to alice's certificate."""
    keys = write_keys(tmp_path_factory.mktemp("tls-keys") / "keys.yaml", [
        {"name": "by-key", "key": KEY},
        {"name": "alice-cert", "client_subject": pki.subject_of(pki.client[0])},
        # As docs/operations.md writes subjects (most significant last, spaces), not OpenSSL's RFC 2253
        # "CN=bob-client,O=Example,C=DE" order: matching parses both into attribute sets.
        {"name": "bob-cert", "client_subject": "O=Example, CN=bob-client, C=DE"},
    ])
    instance = start_tls_server(voxserve_bin, pki, "--tls-client-ca-file", pki.ca,
                                "--tls-client-auth", "optional", "--api-keys-file", keys)
    yield instance
    assert instance.stop() == 0, instance.log()


@pytest.fixture(scope="module")
def required_mtls(voxserve_bin, pki):
    instance = start_tls_server(voxserve_bin, pki, "--tls-client-ca-file", pki.ca,
                                "--tls-client-auth", "require", client_cert=pki.client)
    yield instance
    assert instance.stop() == 0, instance.log()


def curl(*args):
    return subprocess.run(["curl", "-sS", "--max-time", "20", *args], capture_output=True,
                          text=True, timeout=30)


def test_requests_over_https_with_a_key(optional_mtls, pki):
    response = requests.post(optional_mtls.https + "/v1/audio/speech", json=speech_body(),
                             headers={"Authorization": f"Bearer {KEY}"}, verify=pki.ca, timeout=30)
    assert response.status_code == 200, response.text
    assert len(response.content) > 1000


def test_curl_over_https_with_and_without_a_key(optional_mtls, pki):
    url = optional_mtls.https + "/v1/audio/speech"
    body = ["-H", "Content-Type: application/json", "-d",
            '{"model":"tts-1","input":"Hi.","voice":"alloy"}']
    ok = curl("--cacert", pki.ca, "-o", "/dev/null", "-w", "%{http_code}", "-H",
              f"x-api-key: {KEY}", *body, url)
    assert ok.returncode == 0 and ok.stdout == "200", ok.stderr
    refused = curl("--cacert", pki.ca, "-o", "/dev/null", "-w", "%{http_code}", *body, url)
    assert refused.returncode == 0 and refused.stdout == "401", refused.stderr


def test_client_certificate_subject_is_a_credential(optional_mtls, pki):
    url = optional_mtls.https + "/v1/voices"
    with_cert = requests.get(url, verify=pki.ca, cert=pki.client, timeout=10)
    assert with_cert.status_code == 200, with_cert.text
    request_id = with_cert.headers["X-Request-Id"]
    line = wait_for(lambda: next((l for l in optional_mtls.log_lines if request_id in l), None),
                    message="the request's log line")
    assert "key=alice-cert" in line and "CN=alice-client" in line
    assert requests.get(url, verify=pki.ca, timeout=10).status_code == 401


def test_client_subject_matches_in_any_attribute_order(optional_mtls, pki):
    assert pki.subject_of(pki.bob[0]) == "CN=bob-client,O=Example,C=DE"  # what the server sees
    response = requests.get(optional_mtls.https + "/v1/voices", verify=pki.ca, cert=pki.bob,
                            timeout=10)
    assert response.status_code == 200, response.text
    request_id = response.headers["X-Request-Id"]
    line = wait_for(lambda: next((l for l in optional_mtls.log_lines if request_id in l), None),
                    message="the request's log line")
    assert "key=bob-cert" in line, line


def test_curl_with_a_client_certificate(optional_mtls, pki):
    cert, key = pki.client
    result = curl("--cacert", pki.ca, "--cert", cert, "--key", key, optional_mtls.https + "/v1/voices")
    assert result.returncode == 0 and '"object":"list"' in result.stdout, result.stderr


def test_a_certificate_from_another_ca_fails_the_handshake(optional_mtls, pki):
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(optional_mtls.https + "/health/live", verify=pki.ca,
                     cert=pki.rogue_client, timeout=10)
    assert requests.get(optional_mtls.https + "/health/live", verify=pki.ca, timeout=10).ok


def tls_handshake(port, version, cafile):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    with warnings.catch_warnings():  # TLSVersion.TLSv1_1 is deprecated: that is the point
        warnings.simplefilter("ignore", DeprecationWarning)
        context.minimum_version = context.maximum_version = version
    context.set_ciphers("DEFAULT@SECLEVEL=0")  # let this client offer TLS 1.1 at all
    context.load_verify_locations(cafile)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.version()


def tls_1_1_version():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ssl.TLSVersion.TLSv1_1


def test_tls_1_1_is_refused_1_2_accepted(optional_mtls, pki):
    with pytest.raises(ssl.SSLError) as refused:
        tls_handshake(optional_mtls.port, tls_1_1_version(), pki.ca)
    # The server's alert, not the client declining to try.
    assert "PROTOCOL_VERSION" in str(refused.value).upper().replace(" ", "_"), refused.value
    assert tls_handshake(optional_mtls.port, ssl.TLSVersion.TLSv1_2, pki.ca) == "TLSv1.2"
    assert tls_handshake(optional_mtls.port, ssl.TLSVersion.TLSv1_3, pki.ca) == "TLSv1.3"
    curl_result = curl("--cacert", pki.ca, "--tlsv1.1", "--tls-max", "1.1",
                       optional_mtls.https + "/health/live")
    assert curl_result.returncode != 0


def test_plain_http_to_the_tls_port_gets_a_clean_400(optional_mtls, pki):
    response = requests.get(f"http://127.0.0.1:{optional_mtls.port}/health/live", timeout=10)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "tls_required"
    assert response.headers["Connection"] == "close"
    # Garbage that is neither HTTP nor TLS is dropped too, and the server keeps serving.
    with socket.create_connection(("127.0.0.1", optional_mtls.port), timeout=10) as raw:
        raw.sendall(b"\x00\x01\x02 not a protocol\r\n\r\n")
        raw.recv(4096)
    assert requests.get(optional_mtls.https + "/health/live", verify=pki.ca, timeout=10).ok


def test_required_client_certificate(required_mtls, pki):
    url = required_mtls.https + "/health/live"
    assert requests.get(url, verify=pki.ca, cert=pki.client, timeout=10).ok
    with pytest.raises((requests.exceptions.SSLError, requests.exceptions.ConnectionError)):
        requests.get(url, verify=pki.ca, timeout=10)
    cert, key = pki.client
    assert curl("--cacert", pki.ca, "--cert", cert, "--key", key, url).returncode == 0
    assert curl("--cacert", pki.ca, url).returncode != 0
    failures = requests.get(required_mtls.https + "/metrics", verify=pki.ca, cert=pki.client,
                            timeout=10).text
    assert 'voxserve_tls_handshake_failures_total{reason="handshake"}' in failures


def served_certificate_serial(port, pki):
    context = ssl.create_default_context(cafile=pki.ca)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.getpeercert()["serialNumber"]


def test_sighup_reloads_the_certificate_without_dropping_connections(voxserve_bin, pki):
    instance = start_tls_server(voxserve_bin, pki)
    try:
        before = served_certificate_serial(instance.port, pki)
        context = ssl.create_default_context(cafile=pki.ca)
        kept = http.client.HTTPSConnection("127.0.0.1", instance.port, context=context, timeout=10)
        kept.request("GET", "/health/live")
        assert kept.getresponse().read() == b'{"status":"live"}'

        # Rotate: a new certificate in the same files, then SIGHUP.
        cert, key = pki.issue("rotated", "/CN=localhost", server=True)
        shutil.copy(cert, pki.path("server.pem"))
        shutil.copy(key, pki.path("server.key"))
        instance.process.send_signal(signal.SIGHUP)
        wait_for(lambda: served_certificate_serial(instance.port, pki) != before,
                 message="new connections to get the new certificate")

        kept.request("GET", "/health/live")  # the old connection lives on
        assert kept.getresponse().read() == b'{"status":"live"}'
        kept.close()
        assert instance.stop() == 0
    finally:
        instance.kill()
