"""Client API — Download File (`file`): uploaded files and files added by URL (from a local HTTP
server) come back as lowercase hex in `contents`."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.domain import filestore
from licensegate.services import Services
from tests.conftest import make_settings
from tests.helpers import SELLER_PATH, Client, Seller, client_of, create_seller
from tests.httpservers import LocalServer, keep_off_the_network, serving

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
LIMIT = 4096
ALL_BYTES = bytes(range(256)) * 3
FIELDS = {"success", "code", "message", "contents", "name", "size", "nonce", "ownerid"}


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(
        db_url,
        tmp_path / "data",
        outbound_allow=("127.0.0.1",),
        client_file_bytes=LIMIT,
        outbound_timeout=1,
    )


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_off_the_network(monkeypatch)


@pytest.fixture
def web() -> Iterator[LocalServer]:
    with serving() as running:
        yield running


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def log_in(app: Client, seller: Seller) -> None:
    key = (await seller.ok("add", expiry=30))["key"]
    await app.ok("register", username="kim", key=key, hwid=HWID, **{"pass": "pw"})


async def upload(seller: Seller, content: bytes, filename: str = "tool.bin", authed: str = "0") -> str:
    response = await seller.http.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "upload"},
        data={"authed": authed},
        files={"file": (filename, content, "application/octet-stream")},
    )
    assert response.status_code == 200, response.text
    file_id: str = response.json()["id"]
    return file_id


async def add_by_url(seller: Seller, url: str, authed: str = "0") -> str:
    file_id: str = (await seller.ok("upload", method="POST", url=url, authed=authed))["id"]
    return file_id


async def remove_stored_copy(services: Services, content: bytes) -> None:
    """The stored content gone behind the service's back (from its folder, or the database)."""
    key = hashlib.sha256(content).hexdigest()
    store = services.files
    if isinstance(store, filestore.LocalFileStore):
        store.path(key).unlink()
    else:
        await services.db.execute("DELETE FROM file_blobs WHERE storage_key = ?", key)


def assert_hides(body: dict[str, Any], web: LocalServer) -> None:
    for secret in (web.url("/"), web.host, str(web.port), "http"):
        assert secret not in body["message"], body


# --- uploaded files --------------------------------------------------------------------------------


async def test_file_sends_an_uploaded_file_as_lowercase_hex(app: Client, seller: Seller) -> None:
    file_id = await upload(seller, ALL_BYTES, "payload.dll")
    body = await app.ok("file", fileid=file_id)
    assert set(body) == FIELDS
    assert body["message"] == "File download successful"
    assert body["contents"] == ALL_BYTES.hex()
    assert body["contents"] == body["contents"].lower()
    assert bytes.fromhex(body["contents"]) == ALL_BYTES
    assert (body["name"], body["size"]) == ("payload.dll", len(ALL_BYTES))


async def test_each_download_sent_is_counted_for_the_seller(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    file_id = await upload(seller, b"counted", authed="1")
    listed = (await seller.ok("fetchfile", id=file_id))["file"]
    assert (listed["downloads"], listed["downloaded"]) == (0, None)
    await app.fails("file", 403, "session_not_validated", fileid=file_id)  # refused: not counted
    await log_in(app, seller)
    await app.ok("file", fileid=file_id)
    clock.advance(60)
    await app.ok("file", fileid=file_id)
    listed = (await seller.ok("fetchfile", id=file_id))["file"]
    assert (listed["downloads"], listed["downloaded"]) == (2, clock.now())


async def test_file_sends_an_empty_file(app: Client, seller: Seller) -> None:
    file_id = await upload(seller, b"", "empty.txt")
    body = await app.ok("file", fileid=file_id)
    assert (body["contents"], body["size"]) == ("", 0)


async def test_an_authed_file_needs_a_logged_in_session(app: Client, seller: Seller) -> None:
    file_id = await upload(seller, b"members only", authed="1")
    body = await app.fails("file", 403, "session_not_validated", fileid=file_id)
    assert body["message"] == "Session is not validated"
    assert "contents" not in body
    await log_in(app, seller)
    assert bytes.fromhex((await app.ok("file", fileid=file_id))["contents"]) == b"members only"


async def test_an_open_file_downloads_when_logged_in_too(app: Client, seller: Seller) -> None:
    file_id = await upload(seller, b"open")
    await log_in(app, seller)
    assert (await app.ok("file", fileid=file_id))["contents"] == b"open".hex()


async def test_file_refuses_unknown_missing_and_too_long_ids(
    app: Client, seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await app.fails("file", 404, "file_not_found", fileid="12345678")
    await app.fails("file", 400, "missing_parameter")
    await app.fails("file", 400, "parameter_too_long", fileid="1" * 33)
    other = await create_seller(services, client, owner="other", name="other")
    theirs = await upload(other, b"not yours")
    await app.fails("file", 404, "file_not_found", fileid=theirs)
    await app.fresh().fails("file", 401, "missing_session", fileid=theirs)


async def test_a_file_over_the_client_limit_is_refused_clearly(app: Client, seller: Seller) -> None:
    file_id = await upload(seller, b"x" * (LIMIT + 1))
    body = await app.fails("file", 403, "file_too_large", fileid=file_id)
    assert f"{LIMIT} bytes" in body["message"]
    assert "hexadecimal" in body["message"]
    at_limit = await upload(seller, b"y" * LIMIT)
    assert (await app.ok("file", fileid=at_limit))["size"] == LIMIT


async def test_an_uploaded_file_whose_content_vanished_is_unavailable(
    app: Client, seller: Seller, services: Services
) -> None:
    file_id = await upload(seller, b"gone soon")
    await remove_stored_copy(services, b"gone soon")
    body = await app.fails("file", 403, "file_unavailable", fileid=file_id)
    assert "developer" in body["message"]


# --- files added by URL ----------------------------------------------------------------------------


async def test_a_file_added_by_url_round_trips_from_the_stored_copy(
    app: Client, seller: Seller, web: LocalServer
) -> None:
    web.reply("/dl/loader.exe", ALL_BYTES)
    file_id = await add_by_url(seller, web.url("/dl/loader.exe?token=abc"))
    body = await app.ok("file", fileid=file_id)
    assert set(body) == FIELDS
    assert bytes.fromhex(body["contents"]) == ALL_BYTES
    assert (body["name"], body["size"]) == ("loader.exe", len(ALL_BYTES))
    assert web.url("/") not in str(body)
    assert len(web.requests) == 1  # served from the copy taken when the file was added


async def test_a_file_added_by_url_is_fetched_again_when_its_copy_is_missing(
    app: Client, seller: Seller, web: LocalServer, services: Services
) -> None:
    web.reply("/f.bin", b"first copy")
    file_id = await add_by_url(seller, web.url("/f.bin"))
    await remove_stored_copy(services, b"first copy")
    web.reply("/f.bin", b"fetched again")
    body = await app.ok("file", fileid=file_id)
    assert bytes.fromhex(body["contents"]) == b"fetched again"
    assert body["size"] == len(b"fetched again")
    assert [r.path for r in web.requests] == ["/f.bin", "/f.bin"]
    assert bytes.fromhex((await app.ok("file", fileid=file_id))["contents"]) == b"fetched again"
    assert len(web.requests) == 2  # the new copy is kept


async def test_an_authed_file_by_url_is_refused_before_anything_is_fetched(
    app: Client, seller: Seller, web: LocalServer, services: Services
) -> None:
    web.reply("/secret.bin", b"members")
    file_id = await add_by_url(seller, web.url("/secret.bin"), authed="1")
    await remove_stored_copy(services, b"members")
    await app.fails("file", 403, "session_not_validated", fileid=file_id)
    assert len(web.requests) == 1


async def test_a_failing_source_is_403_with_its_error_and_no_address(
    app: Client, seller: Seller, web: LocalServer, services: Services
) -> None:
    web.reply("/f.bin", b"content")
    file_id = await add_by_url(seller, web.url("/f.bin?key=secret"))
    await remove_stored_copy(services, b"content")
    web.reply("/f.bin", b"gone", status=404)
    body = await app.fails("file", 403, "url_fetch_failed", fileid=file_id)
    assert_hides(body, web)
    assert "secret" not in body["message"]
    web.reply("/f.bin", b"late", delay=3)
    assert_hides(await app.fails("file", 403, "timeout", fileid=file_id), web)
    web.redirect("/f.bin", "http://10.1.2.3/internal")
    body = await app.fails("file", 403, "target_not_allowed", fileid=file_id)
    assert "10.1.2.3" not in body["message"]
    web.stop()
    assert_hides(await app.fails("file", 403, "connection_failed", fileid=file_id), web)


async def test_a_source_that_grew_past_the_limit_is_file_too_large(
    app: Client, seller: Seller, web: LocalServer, services: Services
) -> None:
    web.reply("/f.bin", b"small")
    file_id = await add_by_url(seller, web.url("/f.bin"))
    await remove_stored_copy(services, b"small")
    web.reply("/f.bin", b"z" * (LIMIT + 1))
    await app.fails("file", 403, "file_too_large", fileid=file_id)


async def test_fetching_a_file_again_holds_no_pooled_connection(
    app: Client, seller: Seller, web: LocalServer, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outbound fetch may wait for a slow source: the call runs on the shared database
    handle (a connection per statement), not on one pooled connection held throughout."""
    from licensegate.domain import files

    web.reply("/f.bin", b"first copy")
    file_id = await add_by_url(seller, web.url("/f.bin"))
    await remove_stored_copy(services, b"first copy")
    web.reply("/f.bin", b"fetched again")
    handles: list[object] = []
    reading = files.read_content

    async def noting(*args: Any, **kwargs: Any) -> Any:
        handles.append(args[2])
        return await reading(*args, **kwargs)

    monkeypatch.setattr(files, "read_content", noting)
    assert bytes.fromhex((await app.ok("file", fileid=file_id))["contents"]) == b"fetched again"
    assert handles == [services.db]
