"""The deployment key in use is recorded in the database (its id, never the key): every command
and `serve` refuse a database sealed under another key, naming both ids and the fix. Real
processes on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from licensegate import keyring
from tests.live import LICENSEGATE, free_port, server_env


def run(
    args: list[str], database_url: str, data_dir: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LICENSEGATE, *args],
        env=server_env(database_url, data_dir),
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


def key_id_in(folder: Path) -> str:
    return keyring.read_key_file(folder / keyring.KEY_FILE_NAME).current_id


def refused(done: subprocess.CompletedProcess[str], recorded: str, held: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("licensegate: the database is sealed under deployment key "), done.stderr
    assert f"deployment key {recorded}" in line
    assert f"this process has deployment key {held}" in line
    assert "LICENSEGATE_DATA_DIR" in line
    assert "docs/operations.md" in line
    assert "Traceback" not in done.stderr


def test_every_command_refuses_a_database_sealed_under_another_key(db_url: str, tmp_path: Path) -> None:
    service, elsewhere = tmp_path / "service", tmp_path / "elsewhere"
    created = json.loads(run(["create-app", "--owner", "ann", "--name", "Tool"], db_url, service).stdout)
    recorded = key_id_in(service)
    app = ["--ownerid", created["ownerid"], "--name", "Tool"]
    for args, stdin in (
        (["create-app", "--owner", "ann", "--name", "Other"], ""),
        (["create-account", "--username", "bo", "--password-stdin"], "a long password\n"),
        (["public-key"], ""),
        (["reseal"], ""),
        (["migrate"], ""),
        (["seller", "add", "expiry=30", *app], ""),
        (["backup", str(tmp_path / "copy")], ""),
        (["serve", "--port", str(free_port())], ""),
    ):
        done = run(args, db_url, elsewhere, stdin)
        refused(done, recorded, key_id_in(elsewhere))
    assert not (tmp_path / "copy").exists()
    # The service's own key still works, and nothing was written under the other one.
    added = run(["seller", "add", "expiry=30", *app], db_url, service)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["success"] is True
    other = run(["create-app", "--owner", "ann", "--name", "Other"], db_url, service)
    assert other.returncode == 0, other.stderr


def test_rotation_moves_the_record_to_the_new_key(db_url: str, tmp_path: Path) -> None:
    service = tmp_path / "service"
    assert run(["migrate"], db_url, service).returncode == 0
    old_file = (service / keyring.KEY_FILE_NAME).read_bytes()
    old_id = key_id_in(service)
    rotated = run(["rotate-key"], db_url, service)
    assert rotated.returncode == 0, rotated.stderr
    new_id = key_id_in(service)
    assert new_id != old_id
    assert run(["public-key"], db_url, service).returncode == 0
    # A node still holding only the old key is refused.
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / keyring.KEY_FILE_NAME).write_bytes(old_file)
    (stale / keyring.KEY_FILE_NAME).chmod(0o600)
    refused(run(["public-key"], db_url, stale), new_id, old_id)


def test_a_database_from_before_the_record_is_recorded_or_refused(db_url: str, tmp_path: Path) -> None:
    """The first start on a database that records no key yet records the key in use, once what
    the database holds is found sealed under it; sealed under another, it is refused."""
    import asyncio

    from licensegate.store.database import open_database

    service, elsewhere = tmp_path / "service", tmp_path / "elsewhere"
    assert run(["create-app", "--owner", "ann", "--name", "Tool"], db_url, service).returncode == 0

    async def forget() -> None:
        db = await open_database(db_url, pool_size=1)
        try:
            await db.execute("DELETE FROM deployment_key")
        finally:
            await db.close()

    asyncio.run(forget())
    refused(run(["public-key"], db_url, elsewhere), key_id_in(service), key_id_in(elsewhere))
    assert run(["public-key"], db_url, service).returncode == 0  # records it again
    asyncio.run(forget())
    assert run(["public-key"], db_url, service).returncode == 0
    refused(run(["public-key"], db_url, elsewhere), key_id_in(service), key_id_in(elsewhere))
