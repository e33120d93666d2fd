"""`licensegate backup` while a real server takes writes, and `licensegate restore` into a new
database: every row, the uploaded files and the deployment key come back."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests import databases
from tests.conftest import serve_live
from tests.live import LICENSEGATE, LiveServer, server_env

pytestmark = pytest.mark.server

Rows = dict[str, list[tuple[Any, ...]]]


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serve_live(request, tmp_path_factory)


def every_row(url: str) -> Rows:
    """Every row of every table, in a comparable order."""
    found: Rows = {}
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            names = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for name in names:
                if not name.startswith("sqlite_"):
                    cursor = conn.execute(f'SELECT * FROM "{name}"')
                    found[name] = _compared(cursor.description, cursor.fetchall())
        finally:
            conn.close()
        return found
    with psycopg.connect(url) as pg, pg.cursor() as cur:
        cur.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        )
        for (name,) in cur.fetchall():
            cur.execute(f'SELECT * FROM "{name}"')
            found[name] = _compared(cur.description, cur.fetchall())
    return found


def _compared(description: Any, rows: list[Any]) -> list[tuple[Any, ...]]:
    """Rows without their `login_version`, in a comparable order. A login version is a counter
    that only has to move when a login's data changes (domain/recheck.py): restoring writes the
    rows, so PostgreSQL's triggers move it in the restored copy, which is what they are for."""
    kept = [i for i, column in enumerate(description) if column[0] != "login_version"]
    return sorted((tuple(row[i] for i in kept) for row in rows), key=repr)


def command(args: list[str], url: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LICENSEGATE, *args], env=server_env(url, data_dir), capture_output=True, text=True, timeout=300
    )


def new_database(flavour_url: str, folder: Path) -> str:
    if flavour_url.startswith("sqlite:///"):
        return f"sqlite:///{folder / 'restored.db'}"
    return databases.take_live_database()


def test_backup_under_write_load_and_restore(server: LiveServer, tmp_path: Path) -> None:
    key = server.create_app("backup-owner", "app")["sellerkey"]
    uploaded = httpx.post(
        f"{server.url}/api/seller/",
        params={"sellerkey": key, "type": "upload"},
        data={"name": "loader.exe", "authed": "0"},
        files={"file": ("x.bin", b"MZ" + b"\1" * 70_000, "application/octet-stream")},
        timeout=30,
    )
    assert uploaded.status_code == 200, uploaded.text

    stop = threading.Event()
    added = [0]
    started = threading.Event()

    def write_load() -> None:  # new keys (and their audit rows) as fast as one client goes
        with httpx.Client(base_url=server.url, timeout=30) as http:
            while not stop.is_set():
                answer = http.get("/api/seller/", params={"sellerkey": key, "type": "add", "expiry": "1"})
                assert answer.status_code == 200, answer.text
                added[0] += 1
                if added[0] >= 20:
                    started.set()

    writer = threading.Thread(target=write_load)
    writer.start()
    try:
        assert started.wait(60)
        under_load = tmp_path / "under-load"
        done = command(["backup", str(under_load)], server.database_url, server.data_dir)
        during = added[0]
    finally:
        stop.set()
        writer.join(60)
    assert done.returncode == 0, done.stderr
    assert during > 20  # the server took writes while the backup ran
    assert "backed up database" in done.stderr
    manifest = json.loads((under_load / "manifest.json").read_text())
    assert manifest["deployment_key"] == "included"
    # A folder holds the file on SQLite; on PostgreSQL it is rows of the database (file_chunks).
    assert manifest["files"] == (1 if server.database_url.startswith("sqlite") else 0)

    source = every_row(server.database_url)
    # Restore the backup taken under load into a new database and data folder.
    restored_dir = tmp_path / "restored-data"
    target = new_database(server.database_url, tmp_path)
    try:
        done = command(["restore", str(under_load)], target, restored_dir)
        assert done.returncode == 0, done.stderr
        restored = every_row(target)
        assert set(restored) == set(source)
        counts = {table["name"]: table["rows"] for table in manifest["tables"]}
        for table, rows in restored.items():
            assert len(rows) == counts[table], table
            # The load only adds rows: the copy is the source as it was at one moment.
            missing = set(rows) - set(source[table])
            assert not missing, (table, sorted(missing, key=repr)[:3])
        keys = len(restored["license_keys"])
        assert 20 <= keys <= len(source["license_keys"])
        assert (restored_dir / "deployment.key").read_bytes() == (
            server.data_dir / "deployment.key"
        ).read_bytes()
        assert sorted(p.name for p in (restored_dir / "files").rglob("*") if p.is_file()) == sorted(
            p.name
            for p in (server.data_dir / "files").rglob("*")
            if p.is_file() and not p.name.startswith(".")
        )

        # A backup of the quiet database restores to exactly its rows, over the first with --force.
        quiet = tmp_path / "quiet"
        assert command(["backup", str(quiet)], server.database_url, server.data_dir).returncode == 0
        refused = command(["restore", str(quiet)], target, restored_dir)
        assert refused.returncode != 0
        assert "is not empty" in refused.stderr
        done = command(["restore", "--force", str(quiet)], target, restored_dir)
        assert done.returncode == 0, done.stderr
        assert every_row(target) == every_row(server.database_url)
    finally:
        if not target.startswith("sqlite"):
            databases.give_back_live_database(target)


def test_backup_refuses_a_folder_in_use_and_restore_a_non_backup(server: LiveServer, tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    done = command(["backup", str(tmp_path / "full")], server.database_url, server.data_dir)
    assert done.returncode != 0
    assert "is not an empty folder" in done.stderr
    done = command(["restore", str(tmp_path / "full")], server.database_url, server.data_dir)
    assert done.returncode != 0
    assert "is not a licensegate backup" in done.stderr
    assert "Traceback" not in done.stderr
