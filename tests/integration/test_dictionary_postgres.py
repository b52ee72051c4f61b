"""Pronunciation dictionaries shared through PostgreSQL (dictionaries.backend: postgres,
docs/pronunciation-dictionaries.md) against a real PostgreSQL that the test starts
(postgres_support.py): two servers on one database see each other's additions, new versions and
deletions at once (a locator on one speaks the rules added on the other: the audio's bytes equal
those of the alias text, as in test_pronunciation_dictionaries.py), concurrent add-rules on both
lose no rule, restarts lose nothing, and a database down at startup degrades /health until it
comes back. The servers share the voices' connection settings (voices.postgres.*) while cloned
voices stay off: one database for the whole registry, each part switched on by itself."""
import concurrent.futures
import threading

import pytest
import requests

from postgres_support import Postgres
from test_pronunciation_dictionaries import API, alias, locator, speak
from test_voice_postgres import health, wait_for

# How long a change on one replica may take to reach the other (LISTEN/NOTIFY: milliseconds;
# the margin is for a loaded CI machine, far below voices.postgres.resync_ms).
PROPAGATION_S = 2.0


@pytest.fixture
def postgres():
    pg = Postgres().start()
    yield pg
    pg.remove()


def start(make_server, pg, *extra):
    return make_server("--dictionaries-backend", "postgres", "--voices-postgres-dsn", pg.dsn,
                       *extra)


def wait_connected(server, timeout=30):
    wait_for(lambda: health(server).get("dictionaries", {}).get("status") == "ok", timeout,
             "the dictionary store to connect:\n" + server.log())


def started(make_server, pg, count=2):
    servers = [start(make_server, pg) for _ in range(count)]
    for server in servers:
        wait_connected(server)
    return servers


def add(server, rules, name="terms"):
    response = requests.post(server.url + API + "/add-from-rules",
                             json={"name": name, "rules": rules}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def get(server, dictionary_id):
    return requests.get(f"{server.url}{API}/{dictionary_id}", timeout=10)


def listed(server):
    return [d["id"] for d in requests.get(server.url + API, timeout=10).json()
            ["pronunciation_dictionaries"]]


def add_rules(server, dictionary_id, rules):
    response = requests.post(f"{server.url}{API}/{dictionary_id}/add-rules",
                             json={"rules": rules}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_server_creates_its_own_schema_beside_the_voices(make_server, postgres):
    (server,) = started(make_server, postgres, 1)
    assert postgres.sql("SELECT version FROM voxserve_dictionary_schema") == [["1"]]
    assert postgres.sql("SELECT count(*) FROM voxserve_dictionaries") == [["0"]]
    assert health(server)["dictionaries"] == {"backend": "postgres", "status": "ok"}
    assert health(server)["status"] == "ready"

    added = add(server, [alias("WWW", "World Wide Web")])
    rows = postgres.sql("SELECT id, revision, bytes = octet_length(body), "
                        "body::json->>'name' FROM voxserve_dictionaries")
    assert rows == [[added["id"], "1", "t", "terms"]]


def test_a_change_on_one_server_is_seen_by_the_other_at_once(make_server, postgres):
    a, b = started(make_server, postgres)
    text = "Visit WWW today."
    first = add(a, [alias("WWW", "World Wide Web")])
    wait_for(lambda: first["id"] in listed(b), PROPAGATION_S, "server B to list A's dictionary")
    assert speak(b, text, pronunciation_dictionary_locators=[locator(first["id"])]) == \
        speak(b, "Visit World Wide Web today.")

    changed = add_rules(b, first["id"], [alias("WWW", "the web")])
    assert changed["version_id"] != first["version_id"]
    wait_for(lambda: get(a, first["id"]).json()["latest_version_id"] == changed["version_id"],
             PROPAGATION_S, "server A to see B's new version")
    assert speak(a, text, pronunciation_dictionary_locators=[locator(first["id"])]) == \
        speak(a, "Visit the web today.")
    pinned = [locator(first["id"], first["version_id"])]
    assert speak(a, text, pronunciation_dictionary_locators=pinned) == \
        speak(a, "Visit World Wide Web today.")

    deleted = requests.delete(f"{a.url}{API}/{first['id']}", timeout=10)
    assert deleted.status_code == 200, deleted.text
    wait_for(lambda: get(b, first["id"]).status_code == 404, PROPAGATION_S,
             "server B to forget the deleted dictionary")
    refused = requests.post(b.url + "/v1/audio/speech", timeout=30, json={
        "model": "tts-1", "input": text, "voice": "en-us",
        "pronunciation_dictionary_locators": [locator(first["id"])]})
    assert refused.status_code == 404 and \
        refused.json()["error"]["code"] == "dictionary_not_found", refused.text


def test_add_rules_on_both_servers_at_once_lose_no_rule(make_server, postgres):
    a, b = started(make_server, postgres)
    dictionary = add(a, [alias("start", "begin")])
    wait_for(lambda: dictionary["id"] in listed(b), PROPAGATION_S, "server B to list it")
    rounds = 8
    gate = threading.Barrier(2)

    def writer(server, tag):
        for i in range(rounds):
            gate.wait()
            add_rules(server, dictionary["id"], [alias(f"{tag}{i}", f"word {tag} {i}")])

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(writer, a, "a"), pool.submit(writer, b, "b")]:
            done.result()
    expected = {"start"} | {f"{tag}{i}" for tag in "ab" for i in range(rounds)}
    versions = set()
    for server in (a, b):
        wait_for(lambda server=server: {r["string_to_replace"] for r in
                                        get(server, dictionary["id"]).json()["rules"]} == expected,
                 PROPAGATION_S, "every rule on every server")
        versions.add(get(server, dictionary["id"]).json()["latest_version_id"])
    assert len(versions) == 1  # both name the same latest version
    assert postgres.sql(f"SELECT revision FROM voxserve_dictionaries "
                        f"WHERE id = '{dictionary['id']}'") == [[str(1 + 2 * rounds)]]


def test_restarting_both_servers_loses_nothing(make_server, postgres):
    a, b = started(make_server, postgres)
    first = add(a, [alias("WWW", "World Wide Web")], name="one")
    second = add(b, [alias("UN", "United Nations")], name="two")
    wait_for(lambda: first["id"] in listed(b), PROPAGATION_S, "server B to list A's dictionary")
    changed = add_rules(b, first["id"], [alias("WWW", "the web")])
    expected = sorted([first["id"], second["id"]])
    assert a.stop() == 0 and b.stop() == 0

    a, b = started(make_server, postgres)
    for server in (a, b):
        assert sorted(listed(server)) == expected
        assert get(server, first["id"]).json()["latest_version_id"] == changed["version_id"]
        pinned = [locator(first["id"], first["version_id"])]
        assert speak(server, "WWW.", pronunciation_dictionary_locators=pinned) == \
            speak(server, "World Wide Web.")


def test_a_database_down_at_startup_degrades_and_then_recovers(make_server):
    pg = Postgres()  # initialized, not started: its port refuses connections
    try:
        server = start(make_server, pg)
        state = health(server)
        assert state["status"] == "degraded", state
        assert state["dictionaries"]["status"] == "unavailable" and state["dictionaries"]["error"]
        refused = requests.post(server.url + API + "/add-from-rules", timeout=10,
                                json={"name": "early", "rules": [alias("WWW", "web")]})
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "dictionary_store_unavailable"
        assert int(refused.headers["Retry-After"]) >= 1
        assert listed(server) == []  # reads answer from memory
        assert speak(server, "Hello.")  # dictionary-free synthesis works

        pg.start()
        wait_connected(server)  # reconnects on its own (backoff)
        assert health(server)["status"] == "ready"
        add(server, [alias("WWW", "web")], name="early")
    finally:
        pg.remove()
