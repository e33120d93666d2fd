"""Oversized URLs and headers against a real `licensegate serve` (Granian, hyper), on SQLite and
PostgreSQL: what reaches the service is answered by it, signed JSON on the client paths; what the
HTTP layer refuses by itself (a target over 65,534 bytes, headers over its buffer or over 100
fields) is its empty, unsigned 414 or 431, as docs/operations.md says."""

from __future__ import annotations

import contextlib
import socket
from urllib.parse import urlencode, urlsplit

import httpx
import orjson
import pytest

from licensegate.api.request import HTTP_MAX_URI_BYTES
from licensegate.domain import webhooks
from licensegate.signing import verify
from tests.live import LiveServer

pytestmark = pytest.mark.server


def exchange(server: LiveServer, head: bytes, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP/1.1 request (so nothing in between shortens or refuses it): status, headers, body."""
    port = urlsplit(server.url).port
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        # The HTTP layer may answer and close before it has read all of an oversized request.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(head + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        top, _, rest = data.partition(b"\r\n\r\n")
        lines = top.decode("latin-1").split("\r\n")
        headers = {
            name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])
        }
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    return int(lines[0].split()[1]), headers, rest


def signed_by(public_key: str, headers: dict[str, str], body: bytes) -> bool:
    stamp = headers["x-signature-timestamp"]
    return verify(public_key, headers["x-signature-ed25519"], stamp.encode() + body)


def test_the_service_answers_what_reaches_it_signed(live_server: LiveServer) -> None:
    created = live_server.create_app("oversized", "app")
    form = urlencode({"type": "init", "ownerid": created["ownerid"], "name": "app"}).encode()
    post = b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\n"

    # A query string over 16 KiB: the target just under the HTTP layer's cap still reaches the service.
    target = b"/api/1.3/?x=" + b"a" * (HTTP_MAX_URI_BYTES - len(b"/api/1.3/?x="))
    head = post % target + b"Content-Length: %d\r\n\r\n" % len(form)
    status, headers, body = exchange(live_server, head, form)
    assert status == 414, body
    assert orjson.loads(body)["error"] == "uri_too_long"
    assert signed_by(created["public_key"], headers, body)

    # Headers over 32 KiB (and under the HTTP layer's buffer).
    head = (
        post % b"/api/1.1/" + b"X-Padding: " + b"b" * 100_000 + b"\r\nContent-Length: %d\r\n\r\n" % len(form)
    )
    status, headers, body = exchange(live_server, head, form)
    assert status == 431, body
    assert orjson.loads(body)["error"] == "headers_too_large"
    assert signed_by(created["public_key"], headers, body)


def test_the_http_layer_answers_beyond_its_caps_unsigned(live_server: LiveServer) -> None:
    target = b"/api/1.3/?x=" + b"a" * (HTTP_MAX_URI_BYTES + 1 - len(b"/api/1.3/?x="))
    status, headers, body = exchange(live_server, b"GET " + target + b" HTTP/1.1\r\nHost: t\r\n\r\n")
    assert (status, body, "x-signature-ed25519" in headers) == (414, b"", False)

    fields = b"".join(b"X-Field-%d: v\r\n" % number for number in range(100))  # 101 with Host
    status, headers, body = exchange(live_server, b"GET /api/1.3/ HTTP/1.1\r\nHost: t\r\n" + fields + b"\r\n")
    assert (status, body, "x-signature-ed25519" in headers) == (431, b"", False)

    huge = b"GET /api/1.3/ HTTP/1.1\r\nHost: t\r\nX-Padding: " + b"b" * 1_000_000 + b"\r\n\r\n"
    status, headers, body = exchange(live_server, huge)
    assert (status, body, "x-signature-ed25519" in headers) == (431, b"", False)


def test_a_webhook_body_at_its_maximum_length_is_read(live_server: LiveServer) -> None:
    created = live_server.create_app("oversized-webhook", "app")
    escaped = "%21" * webhooks.MAX_BODY  # every character escaped: three times the default body limit
    response = httpx.post(
        f"{live_server.url}/api/seller/",
        params={"sellerkey": created["sellerkey"]},
        content=f"type=testwebhook&webid=nosuchhook&body={escaped}".encode(),
        headers={"content-type": "application/x-www-form-urlencoded"},
        timeout=60,
    )
    assert response.json()["error"] == "webhook_not_found", response.text
