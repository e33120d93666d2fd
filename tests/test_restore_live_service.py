"""`licensegate restore` refuses a database a running service holds (a real `serve` process),
says how to stop it, and restores once the service is stopped; a service does not start while a
restore holds the database. SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
from pathlib import Path

from licensegate.store import serving
from tests.live import LICENSEGATE, free_port, server_env, start_server


def run(args: list[str], database_url: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LICENSEGATE, *args],
        env=server_env(database_url, data_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_restore_refuses_a_database_a_running_service_holds(db_url: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    server = start_server(db_url, data, 2)
    try:
        server.create_app("ann", "Tool")
        saved = run(["backup", str(tmp_path / "copy")], db_url, data)
        assert saved.returncode == 0, saved.stderr
        done = run(["restore", "--force", str(tmp_path / "copy")], db_url, data)
        assert done.returncode == 1, (done.stdout, done.stderr)
        line = done.stderr.strip().splitlines()[-1]
        assert "is in use by a running licensegate service" in line
        assert "stop it first" in line
        assert "systemctl stop licensegate" in line
        assert "Traceback" not in done.stderr
    finally:
        server.stop()
    done = run(["restore", "--force", str(tmp_path / "copy")], db_url, data)
    assert done.returncode == 0, done.stderr


def test_serve_does_not_start_while_a_restore_holds_the_database(db_url: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run(["migrate"], db_url, data).returncode == 0
    with serving.hold(db_url, exclusive=True):
        done = run(["serve", "--port", str(free_port())], db_url, data)
    assert done.returncode == 1, done.stderr
    assert "`licensegate restore` is replacing the database" in done.stderr.strip().splitlines()[-1]
