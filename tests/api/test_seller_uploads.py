"""Multipart bodies: text fields join the parameters, accepted file fields reach the handler."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from licensegate.operations.declarations import Operation, Param
from licensegate.operations.seller.registry import SellerCall, registry
from licensegate.services import Services
from tests.helpers import SELLER_PATH, Seller

pytestmark = pytest.mark.anyio


@pytest.fixture
async def upload_operation() -> AsyncIterator[None]:
    async def receive(call: SellerCall) -> dict[str, Any]:
        upload = call.uploads.get("file")
        content = upload.file.read() if upload is not None else b""
        return {
            "name": call.args.text("name"),
            "size": len(content),
            "filename": upload.filename if upload else None,
        }

    op = Operation(
        type="__upload",
        group="test",
        summary="upload",
        handler=receive,
        params=(Param("name", required=True),),
        uploads=("file",),
    )
    registry.add(op)
    yield
    registry._by_type.pop("__upload")
    registry._ordered.remove(op)


@pytest.mark.usefixtures("upload_operation")
async def test_multipart_fields_and_file_reach_the_handler(seller: Seller, client: httpx.AsyncClient) -> None:
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "__upload"},
        data={"name": "tool.zip"},
        files={"file": ("tool.zip", b"x" * 3000, "application/zip")},
    )
    assert response.json() == {"success": True, "name": "tool.zip", "size": 3000, "filename": "tool.zip"}


@pytest.mark.usefixtures("upload_operation")
async def test_unexpected_file_fields_and_files_for_other_operations_are_refused(
    seller: Seller, client: httpx.AsyncClient
) -> None:
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "__upload", "name": "a"},
        files={"other": ("a.bin", b"1")},
    )
    assert (response.status_code, response.json()["error"]) == (400, "invalid_multipart")
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "addsub"},
        data={"name": "viaform", "level": "3"},
        files={"file": ("a.bin", b"1")},
    )
    assert (response.status_code, response.json()["error"]) == (400, "invalid_multipart")


async def test_multipart_text_fields_work_for_any_operation(
    seller: Seller, client: httpx.AsyncClient
) -> None:
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "addsub"},
        files={"name": (None, "multi"), "level": (None, "4")},
    )
    assert response.status_code == 200, response.text
    assert "multi" in [s["name"] for s in (await seller.ok("fetchallsubs"))["subs"]]


@pytest.mark.usefixtures("upload_operation")
async def test_oversized_upload_is_refused_before_reading(
    seller: Seller, client: httpx.AsyncClient, services: Services
) -> None:
    limit = services.settings.max_upload_bytes
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "__upload", "name": "big"},
        headers={"content-type": "multipart/form-data; boundary=x", "content-length": str(limit + 10**6)},
        content=b"--x--\r\n",
    )
    assert (response.status_code, response.json()["error"]) == (400, "request_too_large")


# --- issue 10 item 10: the seller key is checked before an upload is read ----------------------


class CountingBody(httpx.AsyncByteStream):
    """A 48 MiB multipart upload sent in 1 MiB pieces, counting how many the server took."""

    PIECE = 1024 * 1024
    PIECES = 48

    def __init__(self, boundary: str) -> None:
        self.boundary = boundary
        self.sent = 0

    def head(self) -> bytes:
        return (
            f'--{self.boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()

    def tail(self) -> bytes:
        return f"\r\n--{self.boundary}--\r\n".encode()

    def length(self) -> int:
        return len(self.head()) + self.PIECE * self.PIECES + len(self.tail())

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head()
        for _ in range(self.PIECES):
            self.sent += 1
            yield b"\0" * self.PIECE
        yield self.tail()


async def upload_with(client: httpx.AsyncClient, sellerkey: str | None) -> tuple[httpx.Response, int]:
    boundary = "lgtestboundary"
    body = CountingBody(boundary)
    params = {"type": "upload"}
    if sellerkey is not None:
        params["sellerkey"] = sellerkey
    response = await client.post(
        SELLER_PATH,
        params=params,
        headers={
            "content-type": f"multipart/form-data; boundary={boundary}",
            "content-length": str(body.length()),
        },
        content=body,
    )
    return response, body.sent


@pytest.mark.parametrize(
    ("sellerkey", "status", "error"),
    [
        ("0" * 32, 401, "unknown_seller_key"),
        ("not-a-key", 401, "invalid_seller_key"),
        (None, 401, "missing_seller_key"),
    ],
)
async def test_an_upload_is_refused_before_its_body_is_read(
    seller: Seller, client: httpx.AsyncClient, sellerkey: str | None, status: int, error: str
) -> None:
    response, sent = await upload_with(client, sellerkey)
    assert (response.status_code, response.json()["error"]) == (status, error)
    assert sent <= 1, f"{sent} MiB of the upload were read before the seller key was checked"


async def test_an_upload_by_a_key_without_the_files_area_is_refused_unread(
    seller: Seller, client: httpx.AsyncClient
) -> None:
    limited = (await seller.ok("addsellerkey", permissions="licenses"))["sellerkey"]
    response, sent = await upload_with(client, limited)
    assert (response.status_code, response.json()["error"]) == (403, "permission_denied")
    assert sent <= 1
    response, sent = await upload_with(client, seller.key)
    assert response.status_code == 200, response.json()
    assert sent == CountingBody.PIECES


async def test_an_upload_with_its_credentials_in_the_form_body_is_told_where_they_go(
    seller: Seller, client: httpx.AsyncClient
) -> None:
    # All in the body (as a browser form or `curl -F` sends it): the query names no operation.
    response = await client.post(
        SELLER_PATH,
        data={"sellerkey": seller.key, "type": "upload", "name": "tool.zip"},
        files={"file": ("tool.zip", b"x" * 10, "application/zip")},
    )
    body = response.json()
    assert (response.status_code, body["error"]) == (400, "upload_credentials_in_query")
    assert "query string" in body["message"]
    assert "Too many files" not in body["message"]
    # The type in the query, the key in the body: the body is not read to find it.
    response = await client.post(
        SELLER_PATH,
        params={"type": "upload"},
        data={"sellerkey": seller.key, "name": "tool.zip"},
        files={"file": ("tool.zip", b"x" * 10, "application/zip")},
    )
    body = response.json()
    assert (response.status_code, body["error"]) == (401, "missing_seller_key")
    assert "query string" in body["message"]
