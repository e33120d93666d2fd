"""Seller API — Files group, over HTTP: uploads (multipart and by URL from a local server), the
content-addressed store, listing, editing and deleting."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.domain import apps, files, filestore
from licensegate.domain.errors import Invalid, NotFound
from licensegate.services import Services
from licensegate.store.database import Database, open_database
from tests import databases
from tests.conftest import make_settings
from tests.helpers import SELLER_PATH, Seller, create_seller
from tests.httpservers import FakeDNS, LocalServer, keep_off_the_network, serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", outbound_allow=("127.0.0.1",))


@pytest.fixture(autouse=True)
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    return keep_off_the_network(monkeypatch)


@pytest.fixture
def web() -> Iterator[LocalServer]:
    with serving() as running:
        yield running


async def upload(seller: Seller, content: bytes, filename: str = "tool.zip", **fields: str) -> httpx.Response:
    return await seller.http.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "upload"},
        data=fields,
        files={"file": (filename, content, "application/octet-stream")},
    )


async def upload_ok(
    seller: Seller, content: bytes, filename: str = "tool.zip", **fields: str
) -> dict[str, Any]:
    response = await upload(seller, content, filename, **fields)
    body: dict[str, Any] = response.json()
    assert response.status_code == 200, body
    return body


async def blobs(services: Services) -> list[str]:
    """The storage keys of the content in the store (a folder, or the database on PostgreSQL)."""
    return await services.files.keys()


def leftovers(services: Services) -> list[Path]:
    """Temporary files left in the store's folder (the database's staging files are anonymous)."""
    store = services.files
    if not isinstance(store, filestore.LocalFileStore) or not store.folder.exists():
        return []
    return [p for p in store.folder.iterdir() if p.name.startswith(".")]


async def lose(services: Services, key: str) -> None:
    """Content gone from the store behind the service's back."""
    store = services.files
    if isinstance(store, filestore.LocalFileStore):
        store.path(key).unlink()
    else:
        await services.db.execute("DELETE FROM file_blobs WHERE storage_key = ?", key)


async def read_all(
    services: Services, app_id: int, file_id: str, **limit: int
) -> tuple[files.FileRow, bytes]:
    row, chunks = await files.read_content(
        services.settings, services.files, services.db, app_id, file_id, **limit
    )
    return row, b"".join([chunk async for chunk in chunks])


def sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


# --- upload ------------------------------------------------------------------------------------


async def test_upload_by_multipart_stores_the_content_by_its_digest(
    seller: Seller, settings: Settings, services: Services
) -> None:
    body = await upload_ok(seller, b"program bytes")
    assert set(body) == {"success", "message", "id", "name", "size"}
    assert body["message"] == f"File ID {body['id']} Uploaded Successfully"
    assert len(body["id"]) == 8
    assert body["id"].isdigit()
    assert (body["name"], body["size"]) == ("tool.zip", 13)
    key = sha(b"program bytes")
    assert await blobs(services) == [key]
    assert await filestore.read(services.files, key) == b"program bytes"
    if services.db.dialect == "sqlite":
        assert (settings.data_dir / "files" / key[:2] / key).read_bytes() == b"program bytes"
    stored = (await seller.ok("fetchfile", id=body["id"]))["file"]
    assert stored == {
        "id": body["id"],
        "name": "tool.zip",
        "size": 13,
        "authed": 1,
        "url": None,
        "created": 1_800_000_000,
        "downloads": 0,
        "downloaded": None,
    }


async def test_upload_takes_name_and_authed_from_the_form_or_the_query(seller: Seller) -> None:
    body = await upload_ok(seller, b"x", "ignored.bin", name="Loader v2", authed="0")
    assert body["name"] == "Loader v2"
    assert (await seller.ok("fetchfile", id=body["id"]))["file"]["authed"] == 0
    response = await seller.http.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "upload", "name": "from query"},
        files={"file": ("a.bin", b"y")},
    )
    assert response.json()["name"] == "from query"


async def test_upload_derives_a_clean_name_from_the_file_name(seller: Seller) -> None:
    assert (await upload_ok(seller, b"1", "C:\\Users\\me\\tool.exe"))["name"] == "tool.exe"
    long_name = "a" * 100 + ".dll"
    name = (await upload_ok(seller, b"2", long_name))["name"]
    assert name == "a" * 60 + ".dll"
    assert (await upload_ok(seller, b"3", "folder/"))["name"] == "file"


async def test_upload_refuses_a_bad_name(seller: Seller, services: Services) -> None:
    response = await upload(seller, b"x", name="n" * 65)
    assert (response.status_code, response.json()["error"]) == (400, "parameter_too_long")
    response = await upload(seller, b"x", name="bad\x01name")
    assert (response.status_code, response.json()["error"]) == (400, "invalid_name")
    assert await blobs(services) == []
    assert leftovers(services) == []


async def test_upload_needs_exactly_one_of_file_and_url(seller: Seller, web: LocalServer) -> None:
    await seller.fails("upload", 400, "missing_parameter", method="POST")
    response = await upload(seller, b"x", url=web.url("/f.bin"))
    assert (response.status_code, response.json()["error"]) == (400, "file_and_url")


async def test_identical_content_is_stored_once(
    seller: Seller, settings: Settings, services: Services, client: httpx.AsyncClient
) -> None:
    first = await upload_ok(seller, b"same content", "a.zip")
    second = await upload_ok(seller, b"same content", "b.zip")
    other = await create_seller(services, client, owner="other", name="other app")
    third = await upload_ok(other, b"same content", "c.zip")
    assert len({first["id"], second["id"]}) == 2
    assert third["id"]
    assert len(await blobs(services)) == 1
    assert leftovers(services) == []


# --- upload by URL -----------------------------------------------------------------------------


async def test_upload_by_url_fetches_and_keeps_the_url(
    seller: Seller, web: LocalServer, services: Services, settings: Settings
) -> None:
    web.reply("/downloads/setup.exe", b"fetched content")
    url = web.url("/downloads/setup.exe?token=abc")
    body = await seller.ok("upload", method="POST", url=url)
    assert (body["name"], body["size"]) == ("setup.exe", 15)
    stored = (await seller.ok("fetchfile", id=body["id"]))["file"]
    assert stored["url"] == url
    assert stored["size"] == 15
    row, content = await read_all(services, seller.app_id, body["id"])
    assert content == b"fetched content"
    assert row["storage_key"] == sha(b"fetched content")
    assert web.requests[0].path == "/downloads/setup.exe?token=abc"


async def test_upload_by_url_with_a_name(seller: Seller, web: LocalServer) -> None:
    web.reply("/", b"root")
    body = await seller.ok("upload", url=web.url("/"), name="named")
    assert body["name"] == "named"
    assert (await seller.ok("upload", url=web.url("/")))["name"] == "file"


async def test_upload_by_url_refuses_internal_targets_and_other_schemes(seller: Seller, dns: FakeDNS) -> None:
    body = await seller.fails("upload", 400, "target_not_allowed", url="http://10.0.0.1/file.zip")
    assert "10.0.0.1" in body["message"]
    await seller.fails("upload", 400, "target_not_allowed", url="http://169.254.169.254/latest/meta-data/")
    await seller.fails("upload", 400, "target_not_allowed", url="http://[::1]/x")
    await seller.fails("upload", 400, "unsupported_scheme", url="file:///etc/passwd")
    await seller.fails("upload", 400, "invalid_url", url="http:///nohost")
    await seller.fails("upload", 400, "host_not_found", url="http://nowhere.invalid/x")
    await seller.fails("upload", 400, "parameter_too_long", url="http://a.example/" + "x" * 2048)
    assert (await seller.ok("fetchallfiles"))["count"] == 0


async def test_upload_by_url_reports_a_failing_server(seller: Seller, web: LocalServer) -> None:
    body = await seller.fails("upload", 400, "url_fetch_failed", url=web.url("/missing"))
    assert "404" in body["message"]
    web.redirect("/away", "http://192.168.0.1/")
    await seller.fails("upload", 400, "target_not_allowed", url=web.url("/away"))


class TestLimits:
    """A 4 KiB upload limit and a 1 s outbound time limit."""

    @pytest.fixture
    def settings(self, db_url: str, tmp_path: Path) -> Settings:
        return make_settings(
            db_url,
            tmp_path / "data",
            outbound_allow=("127.0.0.1",),
            max_upload_bytes=4096,
            outbound_timeout=1,
        )

    async def test_an_upload_over_the_limit_is_file_too_large(
        self, seller: Seller, services: Services
    ) -> None:
        response = await upload(seller, b"x" * 4097)
        body = response.json()
        assert (response.status_code, body["error"]) == (400, "file_too_large")
        assert "4096 bytes" in body["message"]
        assert await blobs(services) == []
        assert leftovers(services) == []
        assert (await upload_ok(seller, b"x" * 4096))["size"] == 4096

    async def test_a_url_over_the_limit_is_file_too_large(self, seller: Seller, web: LocalServer) -> None:
        web.reply("/big", b"x" * 5000)
        web.reply("/big-chunked", b"x" * 5000, chunked=True)
        await seller.fails("upload", 400, "file_too_large", url=web.url("/big"))
        await seller.fails("upload", 400, "file_too_large", url=web.url("/big-chunked"))

    async def test_a_slow_url_times_out(self, seller: Seller, web: LocalServer) -> None:
        web.reply("/slow", b"late", delay=5)
        body = await seller.fails("upload", 400, "timeout", url=web.url("/slow"))
        assert "1 seconds" in body["message"]


# --- fetchallfiles / fetchfile -----------------------------------------------------------------


async def test_fetchallfiles_lists_a_page_and_the_total(seller: Seller) -> None:
    assert await seller.ok("fetchallfiles") == {
        "success": True,
        "message": "Successfully retrieved files",
        "files": [],
        "count": 0,
    }
    ids = [(await upload_ok(seller, bytes([n]), f"f{n}.bin"))["id"] for n in range(3)]
    body = await seller.ok("fetchallfiles")
    assert [f["id"] for f in body["files"]] == ids
    assert body["count"] == 3
    assert set(body["files"][0]) == {
        "id",
        "name",
        "size",
        "authed",
        "url",
        "created",
        "downloads",
        "downloaded",
    }
    page = await seller.ok("fetchallfiles", page=2, limit=2)
    assert ([f["id"] for f in page["files"]], page["count"]) == ([ids[2]], 3)
    await seller.fails("fetchallfiles", 400, "number_out_of_range", page=0)


async def test_fetchallfiles_shows_only_this_applications_files(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await upload_ok(seller, b"mine")
    other = await create_seller(services, client, owner="other", name="other app")
    assert (await other.ok("fetchallfiles"))["files"] == []


async def test_fetchfile_reports_an_unknown_id(seller: Seller) -> None:
    await seller.fails("fetchfile", 404, "file_not_found", id="12345678")
    await seller.fails("fetchfile", 400, "missing_parameter")
    body = await upload_ok(seller, b"z")
    # KeyAuth's clients send `fileid` for the id.
    assert (await seller.ok("fetchfile", fileid=body["id"]))["file"]["id"] == body["id"]


async def test_another_applications_file_is_not_found(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    body = await upload_ok(seller, b"mine")
    other = await create_seller(services, client, owner="other", name="other app")
    await other.fails("fetchfile", 404, "file_not_found", id=body["id"])
    await other.fails("delfile", 404, "file_not_found", id=body["id"])


# --- editfile ----------------------------------------------------------------------------------


async def test_editfile_changes_name_and_authed(seller: Seller, clock: Any) -> None:
    made = await upload_ok(seller, b"content", "old.bin")
    clock.advance(10)
    body = await seller.ok("editfile", id=made["id"], name="new.bin", authed=0)
    assert body["message"] == "Successfully edited file!"
    assert (body["file"]["name"], body["file"]["authed"], body["file"]["size"]) == ("new.bin", 0, 7)
    body = await seller.ok("editfile", id=made["id"], authed=1)
    assert (body["file"]["name"], body["file"]["authed"]) == ("new.bin", 1)


async def test_editfile_with_a_url_replaces_the_content(
    seller: Seller, web: LocalServer, services: Services, settings: Settings
) -> None:
    made = await upload_ok(seller, b"version 1", "app.exe")
    web.reply("/v2/app.exe", b"version 2!")
    body = await seller.ok("editfile", id=made["id"], url=web.url("/v2/app.exe"))
    assert (body["file"]["size"], body["file"]["url"], body["file"]["name"]) == (
        10,
        web.url("/v2/app.exe"),
        "app.exe",
    )
    _, content = await read_all(services, seller.app_id, made["id"])
    assert content == b"version 2!"
    # The old content had no other file: it is gone.
    assert await blobs(services) == [sha(b"version 2!")]


async def test_editfile_with_an_upload_replaces_the_content_under_the_same_id(
    seller: Seller, web: LocalServer, services: Services
) -> None:
    web.reply("/v1/app.exe", b"version 1")
    made = (await seller.ok("upload", url=web.url("/v1/app.exe")))["id"]

    async def edit(content: bytes, **fields: str) -> httpx.Response:
        return await seller.http.post(
            SELLER_PATH,
            params={"sellerkey": seller.key, "type": "editfile", "id": made},
            data=fields,
            files={"file": ("local.exe", content, "application/octet-stream")},
        )

    replaced = await edit(b"version 2, uploaded")
    assert replaced.status_code == 200, replaced.text
    body = replaced.json()["file"]
    assert (body["id"], body["name"], body["size"], body["url"]) == (made, "app.exe", 19, None)
    _, content = await read_all(services, seller.app_id, made)
    assert content == b"version 2, uploaded"
    assert await blobs(services) == [sha(b"version 2, uploaded")]
    both = await edit(b"x", url=web.url("/v1/app.exe"))
    assert (both.status_code, both.json()["error"]) == (400, "file_and_url")
    assert await blobs(services) == [sha(b"version 2, uploaded")]


async def test_editfile_failures(seller: Seller, web: LocalServer) -> None:
    made = await upload_ok(seller, b"keep me", "a.bin")
    await seller.fails("editfile", 404, "file_not_found", id="00000000", name="x")
    await seller.fails("editfile", 400, "nothing_to_change", id=made["id"])
    await seller.fails("editfile", 400, "missing_parameter", name="x")
    await seller.fails("editfile", 400, "invalid_boolean", id=made["id"], authed="maybe")
    await seller.fails("editfile", 400, "target_not_allowed", id=made["id"], url="http://10.0.0.1/a")
    await seller.fails("editfile", 400, "url_fetch_failed", id=made["id"], url=web.url("/nothing"))
    stored = (await seller.ok("fetchfile", id=made["id"]))["file"]
    assert (stored["size"], stored["url"]) == (7, None)


# --- delfile / delallfiles ---------------------------------------------------------------------


async def test_delfile_keeps_content_another_file_shares(
    seller: Seller, settings: Settings, services: Services
) -> None:
    first = await upload_ok(seller, b"shared", "a.bin")
    second = await upload_ok(seller, b"shared", "b.bin")
    body = await seller.ok("delfile", id=first["id"])
    assert body == {"success": True, "message": "Successfully deleted file!"}
    await seller.fails("fetchfile", 404, "file_not_found", id=first["id"])
    assert len(await blobs(services)) == 1
    _, content = await read_all(services, seller.app_id, second["id"])
    assert content == b"shared"
    await seller.ok("delfile", fileid=second["id"])
    assert await blobs(services) == []
    await seller.fails("delfile", 404, "file_not_found", id=second["id"])


async def test_delallfiles_deletes_this_applications_files_only(
    seller: Seller, settings: Settings, services: Services, client: httpx.AsyncClient
) -> None:
    await upload_ok(seller, b"one")
    await upload_ok(seller, b"two")
    await upload_ok(seller, b"shared")
    other = await create_seller(services, client, owner="other", name="other app")
    kept = await upload_ok(other, b"shared")
    body = await seller.ok("delallfiles")
    assert body == {"success": True, "message": "Successfully deleted all files!", "deleted": 3}
    assert (await seller.ok("fetchallfiles"))["count"] == 0
    assert await blobs(services) == [sha(b"shared")]
    assert (await other.ok("fetchfile", id=kept["id"]))["file"]["size"] == 6
    assert (await seller.ok("delallfiles"))["deleted"] == 0


async def test_files_need_the_files_permission(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", permissions="licenses"))["sellerkey"]
    await seller.fails("fetchallfiles", 403, "permission_denied", sellerkey=limited)
    await seller.fails("delallfiles", 403, "permission_denied", sellerkey=limited)


# --- read_content, for the client API's Download File -------------------------------------------


async def test_read_content_refuses_a_file_over_the_transport_limit(
    seller: Seller, settings: Settings, services: Services
) -> None:
    made = await upload_ok(seller, b"x" * 100)
    row, content = await read_all(services, seller.app_id, made["id"], max_bytes=100)
    assert (row["file_id"], len(content)) == (made["id"], 100)
    with pytest.raises(Invalid) as caught:
        await read_all(services, seller.app_id, made["id"], max_bytes=99)
    assert caught.value.error == "file_too_large"
    with pytest.raises(NotFound):
        await read_all(services, seller.app_id, "99999999")


async def test_read_content_fetches_a_url_file_again_when_its_content_is_missing(
    seller: Seller, settings: Settings, services: Services, web: LocalServer
) -> None:
    web.reply("/f", b"from the web")
    made = await seller.ok("upload", url=web.url("/f"))
    await lose(services, sha(b"from the web"))
    _, content = await read_all(services, seller.app_id, made["id"])
    assert content == b"from the web"
    assert len(web.requests) == 2
    assert await services.files.exists(sha(b"from the web"))


async def test_read_content_of_a_lost_upload_is_a_server_fault(
    seller: Seller, settings: Settings, services: Services
) -> None:
    made = await upload_ok(seller, b"lost")
    await lose(services, sha(b"lost"))
    with pytest.raises(filestore.ContentMissing):
        await read_all(services, seller.app_id, made["id"])


# --- the store's removal race --------------------------------------------------------------------


@pytest.fixture(params=["folder", "database"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Each kind of store on its own: a folder, and the database (PostgreSQL)."""
    if request.param == "folder":
        yield filestore.LocalFileStore(tmp_path / "files")
        return
    url: str = request.getfixturevalue("postgres_test_url")
    databases.empty_postgres(url)
    db: Database = await open_database(url, pool_size=3)
    try:
        yield filestore.DatabaseFileStore(db, MovableClock())
    finally:
        await db.close()


async def test_a_blob_removed_while_a_row_appears_is_put_back(store: filestore.FileStore) -> None:
    """remove_if_unreferenced asks again once it holds the blob: a reference that appeared
    meanwhile (a concurrent upload of the same content) keeps it."""
    staged = await filestore.stage_bytes(store, b"content")
    await staged.publish()
    await staged.commit()
    answers = iter([False, True])

    async def referenced() -> bool:
        return next(answers)

    assert await store.remove_if_unreferenced(staged.key, referenced) is False
    assert await store.exists(staged.key)

    async def never() -> bool:
        return False

    assert await store.remove_if_unreferenced(staged.key, never) is True
    assert not await store.exists(staged.key)
    assert await store.keys() == []
    if isinstance(store, filestore.LocalFileStore):
        assert list(store.folder.rglob("*.*")) == []


async def test_commit_restores_a_blob_a_concurrent_removal_took(store: filestore.FileStore) -> None:
    staged = await filestore.stage_bytes(store, b"content")
    await staged.publish()

    async def never() -> bool:
        return False

    assert await store.remove_if_unreferenced(staged.key, never)  # the last other reference went
    await staged.commit()
    assert await filestore.read(store, staged.key) == b"content"
    if isinstance(staged, filestore.LocalStaged):
        assert not staged.temp.exists()


async def test_content_larger_than_a_chunk_goes_a_chunk_at_a_time(store: filestore.FileStore) -> None:
    content = bytes(range(256)) * (filestore.CHUNK // 256 * 2 + 3)  # two chunks and a bit
    staged = await filestore.stage_bytes(store, content)
    await staged.publish()
    await staged.commit()
    chunks = [chunk async for chunk in store.chunks(staged.key)]
    assert [len(chunk) for chunk in chunks] == [filestore.CHUNK, filestore.CHUNK, 768]
    assert b"".join(chunks) == content
    again = await filestore.stage_bytes(store, content)  # the same content is stored once
    await again.publish()
    await again.commit()
    assert await store.keys() == [staged.key]


async def test_missing_content_is_content_missing(store: filestore.FileStore) -> None:
    with pytest.raises(filestore.ContentMissing):
        await filestore.read(store, "0" * 64)


def test_a_storage_key_is_only_ever_a_digest(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="storage key"):
        filestore.LocalFileStore(tmp_path).path("../../etc/passwd")


async def test_the_audit_log_describes_file_changes_without_the_url(seller: Seller, web: LocalServer) -> None:
    web.reply("/f.bin", b"12345")
    made = await seller.ok("upload", url=web.url("/f.bin?key=s3cret"))
    await seller.ok("editfile", id=made["id"], name="renamed.bin", authed=0)
    await seller.ok("delfile", id=made["id"])
    response = await seller.call("fetchauditlogs")
    assert "s3cret" not in response.text
    logs = {entry["action"]: entry for entry in response.json()["logs"]}
    added = {"name": "f.bin", "size": 5, "authed": 1, "url_host": "127.0.0.1"}
    assert (logs["upload"]["target"], logs["upload"]["before"], logs["upload"]["after"]) == (
        f"file:{made['id']}",
        None,
        added,
    )
    renamed = {**added, "name": "renamed.bin", "authed": 0}
    assert (logs["editfile"]["before"], logs["editfile"]["after"]) == (added, renamed)
    assert (logs["delfile"]["before"], logs["delfile"]["after"]) == (renamed, None)


async def test_content_an_older_version_kept_in_the_folder_is_copied_into_the_database(
    postgres_test_url: str, tmp_path: Path
) -> None:
    """An upgraded PostgreSQL deployment: rows name content that is only in `<data dir>/files`."""
    databases.empty_postgres(postgres_test_url)
    folder = filestore.LocalFileStore(filestore.root(tmp_path))
    old = await filestore.stage_bytes(folder, b"uploaded before the upgrade")
    await old.publish()
    await old.commit()
    db = await open_database(postgres_test_url, pool_size=3)
    try:
        store = filestore.open_file_store(db, MovableClock(), tmp_path, None)
        assert isinstance(store, filestore.DatabaseFileStore)
        assert await store.keys() == []
        assert await filestore.read(store, old.key) == b"uploaded before the upgrade"
        assert await store.keys() == [old.key]  # copied in: every node serves it from now on
        folder.path(old.key).unlink()
        assert await filestore.read(store, old.key) == b"uploaded before the upgrade"
    finally:
        await db.close()


async def test_deleting_an_application_deletes_its_files_content(seller: Seller, services: Services) -> None:
    """Its files' content goes with it (the folder's files, or the database's blobs and chunks),
    except content a file of another application has too."""
    other = await create_seller(services, seller.http, owner="other", name="other")
    await upload_ok(seller, b"only this application's")
    await upload_ok(seller, b"shared content")
    await upload_ok(other, b"shared content")
    assert len(await blobs(services)) == 2
    await apps.delete(services.db, services.files, seller.app_id, seller.name)
    assert await blobs(services) == [sha(b"shared content")]
    assert await filestore.read(services.files, sha(b"shared content")) == b"shared content"
    if services.db.dialect == "postgresql":
        assert await services.db.fetch_value("SELECT COUNT(*) FROM file_chunks") == 1
