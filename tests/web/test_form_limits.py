"""The limits on what any dashboard post may carry: a declared length over the route's allowance
is refused (413) before a byte of the body is read, a body without one (chunked) is counted as it
arrives and cut off at the allowance, a file part on a route that takes no files is refused (400)
without anything spooled to disk, and the license import, a route that takes a file, checks who
may post before it reads the body, within its own allowance."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import starlette.formparsers

from licensegate.services import Services
from licensegate.web import forms
from licensegate.web.pages import license_import
from tests.web.pages import Dashboard, Shop, browser, make_owner, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio
ORDINARY = "/dashboard/account/sessions/end-others"  # a signed-in route taking an ordinary form
CHUNK = 64 * 1024


class Sent:
    """A request body sent chunk by chunk, counting how much of it the server asked for."""

    def __init__(self, body: bytes, chunks: int = 1) -> None:
        self.parts = [body] * chunks
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            self.read += len(part)
            yield part


@pytest.fixture
def spooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every temporary file the multipart parser opens for a file part."""
    opened: list[int] = []

    def spool(*args: Any, **kwargs: Any) -> tempfile.SpooledTemporaryFile[bytes]:
        opened.append(1)
        return tempfile.SpooledTemporaryFile(*args, **kwargs)

    monkeypatch.setattr(starlette.formparsers, "SpooledTemporaryFile", spool)
    return opened


async def signed_in(services: Services, dash: Dashboard) -> Shop:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get("/dashboard/account")
    return shop


def multipart(csrf: str, *parts: tuple[str, str | None, bytes]) -> tuple[str, bytes]:
    """A multipart body of (name, filename, content) parts after the CSRF field."""
    boundary = "lgboundary"
    out = [f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{csrf}\r\n'.encode()]
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + content + b"\r\n")
    out.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", b"".join(out)


async def post(
    dash: Dashboard, url: str, body: Sent, content_type: str, length: int | None
) -> httpx.Response:
    headers = {"content-type": content_type}
    if length is not None:
        headers["content-length"] = str(length)
    return await dash.http.post(url, content=body, headers=headers, follow_redirects=False)


async def test_a_declared_length_over_the_allowance_is_refused_unread(
    services: Services, dash: Dashboard, spooled: list[int]
) -> None:
    await signed_in(services, dash)
    over = forms.MAX_FORM_BYTES + 1
    for content_type in ("application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        body = Sent(b"x" * CHUNK, chunks=over // CHUNK + 1)
        refused = await post(dash, ORDINARY, body, content_type, over)
        assert refused.status_code == 413, content_type
        assert refused.headers["content-type"].startswith("text/html")
        said = text_of(refused.text)
        assert "Too large" in said
        assert f"The request body is too large (at most {forms.MAX_FORM_BYTES} bytes)" in said
        assert body.read == 0, content_type  # not one chunk asked for
    assert spooled == []
    # A length that is not a number: refused as malformed.
    lied = await dash.http.post(
        ORDINARY,
        content=b"confirmed=1",
        headers={"content-type": "application/x-www-form-urlencoded", "content-length": "1e3"},
    )
    assert lied.status_code == 400


async def test_a_body_without_a_length_is_cut_off_at_the_allowance(
    services: Services, dash: Dashboard, spooled: list[int]
) -> None:
    await signed_in(services, dash)
    chunks = 4 * forms.MAX_FORM_BYTES // CHUNK  # four times the allowance, if it were all read
    # A multipart body: a text field that never ends.
    content_type, start = multipart(dash.csrf, ("confirmed", None, b"1"))
    start = start.removesuffix(b"--lgboundary--\r\n")
    start += b'--lgboundary\r\nContent-Disposition: form-data; name="note"\r\n\r\n'
    for kind, first in (("application/x-www-form-urlencoded", b""), (content_type, start)):
        body = Sent(b"x" * CHUNK, chunks=chunks)
        body.parts[0] = first + body.parts[0]
        refused = await post(dash, ORDINARY, body, kind, None)
        assert refused.status_code == 413, kind
        assert "The request body is too large" in text_of(refused.text)
        assert body.read <= forms.MAX_FORM_BYTES + 2 * CHUNK, kind
        # A body longer than it declared is counted the same way.
        body = Sent(b"x" * CHUNK, chunks=chunks)
        body.parts[0] = first + body.parts[0]
        refused = await post(dash, ORDINARY, body, kind, 1000)
        assert refused.status_code == 413, kind
        assert body.read <= forms.MAX_FORM_BYTES + 2 * CHUNK, kind
    assert spooled == []


async def test_a_file_part_is_refused_where_no_file_is_taken(
    services: Services, dash: Dashboard, spooled: list[int]
) -> None:
    await signed_in(services, dash)
    content_type, body = multipart(dash.csrf, ("confirmed", None, b"1"), ("file", "a.bin", b"abc"))
    refused = await dash.http.post(ORDINARY, content=body, headers={"content-type": content_type})
    assert refused.status_code == 400
    assert "This form does not take files." in text_of(refused.text)
    assert spooled == []  # refused at the part's headers: nothing written anywhere
    # The same form without the file is an ordinary multipart form, read as any other.
    content_type, body = multipart(dash.csrf, ("confirmed", None, b"1"))
    kept = await dash.http.post(ORDINARY, content=body, headers={"content-type": content_type})
    assert kept.status_code == 303
    # A body that ends mid-part: refused, never a 500.
    content_type, body = multipart(dash.csrf, ("junk", None, b""), ("x", None, b"y"))
    broken = await dash.http.post(
        ORDINARY, content=body[:-8] + b"garbage", headers={"content-type": content_type}
    )
    assert broken.status_code in (200, 400, 403)  # an unfinished body is never a 500
    assert spooled == []


async def test_the_license_import_takes_a_file_within_its_own_allowance(
    services: Services, dash: Dashboard, spooled: list[int]
) -> None:
    shop = await signed_in(services, dash)
    url = f"/dashboard/apps/{shop.app_id}/licenses/import"
    await dash.get(url)
    # A file near the import's limit: a report, then imported.
    lines = "key\nIMPORT-1\n" + "\n" * (120 * 1024)  # blank lines are skipped
    content_type, body = multipart(
        dash.csrf, ("level", None, b"1"), ("days", None, b"30"), ("file", "keys.csv", lines.encode())
    )
    report = await dash.http.post(url, content=body, headers={"content-type": content_type})
    assert report.status_code == 200
    assert "1 key would be created." in text_of(report.text)
    assert len(spooled) == 1
    # The confirming post carries the text back with the CRLF line ends a browser sends, twice
    # the bytes of the file's LF ones: still within the import's allowance, and imported.
    crlf = lines.replace("\n", "\r\n").encode()
    content_type, body = multipart(
        dash.csrf,
        ("confirmed", None, b"1"),
        ("level", None, b"1"),
        ("days", None, b"30"),
        ("content", None, crlf),
    )
    assert len(crlf) > license_import.MAX_BYTES
    done = await dash.http.post(
        url, content=body, headers={"content-type": content_type}, follow_redirects=True
    )
    assert done.status_code == 200
    assert "Imported 1 key." in text_of(done.text)
    assert (
        await services.db.fetch_value(
            "SELECT COUNT(*) FROM license_keys WHERE app_id = ? AND key = 'IMPORT-1'", shop.app_id
        )
        == 1
    )

    # Over the import's allowance: refused from the declared length, on the form, unread.
    await dash.get(url)
    over = license_import.MAX_BODY + 1
    sent = Sent(b"x" * CHUNK, chunks=over // CHUNK + 1)
    refused = await post(dash, url, sent, "multipart/form-data; boundary=x", over)
    assert refused.status_code == 413
    assert "The file is larger than 128 KiB; import it in parts." in text_of(refused.text)
    assert 'name="file"' in refused.text  # the import form again, to choose another file
    assert sent.read == 0
    # An upload must declare its length.
    sent = Sent(b"x" * CHUNK, chunks=2)
    unsized = await post(dash, url, sent, "multipart/form-data; boundary=x", None)
    assert unsized.status_code == 400
    assert "Content-Length" in text_of(unsized.text)
    assert sent.read == 0
    # Two files: refused.
    content_type, body = multipart(dash.csrf, ("file", "a.csv", b"key\nA\n"), ("file", "b.csv", b"key\nB\n"))
    two = await dash.http.post(url, content=body, headers={"content-type": content_type})
    assert two.status_code == 400
    assert "Too many files" in text_of(two.text)
    assert len(spooled) == 2
    many = tuple(("f", None, b"1") for _ in range(forms.MAX_UPLOAD_FIELDS + 1))
    content_type, body = multipart(dash.csrf, *many)
    crowded = await dash.http.post(url, content=body, headers={"content-type": content_type})
    assert crowded.status_code == 400
    assert "Too many fields" in text_of(crowded.text)


async def test_the_license_import_checks_who_posts_before_reading(
    services: Services, dash: Dashboard, spooled: list[int]
) -> None:
    shop = await make_shop(services)
    await make_owner(services, "mallory")
    await dash.sign_in("mallory")
    await dash.get("/dashboard/account")
    url = f"/dashboard/apps/{shop.app_id}/licenses/import"
    sent = Sent(b"x" * CHUNK, chunks=2)
    denied = await post(dash, url, sent, "multipart/form-data; boundary=x", 2 * CHUNK)
    assert denied.status_code == 403
    assert sent.read == 0
    # Not our form (no token): refused as forged, whatever was spooled closed.
    _, body = multipart("0" * 64, ("file", "a.csv", b"key\nA\n"))
    await dash.sign_in("alice")
    await dash.get(url)
    forged = await dash.http.post(
        url, content=body, headers={"content-type": "multipart/form-data; boundary=lgboundary"}
    )
    assert forged.status_code == 403
    assert "This form expired or was sent from another site" in text_of(forged.text)
    # The page's script sends the token in a header: a wrong one is refused before the body is
    # read, here and on the Files page; the right one lets the body be read.
    for target in (url, f"/dashboard/apps/{shop.app_id}/files/upload"):
        sent = Sent(b"x" * CHUNK, chunks=2)
        headers = {"content-type": "multipart/form-data; boundary=x", "x-csrf-token": "0" * 64}
        headers["content-length"] = str(2 * CHUNK)
        wrong = await dash.http.post(target, content=sent, headers=headers)
        assert wrong.status_code == 403, target
        assert sent.read == 0, target
    content_type, body = multipart("", ("file", "a.csv", b"key\nA\n"))
    right = await dash.http.post(
        url, content=body, headers={"content-type": content_type, "x-csrf-token": dash.csrf}
    )
    assert right.status_code == 200
    assert "1 key would be created." in text_of(right.text)
    assert (
        await services.db.fetch_value("SELECT COUNT(*) FROM license_keys WHERE app_id = ?", shop.app_id) == 0
    )


async def test_the_customer_panel_refuses_an_oversized_form_and_files(
    services: Services, spooled: list[int]
) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "updatesettings", customerpanel="1")
    url = f"/panel/{shop.app_id}/signin"
    async with browser(services) as page:
        await page.get(f"/panel/{shop.app_id}/")
        big = await page.post(url, {"username": "kim", "password": "x" * 5000})
        assert big.status_code == 413
        assert "The request body is too large (at most 4096 bytes)" in text_of(big.text)
        content_type, body = multipart(page.csrf, ("username", None, b"kim"), ("file", "a.bin", b"abc"))
        with_file = await page.http.post(url, content=body, headers={"content-type": content_type})
        assert with_file.status_code == 400
        assert "This form does not take files." in text_of(with_file.text)
    assert spooled == []
