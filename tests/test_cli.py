"""The `licensegate` command: its output contract and its one-line errors."""

from __future__ import annotations

import importlib.metadata
import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from licensegate.store import migrate
from tests.live import LICENSEGATE, server_env, start_server


def run(args: list[str], database_url: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LICENSEGATE, *args],
        env=server_env(database_url, data_dir, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("licensegate: ")
    assert fragment in lines[0]
    assert "Traceback" not in done.stderr


def test_create_app_prints_exactly_one_json_object(db_url: str, tmp_path: Path) -> None:
    done = run(["create-app", "--owner", "ann", "--name", "Tool"], db_url, tmp_path)
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    assert set(created) == {"ownerid", "name", "sellerkey", "public_key", "secret"}
    assert re.fullmatch(r"[A-Za-z0-9]{10}", created["ownerid"])
    assert created["name"] == "Tool"
    assert re.fullmatch(r"[0-9a-f]{32}", created["sellerkey"])
    assert re.fullmatch(r"[0-9a-f]{64}", created["public_key"])
    assert re.fullmatch(r"[0-9a-f]{64}", created["secret"])
    assert done.stdout.count("\n") == 1

    # A second application of the same owner shares the ownerid and gets its own key.
    second = json.loads(run(["create-app", "--owner", "ann", "--name", "Other"], db_url, tmp_path).stdout)
    assert second["ownerid"] == created["ownerid"]
    assert second["sellerkey"] != created["sellerkey"]
    assert second["public_key"] != created["public_key"]
    assert second["secret"] != created["secret"]


def test_create_app_refuses_a_duplicate_in_one_line(db_url: str, tmp_path: Path) -> None:
    assert run(["create-app", "--owner", "bo", "--name", "Dup"], db_url, tmp_path).returncode == 0
    done = run(["create-app", "--owner", "bo", "--name", "Dup"], db_url, tmp_path)
    assert_one_line_error(done, "already has an application named 'Dup'")


def test_seller_runs_an_operation_as_the_owner(db_url: str, tmp_path: Path) -> None:
    created = json.loads(run(["create-app", "--owner", "cy", "--name", "Kit"], db_url, tmp_path).stdout)
    app = ["--ownerid", created["ownerid"], "--name", "Kit"]
    done = run(["seller", "add", "expiry=30", "amount=2", *app], db_url, tmp_path)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert (body["success"], len(body["keys"])) == (True, 2)
    assert done.stdout.count("\n") == 1
    # The same checks and audit entry as the seller API; the audit log names the face.
    audit = json.loads(run(["seller", "fetchauditlogs", *app], db_url, tmp_path).stdout)
    assert [(e["action"], e["actor"]) for e in audit["logs"]] == [("add", "cy (command line)")]
    assert_one_line_error(run(["seller", "add", *app], db_url, tmp_path), "Parameter 'expiry' is required")
    wrong = ["--ownerid", created["ownerid"], "--name", "Other"]
    assert_one_line_error(run(["seller", "add", "expiry=1", *wrong], db_url, tmp_path), "No application")


def test_seller_parameters_are_name_value_pairs(tmp_path: Path) -> None:
    done = run(["seller", "add", "expiry", "--ownerid", "x", "--name", "y"], "sqlite:///unused.db", tmp_path)
    assert_one_line_error(done, "name=value")


def test_create_app_refuses_empty_names(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    migrate.upgrade(url)
    done = run(["create-app", "--owner", " ", "--name", "x"], url, tmp_path)
    assert_one_line_error(done, "owner name must not be empty")


def test_bad_database_urls_give_one_line(tmp_path: Path) -> None:
    assert_one_line_error(run(["migrate"], "mysql://x/y", tmp_path), "unsupported database URL scheme")
    assert_one_line_error(
        run(["create-app", "--owner", "a", "--name", "b"], "postgresql://postgres@127.0.0.1:1/x", tmp_path),
        "cannot reach the database",
    )
    assert_one_line_error(run(["serve", "--port", "0"], "mysql://x/y", tmp_path), "unsupported")


def test_bad_setting_gives_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*LICENSEGATE, "migrate"],
        env=server_env(f"sqlite:///{tmp_path / 'x.db'}", tmp_path, LICENSEGATE_WORKERS="many"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line_error(done, "LICENSEGATE_WORKERS must be a whole number")


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["migrate"]])
def test_unknown_log_level_gives_one_line(tmp_path: Path, command: list[str]) -> None:
    done = subprocess.run(
        [*LICENSEGATE, *command],
        env=server_env(f"sqlite:///{tmp_path / 'x.db'}", tmp_path, LICENSEGATE_LOG_LEVEL="chatty"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line_error(
        done, "LICENSEGATE_LOG_LEVEL must be one of debug, info, warning, error, got 'chatty'"
    )
    assert not (tmp_path / "x.db").exists()  # refused before touching the database


def test_migrate_brings_an_empty_database_to_head(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    done = run(["migrate"], url, tmp_path)
    assert done.returncode == 0, done.stderr
    assert migrate.current_revision(url) == migrate.head_revision()
    assert run(["migrate"], url, tmp_path).returncode == 0  # idempotent


def test_serve_refuses_a_schema_that_is_behind(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    migrate.upgrade(url)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0000'")
    with pytest.raises(Exception, match="run `licensegate migrate` first"):
        migrate.ensure_schema(url)


def test_version() -> None:
    done = subprocess.run([*LICENSEGATE, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"licensegate {importlib.metadata.version('licensegate')}"


def _default_env(**extra: str) -> dict[str, str]:
    """The environment of an operator who set no location: the default ./data applies."""
    env = {
        k: v
        for k, v in server_env("", Path()).items()
        if k not in ("LICENSEGATE_DATABASE_URL", "LICENSEGATE_DATA_DIR")
    }
    return env | extra


def _in(folder: Path, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LICENSEGATE, *args],
        cwd=folder,
        env=_default_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_commands_say_where_the_data_is(tmp_path: Path) -> None:
    home = tmp_path / "home"
    elsewhere = tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    expected = f"database {(home / 'data' / 'licensegate.db').resolve()} (SQLite), files in "
    expected += str((home / "data" / "files").resolve())

    done = _in(home, ["migrate"])
    assert done.returncode == 0, done.stderr
    assert expected in done.stderr

    done = _in(home, ["create-app", "--owner", "o", "--name", "a"])
    assert done.returncode == 0, done.stderr
    assert expected in done.stderr
    assert json.loads(done.stdout)["name"] == "a"  # stdout stays one JSON object
    assert done.stdout.count("\n") == 1

    # From another folder the default names another place, which does not exist: refused, not made.
    done = _in(elsewhere, ["create-app", "--owner", "o", "--name", "b"])
    assert_one_line_error(done, f"no database at {(elsewhere / 'data' / 'licensegate.db').resolve()}")
    assert list(elsewhere.iterdir()) == []  # neither a database nor a key file nor a folder

    # With LICENSEGATE_DATA_DIR the same database is found from anywhere.
    done = _in(
        elsewhere, ["create-app", "--owner", "o", "--name", "b"], LICENSEGATE_DATA_DIR=str(home / "data")
    )
    assert done.returncode == 0, done.stderr
    assert expected in done.stderr


def test_serve_says_where_the_data_is(db_url: str, tmp_path: Path) -> None:
    server = start_server(db_url, tmp_path, 1)
    try:
        server.stop()
        printed = server.log.read_text()
    finally:
        server.stop()
    files = "the database" if db_url.startswith("postgresql") else str((tmp_path / "files").resolve())
    assert f"database {migrate.location(db_url)}, files in {files}" in printed
    assert ":***@" in migrate.location("postgresql://u:secret@h:5432/d")
    assert "secret" not in migrate.location("postgresql://u:secret@h:5432/d")


@pytest.mark.parametrize(
    "command",
    [
        ["create-app", "--owner", "o", "--name", "a"],
        ["public-key"],
        ["reseal"],
        ["rotate-key"],
        ["seller", "add", "expiry=1", "--ownerid", "x", "--name", "y"],
        ["set-password", "--username", "u", "--password-stdin"],
        ["create-account", "--username", "u", "--password-stdin"],
    ],
)
def test_commands_other_than_serve_and_migrate_never_create_a_database(
    tmp_path: Path, command: list[str]
) -> None:
    data = tmp_path / "data"
    missing = data / "missing.db"

    def attempt() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*LICENSEGATE, *command],
            input="a password\n",
            env=server_env(f"sqlite:///{missing}", data),
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = attempt()
    assert_one_line_error(done, f"no database at {missing.resolve()}")
    assert not data.exists()

    # An empty file (or an empty PostgreSQL database) has no tables: also refused, not migrated.
    data.mkdir()
    missing.touch()
    done = attempt()
    assert_one_line_error(done, "has no licensegate tables yet: run `licensegate migrate` first")
    with sqlite3.connect(missing) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
