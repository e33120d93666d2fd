"""A database that stops answering: requests wait a bounded time and are answered 503 with
Retry-After (within each operation's declared statuses), the log says so without a line per
request, /healthz keeps answering, and everything works again once the database is back.

PostgreSQL: a private server this test starts and freezes (SIGSTOP), never the shared one.
SQLite: a database another program holds locked past the busy timeout."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate.signing import verify
from licensegate.store import migrate
from tests import privatepg
from tests.live import LICENSEGATE, LiveServer, server_env, start_server
from tests.privatepg import PrivatePostgres

pytestmark = pytest.mark.server

WAIT = 2  # LICENSEGATE_PG_TIMEOUT of the server under test
ANSWER_BOUND = 15.0  # seconds: generous, but finite (a frozen database used to mean forever)


@pytest.fixture
def frozen_postgres() -> Iterator[PrivatePostgres]:
    with privatepg.private_postgres() as server:
        yield server


def _client_call(http: httpx.Client, created: dict[str, str], type_: str, **params: str) -> httpx.Response:
    base = {"ownerid": created["ownerid"], "name": created["name"], "type": type_}
    return http.post("/api/1.0/", params={**base, **params})


def _wait_for_recovery(http: httpx.Client, created: dict[str, str]) -> None:
    deadline = time.monotonic() + 30
    while _client_call(http, created, "init").status_code != 200:
        assert time.monotonic() < deadline, "the service did not recover after the database did"
        time.sleep(0.5)


def _assert_unavailable(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert int(response.headers["Retry-After"]) >= 1
    body: dict[str, Any] = response.json()
    assert body["success"] is False
    assert body["error"] == "service_unavailable"
    return body


def test_a_frozen_postgresql_is_answered_503_and_the_service_recovers(
    frozen_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    url = frozen_postgres.create_database("outage")
    migrate.upgrade(url)
    server: LiveServer = start_server(url, tmp_path, 2, LICENSEGATE_PG_TIMEOUT=str(WAIT))
    try:
        created = server.create_app("outage", "app")
        with httpx.Client(base_url=server.url, timeout=ANSWER_BOUND) as http:
            session = _client_call(http, created, "init").json()["sessionid"]
            frozen_postgres.freeze()
            try:
                assert http.get("/healthz").status_code == 200
                started = time.monotonic()
                init = _assert_unavailable(_client_call(http, created, "init"), 503)
                assert init["code"] == 53
                assert "nonce" in init
                # License Login declares no 503 (the interface document's list): 500, same error.
                _assert_unavailable(_client_call(http, created, "license", key="K", sessionid=session), 500)
                seller = http.get(
                    "/api/seller/", params={"sellerkey": created["sellerkey"], "type": "fetchallvars"}
                )
                _assert_unavailable(seller, 500)  # Get All Global Variables: no 503 declared either
                seller = http.get(
                    "/api/seller/", params={"sellerkey": created["sellerkey"], "type": "getsettings"}
                )
                _assert_unavailable(seller, 503)
                for _ in range(5):
                    _assert_unavailable(_client_call(http, created, "init"), 503)
                assert time.monotonic() - started < 10 * ANSWER_BOUND
                assert http.get("/healthz").status_code == 200
            finally:
                frozen_postgres.thaw()
            _wait_for_recovery(http, created)
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text()
    assert "unexpected fault" not in log
    # Said in the log, but not once per refused request (8 of them here).
    assert 1 <= log.count("answering 503") <= 4, log


LONG_WAIT = 5  # LICENSEGATE_PG_TIMEOUT of the test below: large beside a loaded machine's delays


def _signed_by_one_of(keys: list[str], response: httpx.Response) -> bool:
    stamp = response.headers["x-signature-timestamp"]
    signed = stamp.encode() + response.content
    return any(verify(key, response.headers["x-signature-ed25519"], signed) for key in keys)


def test_a_frozen_postgresql_costs_a_call_one_timeout(
    frozen_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    """Each call waits for the database once: its 503 comes after about one LICENSEGATE_PG_TIMEOUT,
    never two (the bound is a ratio of the setting, the failure it catches a whole second wait:
    the endpoint asking again for the application, a pooled connection released gracefully, a
    seller-log entry written after the failure)."""
    url = frozen_postgres.create_database("onewait")
    migrate.upgrade(url)
    server = start_server(url, tmp_path, 2, LICENSEGATE_PG_TIMEOUT=str(LONG_WAIT))
    try:
        created = server.create_app("onewait", "app")
        deployment = cli_public_key(url, tmp_path)
        keys = [created["public_key"], deployment]
        with httpx.Client(base_url=server.url, timeout=ANSWER_BOUND * 2) as http:
            logging = {"sellerkey": created["sellerkey"], "type": "updatesettings", "sellerlogs": "1"}
            assert http.get("/api/seller/", params=logging).status_code == 200
            for _ in range(4):  # both workers serve the application (new connections spread)
                assert _client_call(http, created, "init").status_code == 200
            frozen_postgres.freeze()
            try:
                for _ in range(3):
                    started = time.monotonic()
                    init = _client_call(http, created, "init")
                    waited = time.monotonic() - started
                    _assert_unavailable(init, 503)
                    assert _signed_by_one_of(keys, init)
                    assert waited < 2 * LONG_WAIT, f"init waited {waited:.1f} s for its 503"
                started = time.monotonic()
                seller = http.get(
                    "/api/seller/", params={"sellerkey": created["sellerkey"], "type": "getsettings"}
                )
                waited = time.monotonic() - started
                _assert_unavailable(seller, 503)
                assert waited < 2 * LONG_WAIT, f"getsettings waited {waited:.1f} s for its 503"
            finally:
                frozen_postgres.thaw()
            _wait_for_recovery(http, created)
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text()
    assert "unexpected fault" not in log
    assert "seller log entry not written" not in log


def cli_public_key(url: str, data_dir: Path) -> str:
    """`licensegate public-key`: the deployment's own public key."""
    done = subprocess.run(
        [*LICENSEGATE, "public-key"],
        env=server_env(url, data_dir),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_a_locked_sqlite_database_is_answered_503(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    url = f"sqlite:///{path}"
    server = start_server(url, tmp_path, 1)
    try:
        created = server.create_app("locked", "app")
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")  # another program holding the write lock
            with httpx.Client(base_url=server.url, timeout=ANSWER_BOUND) as http:
                _assert_unavailable(_client_call(http, created, "init"), 503)  # init writes a session
                holder.execute("ROLLBACK")
                assert _client_call(http, created, "init").status_code == 200
        finally:
            holder.close()
    finally:
        server.stop()
    assert "unexpected fault" not in (tmp_path / "server.log").read_text()


# A service started while its database cannot be used: `serve` and every worker start, /healthz
# answers, /readyz and the APIs answer 503 (the client's signed by the deployment's key, from the
# data folder's copy) until the database is back, then everything works without a restart.


def _known_service(url: str, data_dir: Path) -> tuple[dict[str, str], str]:
    """An application, and the deployment's public key, of a service that ran once on `url`."""
    first = start_server(url, data_dir, 1, log_name="first.log")
    try:
        created = first.create_app("outage", "app")
    finally:
        first.stop()
    return created, cli_public_key(url, data_dir)


def _check_started_without_database(
    server: LiveServer, created: dict[str, str], deployment: str, bound: float = ANSWER_BOUND
) -> None:
    """Every worker listens (start_server waited for that); what each interface answers."""
    with httpx.Client(base_url=server.url, timeout=bound) as http:
        assert http.get("/healthz").status_code == 200
        ready = http.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["database"] in ("timeout", "unreachable")
        for _ in range(4):  # new connections: both workers answer some
            init = _client_call(http, created, "init")
            _assert_unavailable(init, 503)
            assert _signed_by_one_of([deployment], init)
        seller = http.get("/api/seller/", params={"sellerkey": created["sellerkey"], "type": "getsettings"})
        _assert_unavailable(seller, 503)


def _check_recovered(server: LiveServer, created: dict[str, str]) -> None:
    with httpx.Client(base_url=server.url, timeout=ANSWER_BOUND) as http:
        _wait_for_recovery(http, created)
        for _ in range(4):
            init = _client_call(http, created, "init")
            assert init.status_code == 200
            assert _signed_by_one_of([created["public_key"]], init)
        assert http.get("/readyz").status_code == 200
    assert server.process.poll() is None
    assert len(server.worker_pids()) == 2


def test_serve_starts_while_postgresql_is_down_and_recovers(
    frozen_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    url = frozen_postgres.create_database("down")
    created, deployment = _known_service(url, tmp_path)
    frozen_postgres.halt()
    server = start_server(url, tmp_path, 2, LICENSEGATE_PG_TIMEOUT=str(WAIT))
    try:
        _check_started_without_database(server, created, deployment)
        # A worker that dies meanwhile is replaced by one that starts without the database too.
        victim = server.worker_pids()[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 90
        while len(server.worker_pids()) < 2 or victim in server.worker_pids():
            assert time.monotonic() < deadline, "no new worker replaced the dead one"
            time.sleep(0.2)
        _check_started_without_database(server, created, deployment)
        frozen_postgres.resume()
        _check_recovered(server, created)
    finally:
        server.stop()
    log = server.log.read_text()
    assert "the database cannot be used now" in log
    assert "unexpected fault" not in log


def test_serve_starts_while_postgresql_is_frozen_and_recovers(
    frozen_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    url = frozen_postgres.create_database("frozen")
    created, deployment = _known_service(url, tmp_path)
    frozen_postgres.freeze()
    try:
        server = start_server(url, tmp_path, 2, LICENSEGATE_PG_TIMEOUT=str(WAIT))
    except BaseException:
        frozen_postgres.thaw()
        raise
    try:
        try:
            _check_started_without_database(server, created, deployment)
        finally:
            frozen_postgres.thaw()
        _check_recovered(server, created)
    finally:
        server.stop()
    log = server.log.read_text()
    assert "the database cannot be used now" in log
    assert "unexpected fault" not in log


def test_serve_starts_while_sqlite_is_locked_and_recovers(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    url = f"sqlite:///{path}"
    created, deployment = _known_service(url, tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        # Another program holding the file: nobody else may even read it.
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        server = start_server(url, tmp_path, 2)
        try:
            # Each SQLite statement waits for the lock (5 s) on its worker's event loop, background
            # work's too, so an answer may wait for several such waits: bounded, not short.
            _check_started_without_database(server, created, deployment, bound=90)
            holder.execute("ROLLBACK")
            holder.close()
            _check_recovered(server, created)
        finally:
            server.stop()
    finally:
        holder.close()
    log = server.log.read_text()
    assert "the database cannot be used now" in log
    assert "unexpected fault" not in log
