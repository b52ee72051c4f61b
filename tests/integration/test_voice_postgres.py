"""The shared voice registry (voices.backend: postgres, docs/voice-cloning.md) against a real
PostgreSQL that the test starts (postgres_support.py): the schema the server creates, the bounds,
two servers sharing one registry (one name registered at once on both: one 200, one 409; a
deletion on one seen by the other within 1 s), restarts losing nothing, the database failing:
down at startup, killed (SIGKILL) in the middle of a registration, back again, frozen (SIGSTOP:
calls answer 503 within voices.postgres.statement_timeout_ms, kept on the client), and a server
stopped (SIGSTOP) in the middle of a registration, holding the registration lock, which the
database takes back within voices.postgres.idle_in_transaction_timeout_ms.

As in test_voice_cloning.py the servers run with `voices.test_cloner: true` (a deterministic
stand-in profile of family "test"); espeak speaks no cloned voices, so synthesis with a known
cloned voice answers 501 naming it, after its profile was loaded (a 404 voice_not_found means the
server does not know it)."""
import concurrent.futures
import signal
import threading
import time

import pytest
import requests

from postgres_support import Postgres
from test_voice_cloning import SAMPLE, register

VOICES = "/v1/audio/voices"


@pytest.fixture
def postgres():
    pg = Postgres().start()
    yield pg
    pg.remove()


def start(make_server, pg, *extra, env=None):
    server = make_server("--voices-backend", "postgres", "--voices-postgres-dsn", pg.dsn,
                         "--voices-test-cloner", "true", *extra, env=env)
    return server


def health(server):
    return requests.get(server.url + "/health", timeout=10).json()


def wait_for(predicate, timeout, what):
    """Polls an observable state (the server's answers) until it holds; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def wait_connected(server, timeout=30):
    wait_for(lambda: health(server).get("voices", {}).get("status") == "ok", timeout,
             "the voice store to connect:\n" + server.log())


def voice_ids(server):
    return sorted(v["id"] for v in requests.get(server.url + VOICES, timeout=10).json()["data"])


def speak(server, voice):
    return requests.post(server.url + "/v1/audio/speech", timeout=30,
                         json={"model": "espeak", "input": "Hello.", "voice": voice})


def test_the_server_creates_a_versioned_schema_and_stores_profiles_as_bytea(make_server, postgres):
    server = start(make_server, postgres)
    wait_connected(server)
    assert postgres.sql("SELECT version FROM voxserve_schema") == [["2"]]
    columns = dict(postgres.sql("SELECT column_name, data_type FROM information_schema.columns "
                                "WHERE table_name = 'voxserve_voices'"))
    assert columns["profile"] == "bytea" and columns["created_at"] == "bigint"

    created = register(server, "Alice")
    assert created.status_code == 200, created.text
    voice = created.json()
    rows = postgres.sql("SELECT id, name, model, octet_length(profile), bytes, "
                        "encode(substring(profile from 1 for 8), 'hex') FROM voxserve_voices")
    assert rows == [[voice["id"], "Alice", "espeak", str(voice["bytes"]), str(voice["bytes"]),
                     b"VXVOICE\n".hex()]]
    assert health(server)["status"] == "ready"
    assert health(server)["voices"] == {"backend": "postgres", "status": "ok"}

    # A second server migrates nothing twice; a schema newer than the server is refused clearly.
    other = start(make_server, postgres)
    wait_connected(other)
    assert voice_ids(other) == [voice["id"]]
    assert postgres.sql("SELECT version FROM voxserve_schema") == [["2"]]
    postgres.sql("UPDATE voxserve_schema SET version = 99")
    newer = start(make_server, postgres)
    state = wait_for(lambda: (lambda h: h if "version 99" in h["voices"].get("error", "") else None)(
        health(newer)), 30, "the newer schema to be reported")
    assert state["status"] == "degraded" and state["voices"]["status"] == "unavailable"


def test_names_that_read_the_same_are_one_name_and_schema_1_keys_are_rewritten(make_server,
                                                                                 postgres):
    """Names compare after NFKC with case folding (issue 39). A registry written by schema 1
    (keys in ASCII lower case, so look-alikes could both register) is migrated: its keys are
    rewritten, both look-alike voices stay listed, the oldest keeps the name."""
    # Schema 1 as an older server left it: two voices whose names read the same (the second a
    # copy of the first's row, keyed as schema 1 keyed it).
    first = start(make_server, postgres)
    wait_connected(first)
    older = register(first, "\u00e9cho").json()["id"]
    younger = "voice_" + "f" * 24
    postgres.sql("INSERT INTO voxserve_voices SELECT '{}', model, 'e\u0301cho', 'e\u0301cho', "
                 "family, transcript, created_at + 1, prompt_seconds, bytes, profile "
                 "FROM voxserve_voices WHERE id = '{}'".format(younger, older))
    postgres.sql("UPDATE voxserve_schema SET version = 1")
    server = start(make_server, postgres)
    wait_connected(server)
    assert postgres.sql("SELECT version FROM voxserve_schema") == [["2"]]
    keys = dict(postgres.sql("SELECT id, replace(name_key, E'\\n', '|') FROM voxserve_voices"))
    assert keys[older] == "\u00e9cho", keys
    assert keys[younger] == "\u00e9cho|" + younger, keys  # unique, names no voice
    assert voice_ids(server) == sorted([older, younger])
    assert any("named like an older voice" in line for line in server.log_lines), server.log()
    # The name resolves to the oldest: synthesis reaches its profile (501: espeak speaks no
    # cloned voice; a 404 would mean the name is unknown).
    assert speak(server, "e\u0301cho").status_code == 501

    # New registrations: a look-alike of a known name is refused, here and in the database.
    for name, look_alike in (("Race2", "\uff32ace2"), ("Stra\u00dfe", "STRASSE")):
        assert register(server, name).status_code == 200
        refused = register(server, look_alike)
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "voice_name_taken"
    other = start(make_server, postgres)
    wait_connected(other)
    assert register(other, "\u00c9CHO").status_code == 409
    assert sorted(r[0] for r in postgres.sql("SELECT name_key FROM voxserve_voices "
                                             "WHERE id NOT IN ('{}', '{}')".format(older, younger))) \
        == ["race2", "strasse"]


def test_the_bounds_hold_across_servers(make_server, postgres):
    a = start(make_server, postgres, "--voices-max-count", "2", "--voices-max-upload-bytes", "40000")
    b = start(make_server, postgres, "--voices-max-count", "2", "--voices-max-upload-bytes", "40000")
    wait_connected(a)
    wait_connected(b)
    assert register(a, "one").status_code == 200
    assert register(a, "two").status_code == 200
    full = register(b, "three")
    assert full.status_code == 507 and full.json()["error"]["code"] == "voice_limit_reached"
    big = register(b, "big", audio=SAMPLE + b"\0" * 10000)
    assert big.status_code == 413, big.text
    assert len(postgres.sql("SELECT id FROM voxserve_voices")) == 2

    # Bytes: a row another writer left holds nearly all of voices.max_bytes (1 MiB here).
    postgres.sql("DELETE FROM voxserve_voices")
    postgres.sql("INSERT INTO voxserve_voices VALUES ('voice_000000000000000000000001', 'espeak', "
                 "'fat', 'fat', 'test', '', 0, 1.0, 1048570, decode(repeat('00', 1048570), 'hex'))")
    c = start(make_server, postgres, "--voices-max-bytes", "1048576")
    wait_connected(c)
    too_big = register(c, "small")
    assert too_big.status_code == 507 and too_big.json()["error"]["code"] == "voice_storage_full"
    assert [r[0] for r in postgres.sql("SELECT name FROM voxserve_voices")] == ["fat"]


def test_two_servers_registering_one_name_at_once_one_wins(make_server, postgres):
    a = start(make_server, postgres)
    b = start(make_server, postgres)
    wait_connected(a)
    wait_connected(b)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for round_ in range(8):
            name = f"Contested {round_}"
            gate = threading.Barrier(2)

            def race(server, name=name, gate=gate):
                gate.wait()
                return register(server, name)

            answers = list(pool.map(race, [a, b]))
            codes = sorted(r.status_code for r in answers)
            assert codes == [200, 409], [r.text for r in answers]
            loser = next(r for r in answers if r.status_code == 409)
            assert loser.json()["error"]["code"] == "voice_name_taken"
    names = sorted(r[0] for r in postgres.sql("SELECT name FROM voxserve_voices"))
    assert names == sorted(f"Contested {i}" for i in range(8))
    wait_for(lambda: voice_ids(a) == voice_ids(b) and len(voice_ids(a)) == 8, 5,
             "both servers to list the 8 voices")


def test_a_registration_and_a_deletion_reach_the_other_server(make_server, postgres):
    a = start(make_server, postgres)
    b = start(make_server, postgres)
    wait_connected(a)
    wait_connected(b)
    voice = register(a, "Shared").json()
    wait_for(lambda: voice_ids(b) == [voice["id"]], 1.0, "server B to see the registration")
    for server in (a, b):  # both know it by id and by name: its profile loads on each
        for name in (voice["id"], "shared"):
            answer = speak(server, name)
            assert answer.status_code == 501 and voice["id"] in answer.text, answer.text

    deleted = requests.delete(a.url + VOICES + "/" + voice["id"], timeout=10)
    assert deleted.status_code == 200, deleted.text
    started = time.monotonic()
    wait_for(lambda: requests.get(b.url + VOICES + "/" + voice["id"], timeout=10).status_code == 404,
             1.0, "server B to forget the deleted voice")
    elapsed = time.monotonic() - started
    gone = speak(b, "shared")
    assert gone.json()["error"]["code"] == "voice_not_found", gone.text
    assert elapsed < 1.0
    metrics = requests.get(b.url + "/metrics", timeout=10).text
    assert 'voxserve_voice_store_notifications_total{backend="postgres"}' in metrics
    assert 'voxserve_voice_profile_cache_total{result="hit"}' in metrics
    assert 'voxserve_voice_store_operation_seconds_count{backend="postgres",operation="resync"}' \
        in metrics


def test_restarting_both_servers_loses_nothing(make_server, postgres):
    a = start(make_server, postgres)
    b = start(make_server, postgres)
    wait_connected(a)
    wait_connected(b)
    ids = sorted([register(a, "one").json()["id"], register(b, "two").json()["id"],
                  register(a, "three").json()["id"]])
    assert a.stop() == 0 and b.stop() == 0
    a = start(make_server, postgres)
    b = start(make_server, postgres)
    wait_connected(a)
    wait_connected(b)
    assert voice_ids(a) == ids and voice_ids(b) == ids
    assert register(b, "ONE").status_code == 409


def test_a_database_down_at_startup_degrades_and_then_recovers(make_server):
    pg = Postgres()  # initialized, not started: its port refuses connections
    try:
        server = start(make_server, pg)
        state = health(server)
        assert state["status"] == "degraded", state
        assert state["voices"]["status"] == "unavailable" and state["voices"]["error"]
        refused = register(server, "early")
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "voice_store_unavailable"
        assert int(refused.headers["Retry-After"]) >= 1
        assert speak(server, "alloy").status_code == 200  # voice-free synthesis works
        assert requests.get(server.url + VOICES, timeout=10).json()["data"] == []

        pg.start()
        wait_connected(server)  # reconnects on its own (backoff)
        assert health(server)["status"] == "ready"
        assert register(server, "early").status_code == 200
    finally:
        pg.remove()


def test_the_database_killed_mid_registration_leaves_nothing_and_recovers(make_server, postgres):
    a = start(make_server, postgres)
    # TEST ONLY: its registrations wait before COMMIT until the connection breaks.
    held = start(make_server, postgres, env={"VOXSERVE_TEST_PG_HOLD_COMMIT": "1"})
    wait_connected(a)
    wait_connected(held)
    kept = register(a, "kept").json()
    assert speak(a, "kept").status_code == 501  # its profile is now cached on a

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(register, held, "half written")
        wait_for(lambda: any("holding registration" in line for line in held.log_lines), 30,
                 "the registration to reach its COMMIT")
        postgres.kill()
        answer = pending.result(timeout=60)
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "voice_store_unavailable"
    assert "Retry-After" in answer.headers

    wait_for(lambda: health(a)["voices"]["status"] == "unavailable", 30, "a to notice")
    assert health(a)["status"] == "degraded"
    for refused in (register(a, "meanwhile"),
                    requests.delete(a.url + VOICES + "/" + kept["id"], timeout=10)):
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "voice_store_unavailable"
        assert int(refused.headers["Retry-After"]) >= 1
    assert speak(a, "kept").status_code == 501  # the cached voice still resolves
    assert speak(a, "alloy").status_code == 200
    assert voice_ids(a) == [kept["id"]]  # the last known registry stays listed

    postgres.start()
    wait_connected(a)
    wait_connected(held)
    assert [r[0] for r in postgres.sql("SELECT name FROM voxserve_voices")] == ["kept"]
    retried = register(a, "half written")
    assert retried.status_code == 200, retried.text
    assert requests.delete(a.url + VOICES + "/" + kept["id"], timeout=10).status_code == 200


def test_a_frozen_database_answers_503_within_the_timeout_and_degrades(make_server, postgres):
    """Every PostgreSQL process stopped (SIGSTOP): the kernel keeps the connections open and
    acknowledged, so nothing but a deadline on the client ends a call. Both stores (voices and
    dictionaries) answer 503 with Retry-After within the configured timeout, /health turns
    degraded, synthesis goes on, and all recovers after SIGCONT."""
    timeout_s = 2.0
    server = start(make_server, postgres, "--voices-postgres-timeout-ms",
                   str(int(timeout_s * 1000)), "--dictionaries-backend", "postgres")
    wait_connected(server)
    wait_for(lambda: health(server).get("dictionaries", {}).get("status") == "ok", 30,
             "the dictionary store to connect")
    kept = register(server, "kept").json()

    def timed(call):
        started = time.monotonic()
        answer = call()
        return answer, time.monotonic() - started

    postgres.freeze()
    try:
        answer, waited = timed(lambda: register(server, "frozen"))
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "voice_store_unavailable"
        assert int(answer.headers["Retry-After"]) >= 1
        # The timeout, plus slack for a loaded machine (it hung for good before: > 100 s).
        assert waited < timeout_s + 4.0, waited
        print(f"the registration answered 503 after {waited:.2f} s (timeout {timeout_s} s)")

        # The listener probes its own connection after a request's call failed: degraded.
        wait_for(lambda: health(server)["voices"]["status"] == "unavailable", 3 * timeout_s + 10,
                 "/health to say the voice store is unavailable")
        assert health(server)["status"] == "degraded"
        refused, waited = timed(lambda: requests.delete(server.url + VOICES + "/" + kept["id"],
                                                        timeout=30))
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "voice_store_unavailable"
        assert waited < timeout_s + 4.0, waited

        dictionary, waited = timed(lambda: requests.post(
            server.url + "/v1/pronunciation-dictionaries/add-from-rules", timeout=30,
            json={"name": "terms", "rules": [{"type": "alias", "string_to_replace": "WWW",
                                              "alias": "web"}]}))
        assert dictionary.status_code == 503, dictionary.text
        assert dictionary.json()["error"]["code"] == "dictionary_store_unavailable"
        assert int(dictionary.headers["Retry-After"]) >= 1
        assert waited < timeout_s + 4.0, waited
        wait_for(lambda: health(server)["dictionaries"]["status"] == "unavailable",
                 3 * timeout_s + 10, "/health to say the dictionary store is unavailable")

        assert speak(server, "alloy").status_code == 200  # synthesis does not wait on it
        assert voice_ids(server) == [kept["id"]]  # the last known registry stays listed
    finally:
        postgres.thaw()

    wait_connected(server)
    wait_for(lambda: health(server)["dictionaries"]["status"] == "ok", 30,
             "the dictionary store to reconnect")
    assert health(server)["status"] == "ready"
    assert register(server, "frozen").status_code == 200
    assert [r[0] for r in postgres.sql("SELECT name FROM voxserve_voices ORDER BY name")] == \
        ["frozen", "kept"]


@pytest.mark.parametrize("bound_from", ["config", "config beside dsn options", "dsn options"])
def test_a_server_stalled_inside_a_registration_holds_the_others_up_only_briefly(make_server,
                                                                                 postgres,
                                                                                 bound_from):
    """A replica stopped (SIGSTOP: a frozen process; a lost machine or a network split look the
    same to the database, a connection that stays open and says nothing) while its registration
    holds the registration lock. PostgreSQL ends its session after
    voices.postgres.idle_in_transaction_timeout_ms, so the other replica's registration goes
    through within that bound instead of timing out until TCP gives up (hours). Options of the
    DSN's own are kept beside it, and the same bound given in the DSN's `options` wins over the
    config key (set far too long there)."""
    bound_s = 3.0
    dsn = postgres.dsn
    if bound_from.startswith("config"):
        limit = ("--voices-postgres-idle-timeout-ms", str(int(bound_s * 1000)))
        if bound_from == "config beside dsn options":
            dsn += " options='-c search_path=public'"
    else:
        limit = ("--voices-postgres-idle-timeout-ms", "600000")
        dsn += f" options='-c idle_in_transaction_session_timeout={int(bound_s * 1000)}'"

    def replica(env=None):
        return make_server("--voices-backend", "postgres", "--voices-postgres-dsn", dsn,
                           "--voices-test-cloner", "true", *limit, env=env)

    # TEST ONLY: its first registration waits before COMMIT until the connection breaks.
    stalled = replica(env={"VOXSERVE_TEST_PG_HOLD_COMMIT": "1"})
    other = replica()
    wait_connected(stalled)
    wait_connected(other)
    # A config bound not below statement_timeout (10 s) is allowed, with a warning.
    warned = any("is not below voices.postgres.statement_timeout_ms" in line
                 for line in stalled.log_lines)
    assert warned == (bound_from == "dsn options"), stalled.log()
    lock_holders = ("SELECT a.state FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND l.granted")

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(register, stalled, "half written")
        try:
            wait_for(lambda: any("holding registration" in line for line in stalled.log_lines), 30,
                     "the registration to reach its COMMIT")
            stalled.process.send_signal(signal.SIGSTOP)
            # The stopped server's session holds the lock, idle inside its transaction.
            assert postgres.sql(lock_holders) == [["idle in transaction"]], postgres.log()

            started = time.monotonic()
            answer = register(other, "meanwhile")
            waited = time.monotonic() - started
            assert answer.status_code == 200, answer.text
            # At most the bound (plus slack for a loaded machine), well before B's own
            # statement_timeout (10 s) would have answered 503.
            assert waited < bound_s + 4.0, waited
            print(f"the other server's registration waited {waited:.2f} s (bound {bound_s} s)")
            assert postgres.sql(lock_holders) == []
            assert "idle-in-transaction timeout" in postgres.log()
            # The stalled registration left nothing behind.
            assert [r[0] for r in postgres.sql("SELECT name FROM voxserve_voices")] == ["meanwhile"]
        finally:
            stalled.process.send_signal(signal.SIGCONT)
        late = pending.result(timeout=60)

    # Woken up, the stalled server answers its registration with an error, not a hang...
    assert late.status_code == 503, late.text
    assert late.json()["error"]["code"] == "voice_store_unavailable"
    assert "Retry-After" in late.headers
    # ...and keeps serving: it sees the other's voice, registers anew, and both agree.
    meanwhile = answer.json()["id"]
    wait_for(lambda: voice_ids(stalled) == [meanwhile], 5, "the stalled server to catch up")
    wait_connected(stalled)
    retried = register(stalled, "half written")
    assert retried.status_code == 200, retried.text
    both = sorted([meanwhile, retried.json()["id"]])
    wait_for(lambda: voice_ids(stalled) == both and voice_ids(other) == both, 5,
             "both servers to list both voices")
    assert sorted(r[0] for r in postgres.sql("SELECT name FROM voxserve_voices")) == \
        ["half written", "meanwhile"]


def test_voices_move_from_a_directory_into_postgres_and_back(make_server, postgres, voxserve_bin,
                                                               tmp_path):
    import subprocess

    source = tmp_path / "source"
    local = make_server("--voices-dir", str(source), "--voices-test-cloner", "true")
    before = sorted((v["id"], v["name"], v["created_at"])
                    for v in (register(local, name).json() for name in ("Ann", "Bo")))
    assert local.stop() == 0

    def voices(*args):
        return subprocess.run([voxserve_bin, "voices", *args, "--dsn", postgres.dsn],
                              capture_output=True, text=True, timeout=120)

    imported = voices("import", "--dir", str(source))
    assert imported.returncode == 0, imported.stderr
    assert "imported 2 voice(s), skipped 0" in imported.stdout
    again = voices("import", "--dir", str(source))
    assert again.returncode == 0 and "imported 0 voice(s), skipped 2" in again.stdout, again.stdout

    shared = start(make_server, postgres)
    wait_connected(shared)
    listed = requests.get(shared.url + VOICES, timeout=10).json()["data"]
    assert sorted((v["id"], v["name"], v["created_at"]) for v in listed) == before
    assert speak(shared, "ann").status_code == 501  # the profile reads back from the database

    target = tmp_path / "target"
    exported = voices("export", "--dir", str(target))
    assert exported.returncode == 0 and "exported 2 voice(s)" in exported.stdout, exported.stderr
    back = make_server("--voices-dir", str(target), "--voices-test-cloner", "true")
    listed = requests.get(back.url + VOICES, timeout=10).json()["data"]
    assert sorted((v["id"], v["name"], v["created_at"]) for v in listed) == before
    assert speak(back, "bo").status_code == 501

    unusable = subprocess.run([voxserve_bin, "voices", "import", "--dir", str(source)],
                              capture_output=True, text=True, timeout=60)
    assert unusable.returncode == 2 and "voices.postgres.dsn" in unusable.stderr
