"""The SQLite database and uploaded files are readable by the service's user only (issue 10 item
19): files 0600 in folders 0700, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from licensegate import private
from licensegate.config import Settings
from licensegate.services import Services
from licensegate.store import migrate
from tests.conftest import make_settings
from tests.helpers import SELLER_PATH, Seller

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    """Content in a folder on both databases (on PostgreSQL: the shared-folder setting)."""
    return make_settings(db_url, tmp_path / "data", files_dir=tmp_path / "data" / "files")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask a careless service manager might leave."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("open_umask")
async def test_a_new_sqlite_database_and_its_log_are_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "data"
    url = f"sqlite:///{data / 'licensegate.db'}"
    migrate.upgrade(url)
    assert mode(data / "licensegate.db") == 0o600
    assert mode(data) == 0o700
    services = await Services.open(Settings(data_dir=data, database_url=url))
    try:
        await services.db.execute("CREATE TABLE scratch (x INTEGER)")
        await services.db.execute("INSERT INTO scratch VALUES (1)")
        for name in (
            "licensegate.db",
            "licensegate.db-wal",
            "licensegate.db-shm",
            "licensegate.db.writelock",
            "licensegate.db.generation",
        ):
            assert mode(data / name) == 0o600, name
    finally:
        await services.close()
    other = tmp_path / "served" / "x.db"
    served = await Services.open(Settings(data_dir=tmp_path / "served", database_url=f"sqlite:///{other}"))
    await served.close()
    assert mode(other) == 0o600
    assert mode(other.parent) == 0o700


@pytest.mark.usefixtures("open_umask")
async def test_uploaded_files_are_owner_only(
    seller: Seller, client: httpx.AsyncClient, services: Services
) -> None:
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "upload"},
        files={"file": ("tool.zip", b"secret build" * 100, "application/zip")},
    )
    assert response.status_code == 200, response.json()
    files = services.settings.data_dir / "files"
    blobs = [path for path in files.rglob("*") if path.is_file()]
    assert len(blobs) == 1
    assert mode(blobs[0]) == 0o600
    assert mode(blobs[0].parent) == 0o700
    assert mode(files) == 0o700


def test_existing_folders_and_files_keep_their_modes(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)  # noqa: S103 - the operator's choice this test keeps
    private.folder(shared / "a" / "b")
    assert mode(shared) == 0o755
    assert mode(shared / "a") == mode(shared / "a" / "b") == 0o700
    kept = shared / "kept.db"
    kept.write_bytes(b"")
    os.chmod(kept, 0o640)
    private.touch(kept)
    assert mode(kept) == 0o640
