"""A private PostgreSQL server for the tests that freeze or stop their database: never the shared
one. Started from the server binaries PostgreSQL installs (/usr/lib/postgresql/<version>/bin), on a
free port, as the `postgres` user when the tests run as root (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.live import free_port


def _binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed under /usr/lib/postgresql/*/bin")
    return found[-1]


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class PrivatePostgres:
    def __init__(self) -> None:
        # Not under pytest's tmp_path: its folders are private to root, the server runs as postgres.
        self.folder = Path(tempfile.mkdtemp(prefix="lg-private-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self._frozen: list[int] = []

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(self.folder, account.pw_uid, account.pw_gid)
        subprocess.run(
            _as_server_user(
                [
                    _binary("initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--no-sync",
                    "-E",
                    "UTF8",
                ]
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
        self.resume()

    def resume(self) -> None:
        """Start the server (again, after `halt`) on the same data and port."""
        options = f"-p {self.port} -k '' -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50"
        subprocess.run(
            _as_server_user(
                [
                    _binary("pg_ctl"),
                    "-D",
                    str(self.data),
                    "-o",
                    options,
                    "-l",
                    str(self.folder / "server.log"),
                    "-w",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )

    def create_database(self, name: str) -> str:
        subprocess.run(
            [_binary("createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return self.url(name)

    def _processes(self) -> list[int]:
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(stat.split("/")[2]))
        return [postmaster, *children]

    def freeze(self) -> None:
        """Stop every process of this server (SIGSTOP): connections stay open, nothing answers."""
        self._frozen = self._processes()
        for pid in self._frozen:
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self._frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self._frozen = []

    def halt(self) -> None:
        """Stop the server at once (its connections drop); `stop` still cleans up after it."""
        self.thaw()
        subprocess.run(
            _as_server_user([_binary("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
            timeout=60,
        )

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A private server, started, and stopped and removed after."""
    server = PrivatePostgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()
