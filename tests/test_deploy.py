"""A first run that never trips, and the deployment files in deploy/: the bootstrap script when
two commands run it at once on a fresh copy, and the systemd unit's command line."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.live import LICENSEGATE, free_port

ROOT = Path(__file__).resolve().parents[1]


def fresh_copy(target: Path) -> Path:
    """The repository's files as a new clone has them (tracked and new, nothing ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def run_together(copy: Path, *commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    started = [
        subprocess.Popen(
            command, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for command in commands
    ]
    done = []
    for process, command in zip(started, commands, strict=True):
        out, err = process.communicate(timeout=540)
        done.append(subprocess.CompletedProcess(command, process.returncode, out, err))
    return done


def test_two_commands_bootstrap_a_fresh_copy_at_once(tmp_path: Path) -> None:
    copy = fresh_copy(tmp_path / "clone")
    assert not (copy / ".venv").exists()

    # Two `scripts/serve` at once on a fresh copy: one makes .venv, the other waits for it.
    for done in run_together(copy, ["scripts/serve", "--help"], ["scripts/serve", "--help"]):
        assert done.returncode == 0, done.stderr
        assert "usage: licensegate serve" in done.stdout
        assert "deprecat" not in done.stderr.lower(), done.stderr  # the package builds cleanly
    venv_python = str(copy / ".venv" / "bin" / "python")
    # serve installed the service alone, not the development tools.
    assert subprocess.run([venv_python, "-c", "import granian, starlette"], timeout=60).returncode == 0
    assert (
        subprocess.run([venv_python, "-c", "import pytest"], capture_output=True, timeout=60).returncode != 0
    )

    # Two `scripts/bootstrap` at once then add the development tools, once.
    for done in run_together(copy, ["scripts/bootstrap"], ["scripts/bootstrap"]):
        assert done.returncode == 0, done.stderr
        assert "deprecat" not in done.stderr.lower(), done.stderr
    assert subprocess.run([venv_python, "-c", "import pytest, ruff"], timeout=60).returncode == 0
    version = subprocess.run(
        [str(copy / ".venv" / "bin" / "licensegate"), "--version"], capture_output=True, text=True, timeout=60
    )
    assert version.stdout.startswith("licensegate ")


def unit_settings(path: Path) -> tuple[list[str], dict[str, str]]:
    """The ExecStart command line and the Environment= variables of a systemd unit."""
    command: list[str] = []
    env: dict[str, str] = {}
    for line in path.read_text().splitlines():
        key, eq, value = line.strip().partition("=")
        if not eq or line.lstrip().startswith("#"):
            continue
        if key == "ExecStart":
            command = shlex.split(value)
        elif key == "Environment":
            for assignment in shlex.split(value):
                name, _, setting = assignment.partition("=")
                env[name] = setting
    return command, env


def test_the_systemd_units_command_line_starts_the_service(tmp_path: Path) -> None:
    command, unit_env = unit_settings(ROOT / "deploy" / "licensegate.service")
    assert command[0] == "/opt/licensegate/venv/bin/licensegate"  # where the unit's comment installs it
    assert unit_env["LICENSEGATE_DATA_DIR"] == "/var/lib/licensegate"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LICENSEGATE_")}
    # The unit's own settings, with the state folder and port of this test.
    env |= unit_env | {"LICENSEGATE_DATA_DIR": str(tmp_path / "state"), "LICENSEGATE_PORT": str(port)}
    with open(tmp_path / "log", "wb") as log:
        process = subprocess.Popen(
            [*LICENSEGATE, *command[1:]],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        # Every worker up (each reports itself in /metrics once started): Granian loses a stop
        # request that reaches a worker still starting, which then never exits.
        running = f"licensegate_worker_processes {unit_env['LICENSEGATE_WORKERS']}"
        while True:
            assert process.poll() is None, (tmp_path / "log").read_text()
            try:
                if running in httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=1).text:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "log").read_text()
            time.sleep(0.2)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        assert (tmp_path / "state" / "licensegate.db").exists()  # the unit's state folder
        os.killpg(process.pid, signal.SIGTERM)  # as systemd stops it (KillSignal=SIGTERM)
        assert process.wait(timeout=30) == 0, (tmp_path / "log").read_text()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    log_text = (tmp_path / "log").read_text()
    assert f"database {(tmp_path / 'state' / 'licensegate.db').resolve()} (SQLite)" in log_text
    assert "(2 worker(s))" in log_text


def test_the_dockerfile_copies_files_that_exist() -> None:
    for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            *sources, _target = line.split()[1:]
            for source in sources:
                assert (ROOT / source).exists(), source
