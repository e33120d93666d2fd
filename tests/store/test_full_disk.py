"""A full disk must not stop a SQLite service from starting: it serves reads, and writes are
answered 503 with Retry-After. The disk is a small tmpfs this test mounts (it runs as root, like
the rest of the suite's set-up) and fills; the database was stopped cleanly before, so SQLite has
to create its shared-memory index again to open it, which a full disk refuses."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import LICENSEGATE, server_env, start_server

pytestmark = pytest.mark.server


@pytest.fixture
def small_disk() -> Iterator[Path]:
    mountpoint = Path(tempfile.mkdtemp(prefix="lg-full-disk-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mountpoint)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.fail(f"this test mounts a small tmpfs (as root): {mounted.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)
        mountpoint.rmdir()


def _fill(disk: Path) -> None:
    with open(disk / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * (1 << 20))
                filler.flush()
        except OSError:
            pass
    statvfs = os.statvfs(disk)
    assert statvfs.f_bavail * statvfs.f_frsize < 64 * 1024


def test_a_full_disk_still_starts_the_service_for_reads(small_disk: Path, tmp_path: Path) -> None:
    data = small_disk / "data"
    url = f"sqlite:///{data / 'licensegate.db'}"
    env = server_env(url, data)
    subprocess.run([*LICENSEGATE, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    made = subprocess.run(
        [*LICENSEGATE, "create-app", "--owner", "full", "--name", "app"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    created = json.loads(made.stdout)
    assert not (data / "licensegate.db-shm").exists()  # stopped cleanly: SQLite must make it again
    _fill(small_disk)

    # The log goes to tmp_path (a disk with room); the data stays on the full one.
    server = start_server(url, tmp_path, 2, LICENSEGATE_DATA_DIR=str(data))
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            seller = {"sellerkey": created["sellerkey"]}
            settings = http.get("/api/seller/", params={**seller, "type": "getsettings"})
            assert settings.status_code == 200, settings.text
            assert settings.json()["success"] is True
            added = http.get("/api/seller/", params={**seller, "type": "add", "expiry": "1"})
            assert added.status_code == 503, added.text
            assert added.json()["error"] == "service_unavailable"
            assert int(added.headers["Retry-After"]) >= 1
            init = http.post(
                "/api/1.0/", params={"type": "init", "ownerid": created["ownerid"], "name": created["name"]}
            )
            assert init.status_code == 503, init.text  # opening a session is a write
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text()
    assert "opened read-only" in log
    assert "unexpected fault" not in log
