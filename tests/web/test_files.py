"""The Files page: files listed with size, SHA-256 and who may download them; uploaded from a
form (an oversized one refused with 413 before it is read, or after it is, next to the field),
fetched from a URL on a loopback server (internal addresses and failing URLs refused next to the
field), renamed, made public or login-only, replaced with new content under the same id,
deleted one by one or all at once (confirmed); files larger than what the client API sends
flagged; who may open it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate.config import Settings
from licensegate.domain import files
from licensegate.services import Services
from licensegate.web.templating import when
from tests.api.test_seller_files import lose
from tests.conftest import make_settings
from tests.httpservers import FakeDNS, LocalServer, keep_off_the_network, serving
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, text_of

pytestmark = pytest.mark.anyio
MAX_UPLOAD = 8 * 1024
CLIENT_MAX = 4 * 1024
FILE_ID = re.compile(r"<td><code>(\d{8})</code></td>")


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(
        db_url,
        tmp_path / "data",
        outbound_allow=("127.0.0.1",),
        max_upload_bytes=MAX_UPLOAD,
        client_file_bytes=CLIENT_MAX,
    )


@pytest.fixture(autouse=True)
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    return keep_off_the_network(monkeypatch)


@pytest.fixture
def web() -> Iterator[LocalServer]:
    with serving() as running:
        yield running


def path(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/files" + (f"/{action}" if action else "")


async def send(
    dash: Dashboard, url: str, content: bytes | None, filename: str = "tool.zip", **fields: str
) -> httpx.Response:
    """Post an upload form as a browser does (multipart, the page's CSRF token)."""
    data = {"csrf": dash.csrf, **fields}
    sent: dict[str, Any] = {"file": (filename if content is not None else "", content or b"")}
    response = await dash.http.post(url, data=data, files=sent, follow_redirects=True)
    dash.last = response
    return response


async def streamed(body: bytes) -> AsyncIterator[bytes]:
    yield body


async def rows(services: Services, shop: Shop) -> list[dict[str, Any]]:
    return await services.db.fetch_all(
        "SELECT id, file_id, name, url, storage_key, size, authed FROM files WHERE app_id = ? ORDER BY id",
        shop.app_id,
    )


async def signed_in(services: Services, dash: Dashboard) -> Shop:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get(path(shop))
    return shop


async def test_upload_list_and_details(services: Services, dash: Dashboard) -> None:
    shop = await signed_in(services, dash)
    empty = await dash.get(path(shop))
    assert empty.status_code == 200
    assert "No files yet" in text_of(empty.text)
    assert 'enctype="multipart/form-data"' in empty.text
    assert f'data-max-bytes="{MAX_UPLOAD}"' in empty.text
    assert "Up to 8 KiB. Programs can download up to 4 KiB." in text_of(empty.text)

    content = b"\x00licensed program\xff" * 100
    done = await send(dash, path(shop, "upload"), content, "Loader v2.exe", authed="1")
    assert done.status_code == 200
    (row,) = await rows(services, shop)
    said = text_of(done.text)
    assert f"Loader v2.exe is added as file {row['file_id']} (1.8 KiB)." in said
    digest = hashlib.sha256(content).hexdigest()
    assert (row["name"], row["size"], row["storage_key"], row["authed"], row["url"]) == (
        "Loader v2.exe",
        len(content),
        digest,
        1,
        None,
    )
    assert FILE_ID.findall(done.text) == [row["file_id"]]
    assert f"<code>{digest[:8]}…</code>" in done.text
    assert "Logged-in users" in said
    assert "Too large for programs" not in said

    detail = await dash.get(path(shop, row["file_id"]))
    shown = text_of(detail.text)
    assert detail.status_code == 200
    assert "Downloads None yet" in shown
    assert digest in shown
    assert f"1.8 KiB ({len(content):,} bytes)" in shown
    assert "Uploaded" in shown
    assert "Logged-in users only" in shown

    named = await send(dash, path(shop, "upload"), b"abc", "ignored.bin", name="Readme")
    assert "Readme is added" in text_of(named.text)
    assert [r["authed"] for r in await rows(services, shop)] == [1, 0]  # the box left unchecked
    searched = await dash.get(path(shop), params={"search": "LOADER"})
    assert FILE_ID.findall(searched.text) == [row["file_id"]]
    by_size = await dash.get(path(shop), params={"sort": "size"})
    assert FILE_ID.findall(by_size.text)[0] != row["file_id"]
    for bad in ({"sort": "checksum"}, {"search": "x" * 100}):
        assert (await dash.get(path(shop), params=bad)).status_code == 400
    assert (await dash.get(path(shop, "12345678"))).status_code == 404
    assert (await dash.get(path(shop, "x" * 40))).status_code == 404
    audited = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND action = 'upload'", shop.app_id
    )
    assert audited == 2


async def test_uploads_refused_next_to_the_field(services: Services, dash: Dashboard) -> None:
    shop = await signed_in(services, dash)
    nothing = await send(dash, path(shop, "upload"), None)
    assert nothing.status_code == 400
    assert re.search(r'id="f-file-error">Choose a file to upload.<', nothing.text)

    # Over the limit but within the form's allowance: read, then refused by the upload rules.
    over = await send(dash, path(shop, "upload"), b"x" * (MAX_UPLOAD + 1), name="kept name")
    assert over.status_code == 413
    assert re.search(r'id="f-file-error">The file is larger than the limit of 8192 bytes', over.text)
    assert 'value="kept name"' in over.text
    # Far over: refused from its declared length, before the body is read.
    huge = await send(dash, path(shop, "upload"), b"x" * (200 * 1024))
    assert huge.status_code == 413
    assert re.search(r'id="f-file-error">The file is larger than the limit of 8192 bytes', huge.text)
    unsized = await dash.http.post(
        path(shop, "upload"),
        headers={"content-type": "multipart/form-data; boundary=x", "x-csrf-token": dash.csrf},
        content=streamed(b"--x--\r\n"),  # no Content-Length
    )
    assert unsized.status_code == 400
    assert "Content-Length" in text_of(unsized.text)

    bad_name = await send(dash, path(shop, "upload"), b"abc", name="bad\x01name")
    assert bad_name.status_code == 400
    assert re.search(r'id="f-name-error"', bad_name.text)
    forged = await dash.http.post(
        path(shop, "upload"), data={"csrf": "0" * 64}, files={"file": ("a.bin", b"abc")}
    )
    assert forged.status_code == 403
    assert "Form refused" in forged.text
    foreign = await dash.http.post(
        path(shop, "upload"),
        data={"csrf": dash.csrf},
        files={"file": ("a.bin", b"abc")},
        headers={"origin": "https://evil.example"},
    )
    assert foreign.status_code == 403
    two = await dash.http.post(
        path(shop, "upload"),
        data={"csrf": dash.csrf},
        files=[("file", ("a.bin", b"abc")), ("file", ("b.bin", b"def"))],
    )
    assert two.status_code == 400
    assert await rows(services, shop) == []


async def test_add_by_url_and_its_errors(services: Services, dash: Dashboard, web: LocalServer) -> None:
    shop = await signed_in(services, dash)
    web.reply("/dl/tool.bin", b"fetched content")
    added = await dash.post(path(shop, "fetch"), {"url": web.url("/dl/tool.bin?token=s3cret"), "authed": "1"})
    assert added.status_code == 200
    (row,) = await rows(services, shop)
    assert (row["name"], row["size"], row["authed"]) == ("tool.bin", 15, 1)
    assert row["storage_key"] == hashlib.sha256(b"fetched content").hexdigest()
    assert "tool.bin is added as file" in text_of(added.text)
    detail = await dash.get(path(shop, row["file_id"]))
    assert "Fetched from 127.0.0.1" in text_of(detail.text)
    assert "s3cret" not in detail.text  # the URL may carry credentials: only its host is shown

    web.reply("/gone", b"", status=404)
    web.reply("/big", b"y" * (MAX_UPLOAD + 1))
    for url, status, said in (
        ("http://10.1.2.3/file.bin", 400, "a private address"),
        (web.url("/gone"), 400, "HTTP status 404"),
        (web.url("/big"), 413, "larger than the limit of 8192 bytes"),
        ("ftp://127.0.0.1/x", 400, ""),
        ("not a url", 400, ""),
        ("", 400, "Fill this in."),
    ):
        refused = await dash.post(path(shop, "fetch"), {"url": url, "url_name": "named"})
        assert refused.status_code == status, (url, refused.status_code)
        error = re.search(r'id="f-url-error">([^<]+)<', refused.text)
        assert error is not None, url
        assert said in error.group(1), (url, error.group(1))
        assert f'value="{url}"' in refused.text or not url
    assert len(await rows(services, shop)) == 1
    bad_name = await dash.post(path(shop, "fetch"), {"url": web.url("/dl/tool.bin"), "url_name": "a\x7fb"})
    assert bad_name.status_code == 400
    assert re.search(r'id="f-url_name-error"', bad_name.text)


async def test_replace_rename_flag_and_delete(services: Services, dash: Dashboard, web: LocalServer) -> None:
    shop = await signed_in(services, dash)
    await send(dash, path(shop, "upload"), b"version 1", "app.bin", authed="1")
    (first,) = await rows(services, shop)
    file_id = first["file_id"]
    here = path(shop, file_id)
    await dash.get(here)

    replaced = await send(dash, f"{here}/replace", b"version 2, longer", "whatever.bin")
    assert replaced.status_code == 200
    assert "The content of app.bin is replaced (17 bytes); its id stays." in text_of(replaced.text)
    (row,) = await rows(services, shop)
    assert (row["file_id"], row["name"], row["size"]) == (file_id, "app.bin", 17)
    assert row["storage_key"] == hashlib.sha256(b"version 2, longer").hexdigest()
    assert first["storage_key"] not in await services.files.keys()  # the old content is gone
    assert hashlib.sha256(b"version 2, longer").hexdigest() in text_of(replaced.text)
    empty = await send(dash, f"{here}/replace", None)
    assert empty.status_code == 400
    assert re.search(r'id="f-file-error">Choose the file with the new content.<', empty.text)
    too_big = await send(dash, f"{here}/replace", b"z" * (MAX_UPLOAD + 10))
    assert too_big.status_code == 413
    assert re.search(r'id="f-file-error">The file is larger', too_big.text)
    assert (await send(dash, path(shop, "99999999/replace"), b"abc")).status_code == 404

    web.reply("/v3", b"version 3")
    refetched = await dash.post(f"{here}/refetch", {"url": web.url("/v3")})
    assert "The content of app.bin is replaced (9 bytes)" in text_of(refetched.text)
    (row,) = await rows(services, shop)
    assert (row["file_id"], row["size"], row["url"]) == (file_id, 9, web.url("/v3"))
    refused = await dash.post(f"{here}/refetch", {"url": "http://192.168.1.1/x"})
    assert refused.status_code == 400
    assert re.search(r'id="f-url-error"', refused.text)

    renamed = await dash.post(f"{here}/rename", {"name": "App 3.bin"})
    assert f"File {file_id} is now named App 3.bin." in text_of(renamed.text)
    for bad in ("", "a\x00b", "n" * 65):
        refused = await dash.post(f"{here}/rename", {"name": bad})
        assert refused.status_code == 400, bad
        assert re.search(r'id="f-name-error"', refused.text), bad

    public = await dash.post(f"{here}/authed", {"authed": "0", "back": "file"})
    assert "App 3.bin can now be downloaded by any program" in text_of(public.text)
    assert str(public.url).endswith(here)
    assert (await rows(services, shop))[0]["authed"] == 0
    private = await dash.post(f"{here}/authed", {"authed": "1"})
    assert str(private.url).endswith(path(shop))
    assert "logged-in users only" in text_of(private.text)
    assert (await rows(services, shop))[0]["authed"] == 1

    asked = await dash.post(f"{here}/delete", {})
    assert "Delete the file App 3.bin?" in text_of(asked.text)
    assert len(await rows(services, shop)) == 1
    deleted = await dash.post(f"{here}/delete", {"confirmed": "1"})
    assert "The file App 3.bin is deleted." in text_of(deleted.text)
    assert await rows(services, shop) == []
    assert (await dash.post(f"{here}/delete", {"confirmed": "1"})).status_code == 404


async def test_the_seller_downloads_what_programs_get(services: Services, dash: Dashboard) -> None:
    shop = await signed_in(services, dash)
    content = bytes(range(256)) * 10
    await send(dash, path(shop, "upload"), content, "tool.bin", name="Outil été.bin")
    (row,) = await rows(services, shop)
    here = path(shop, row["file_id"])
    assert f'href="{here}/download"' in (await dash.get(here)).text
    got = await dash.http.get(f"{here}/download")
    assert got.status_code == 200
    assert got.content == content
    assert got.headers["content-type"] == "application/octet-stream"
    assert got.headers["content-disposition"] == (
        "attachment; filename=\"Outil _t_.bin\"; filename*=UTF-8''Outil%20%C3%A9t%C3%A9.bin"
    )
    assert (await dash.http.get(path(shop, "99999999/download"))).status_code == 404
    await send(dash, path(shop, "upload"), b"", "empty.bin")
    empty_id = (await rows(services, shop))[1]["file_id"]
    assert (await dash.http.get(path(shop, f"{empty_id}/download"))).content == b""

    await lose(services, row["storage_key"])
    lost = await dash.http.get(f"{here}/download")
    assert lost.status_code == 404
    assert "missing from storage" in text_of(lost.text)


async def test_downloads_by_programs_are_shown(services: Services, dash: Dashboard) -> None:
    shop = await signed_in(services, dash)
    await send(dash, path(shop, "upload"), b"popular", "popular.bin")
    (row,) = await rows(services, shop)
    for _ in range(3):
        await files.note_download(services.db, row["id"], services.clock.now())
    listed = await dash.get(path(shop))
    assert re.search(r'<td class="num">3</td>', listed.text)
    detail = text_of((await dash.get(path(shop, row["file_id"]))).text)
    assert f"Downloads 3 by programs, the latest {when(services.clock.now())}" in detail


async def test_delete_all_is_confirmed(services: Services, dash: Dashboard) -> None:
    shop = await signed_in(services, dash)
    for number in range(3):
        await send(dash, path(shop, "upload"), f"content {number}".encode(), f"f{number}.bin")
    listed = await dash.get(path(shop))
    assert "Delete every file…" in listed.text
    asked = await dash.post(path(shop, "delete-all"), {})
    assert "All 3 files of the application are deleted" in text_of(asked.text)
    assert len(await rows(services, shop)) == 3
    done = await dash.post(path(shop, "delete-all"), {"confirmed": "1"})
    assert "Every file is deleted (3 files)." in text_of(done.text)
    assert await rows(services, shop) == []
    assert await services.files.keys() == []
    assert "Delete every file…" not in done.text


async def test_files_larger_than_clients_download_are_flagged(services: Services, dash: Dashboard) -> None:
    shop = await signed_in(services, dash)
    await send(dash, path(shop, "upload"), b"s" * 100, "small.bin")
    big = await send(dash, path(shop, "upload"), b"b" * (CLIENT_MAX + 1), "big.bin")
    said = text_of(big.text)
    assert "big.bin is added" in said
    assert "Programs cannot download it: it is larger than the 4 KiB the client API sends." in said
    assert "1 file is larger than the 4 KiB the client API sends" in said
    assert said.count("Too large for programs") == 1  # the warning's title
    assert said.count("Too large") == 2  # and the big file's row
    big_id = (await rows(services, shop))[1]["file_id"]
    detail = await dash.get(path(shop, big_id))
    assert "this file is larger than the 4 KiB the client API sends" in text_of(detail.text)
    small_id = (await rows(services, shop))[0]["file_id"]
    assert "Too large" not in text_of((await dash.get(path(shop, small_id))).text)


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_others_get_the_403_page_and_nothing_changes(services: Services, who: str) -> None:
    shop = await make_shop(services)
    async with browser(services) as owner:
        await owner.sign_in("alice")
        await owner.get(path(shop))
        await send(owner, path(shop, "upload"), b"secret build", "Zanzibar.exe")
    (row,) = await rows(services, shop)
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        permissions = "licenses,users,sessions,chats" if who == "manager" else None
        await make_member(services, shop, who, "member", permissions=permissions)
    async with browser(services) as dash:
        await dash.sign_in("member" if who != "bob" else "bob")
        await dash.get("/dashboard/account")
        for url in (path(shop), path(shop, row["file_id"])):
            listed = await dash.get(url)
            assert listed.status_code == 403
            assert "Zanzibar" not in listed.text
        for action in ("upload", f"{row['file_id']}/replace"):
            refused = await send(dash, path(shop, action), b"x" * 5000, "evil.bin")
            assert refused.status_code == 403
        for action, fields in (
            ("fetch", {"url": "http://127.0.0.1:1/x"}),
            ("delete-all", {"confirmed": "1"}),
            (f"{row['file_id']}/rename", {"name": "pwned"}),
            (f"{row['file_id']}/authed", {"authed": "0"}),
            (f"{row['file_id']}/refetch", {"url": "http://127.0.0.1:1/x"}),
            (f"{row['file_id']}/delete", {"confirmed": "1"}),
        ):
            refused = await dash.post(path(shop, action), fields, follow=False)
            assert refused.status_code == 403, action
    assert await rows(services, shop) == [row]


async def test_a_manager_with_the_files_area_uses_the_page(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "filer", permissions="files")
    async with browser(services) as dash:
        await dash.sign_in("filer")
        home = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert f'href="{path(shop)}"' in home.text
        await dash.get(path(shop))
        done = await send(dash, path(shop, "upload"), b"made by a manager", "m.bin")
        assert "m.bin is added" in text_of(done.text)
    actor = await services.db.fetch_value(
        "SELECT actor FROM audit_log WHERE app_id = ? AND action = 'upload'", shop.app_id
    )
    assert actor == "filer"
