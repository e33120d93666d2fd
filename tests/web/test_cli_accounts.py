"""The command line's part in the dashboard: create-account, set-password, and the one-time setup
link `serve` prints while nobody can sign in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from tests.live import LICENSEGATE, server_env, start_server
from tests.test_cli import assert_one_line_error
from tests.web.browser import SETUP_LINK

PASSWORD = "a long enough passphrase"


def run(
    args: list[str], database_url: str, data_dir: Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LICENSEGATE, *args],
        input=stdin,
        env=server_env(database_url, data_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_create_account_makes_an_owner_that_can_sign_in(db_url: str, tmp_path: Path) -> None:
    done = run(["create-account", "--username", "ann", "--password-stdin"], db_url, tmp_path, PASSWORD + "\n")
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    assert created["username"] == "ann"
    assert created["role"] == "owner"
    assert len(created["ownerid"]) == 10
    again = run(
        ["create-account", "--username", "ann", "--password-stdin"], db_url, tmp_path, PASSWORD + "\n"
    )
    assert_one_line_error(again, "already taken")
    short = run(["create-account", "--username", "bo", "--password-stdin"], db_url, tmp_path, "short\n")
    assert_one_line_error(short, "8 to 256 characters")


def test_create_account_without_a_terminal_asks_for_password_stdin(db_url: str, tmp_path: Path) -> None:
    done = run(["create-account", "--username", "ann"], db_url, tmp_path)
    assert_one_line_error(done, "--password-stdin")


def test_set_password_replaces_it_and_ends_sessions(db_url: str, tmp_path: Path) -> None:
    assert (
        run(
            ["create-account", "--username", "ann", "--password-stdin"], db_url, tmp_path, PASSWORD + "\n"
        ).returncode
        == 0
    )
    done = run(
        ["set-password", "--username", "ann", "--password-stdin"], db_url, tmp_path, "another passphrase\n"
    )
    assert done.returncode == 0, done.stderr
    assert "the password of ann is set" in done.stderr
    missing = run(
        ["set-password", "--username", "nobody", "--password-stdin"], db_url, tmp_path, PASSWORD + "\n"
    )
    assert_one_line_error(missing, "No account is named 'nobody'")


def test_serve_prints_a_setup_link_only_while_nobody_can_sign_in(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    server = start_server(url, tmp_path, 1)
    try:
        log = server.log.read_text()
        found = SETUP_LINK.search(log)
        assert found, log
        link = found.group(1)
        assert link.startswith(server.url + "/dashboard/setup?token=")  # where it listens
        assert httpx.get(link, timeout=10).status_code == 200
    finally:
        server.stop()
    assert (
        run(
            ["create-account", "--username", "ann", "--password-stdin"], url, tmp_path, PASSWORD + "\n"
        ).returncode
        == 0
    )
    server = start_server(url, tmp_path, 1)
    try:
        log = server.log.read_text()
        assert SETUP_LINK.search(log) is None
        assert f"dashboard: {server.url}/dashboard/" in log
    finally:
        server.stop()
