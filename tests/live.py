"""Start and stop a real `licensegate serve` process for end-to-end tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from licensegate import cli
from licensegate.config import Settings

LICENSEGATE = [sys.executable, "-m", "licensegate"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_env(database_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        LICENSEGATE_DATABASE_URL=database_url,
        LICENSEGATE_DATA_DIR=str(data_dir),
        LICENSEGATE_ARGON2_TIME_COST="1",
        LICENSEGATE_ARGON2_MEMORY_KIB="64",
        LICENSEGATE_LOG_LEVEL="warning",
        # Work a test left under way (a webhook retrying, say) must not hold up stopping the server.
        LICENSEGATE_SHUTDOWN_DRAIN="1",
    )
    env.update(extra)
    return env


def create_app(database_url: str, data_dir: Path, owner: str, name: str) -> dict[str, str]:
    """What `licensegate create-app` does, in this process (a new process costs a second)."""
    return cli.create_app(Settings.from_env(server_env(database_url, data_dir)), owner, name)


def create_app_by_command(database_url: str, data_dir: Path, owner: str, name: str) -> dict[str, str]:
    """`licensegate create-app` as an operator runs it."""
    done = subprocess.run(
        [*LICENSEGATE, "create-app", "--owner", owner, "--name", name],
        env=server_env(database_url, data_dir),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    created: dict[str, str] = json.loads(done.stdout)
    return created


def create_account(database_url: str, data_dir: Path, username: str, password: str) -> dict[str, str | None]:
    """An owner account that can sign in to the dashboard: what `licensegate create-account` does
    (tests/web/test_cli_accounts.py runs the command), in this process (a new process costs a
    second). On a thread of its own: Playwright's sync API keeps an event loop on the test's."""
    settings = Settings.from_env(server_env(database_url, data_dir))
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(cli.create_account, settings, username, password).result()


@dataclass
class LiveServer:
    url: str
    database_url: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    public_url: str = ""

    def create_app(self, owner: str, name: str) -> dict[str, str]:
        return create_app(self.database_url, self.data_dir, owner, name)

    def create_account(self, username: str, password: str) -> dict[str, str | None]:
        return create_account(self.database_url, self.data_dir, username, password)

    @property
    def log(self) -> Path:
        return self.data_dir / "server.log"

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def worker_pids(self) -> list[int]:
        """The worker processes that listen on the server's port: each one has finished starting
        (Granian binds a worker's socket once the application's start-up is done)."""
        return listening_workers(self.process.pid, self.port)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on `port` (TCP, IPv4 or IPv6)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(fields[9])
    return inodes


def listening_workers(serve_pid: int, port: int) -> list[int]:
    """The children of `serve_pid` that hold a socket listening on `port`."""
    inodes = _listening_inodes(port)
    found = []
    for pid in _children(serve_pid):
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    found.append(pid)
                    break
    return sorted(found)


def seller_call(
    server: LiveServer, sellerkey: str, type_: str, /, method: str = "GET", **params: str
) -> httpx.Response:
    """One seller API call to a live server."""
    query = {"sellerkey": sellerkey, "type": type_, **params}
    return httpx.request(method, f"{server.url}/api/seller/", params=query, timeout=30)


def start_server(
    database_url: str,
    data_dir: Path,
    workers: int = 2,
    /,
    public_host: str | None = None,
    command: Sequence[str] = LICENSEGATE,
    log_name: str = "server.log",
    **env: str,
) -> LiveServer:
    """`public_host`: the host name its public URL (links it prints, the dashboard's WebAuthn
    origin) names, e.g. localhost, which browsers accept for security keys where 127.0.0.1 fails.
    `command`: what runs `serve` (the bench's unsigned stand-in, say); `log_name`: its log file
    in `data_dir` (two servers on one folder each keep their own). Returns once every worker
    listens and `/healthz` answers."""
    port = free_port()
    if public_host is not None:
        env["LICENSEGATE_PUBLIC_URL"] = f"http://{public_host}:{port}"
    with open(data_dir / log_name, "wb") as log:  # the server writes through its own copy
        process = subprocess.Popen(
            [*command, "serve", "--port", str(port), "--workers", str(workers)],
            env=server_env(database_url, data_dir, **env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120  # a start with its database locked or frozen, on a loaded machine
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early: {(data_dir / log_name).read_text()}")
        if len(listening_workers(process.pid, port)) < workers:
            time.sleep(0.1)
            continue
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return LiveServer(
                    url, database_url, data_dir, process, env.get("LICENSEGATE_PUBLIC_URL", url)
                )
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    raise RuntimeError(f"server did not start every worker within 120 s: {(data_dir / log_name).read_text()}")


def execute_sql(database_url: str, sql: str, *args: object) -> None:
    """Change a live server's database directly (test set-up only)."""
    if database_url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
            conn.execute(sql, args)
        return
    import asyncio

    import asyncpg

    from licensegate.store.postgres import to_postgres

    async def run() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(to_postgres(sql), *args)
        finally:
            await conn.close()

    asyncio.run(run())


async def license_logins_at_once(
    server: LiveServer, base: dict[str, str], key: str, hwids: Sequence[str]
) -> list[dict[str, object]]:
    """One License Login of `key` per HWID, each on a session of its own, all sent at once (init
    first, all at once too); their answers, in the order of `hwids`."""
    limits = httpx.Limits(max_connections=len(hwids) + 10)
    async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=60) as http:
        inits = await asyncio.gather(
            *(http.post("/api/1.0/", params={**base, "type": "init"}) for _ in hwids)
        )
        sessions = [r.json()["sessionid"] for r in inits]
        answers = await asyncio.gather(
            *(
                http.post(
                    "/api/1.0/",
                    params={**base, "type": "license", "key": key, "hwid": hwid, "sessionid": sid},
                )
                for hwid, sid in zip(hwids, sessions, strict=True)
            )
        )
        return [a.json() for a in answers]
