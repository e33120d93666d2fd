"""`licensegate_client.client.verify_answer`: what makes an answer untrustworthy, without a server."""

from __future__ import annotations

import pytest

from licensegate import signing
from licensegate_client.client import ClientError, TamperedAnswer, verify_answer

SIGNER = signing.Signer(b"\x01" * 32)
BODY = b'{"success":true,"code":68,"message":"ok","clientnonce":"n1"}'
NOW = 1_800_000_000  # the checking program's clock: a fixed moment, not the wall clock


def signed(body: bytes = BODY, stamp: int | None = None) -> dict[str, str]:
    timestamp = str(NOW if stamp is None else stamp)
    return {"x-signature-timestamp": timestamp, "x-signature-ed25519": SIGNER.sign(timestamp.encode() + body)}


def check(body: bytes, headers: dict[str, str], nonce: str | None = "n1") -> dict[str, object]:
    return verify_answer(body, headers, (SIGNER.public_key,), now=NOW, clientnonce=nonce)


def test_a_genuine_answer_passes() -> None:
    assert check(BODY, signed())["message"] == "ok"
    assert check(BODY, signed(), nonce=None)["success"] is True


@pytest.mark.parametrize(
    ("headers", "match"),
    [
        ({}, "no signature"),
        ({"x-signature-timestamp": "12", "x-signature-ed25519": "00"}, "malformed"),
        ({"x-signature-timestamp": "abcdefghij", "x-signature-ed25519": "00"}, "malformed"),
    ],
)
def test_missing_or_malformed_headers(headers: dict[str, str], match: str) -> None:
    with pytest.raises(TamperedAnswer, match=match):
        check(BODY, headers)


def test_old_future_altered_and_unbound_answers_are_refused() -> None:
    with pytest.raises(TamperedAnswer, match="clock"):
        check(BODY, signed(stamp=NOW - 60))
    with pytest.raises(TamperedAnswer, match="clock"):
        check(BODY, signed(stamp=NOW + 60))
    with pytest.raises(TamperedAnswer, match="signature"):
        check(BODY.replace(b"ok", b"OK"), signed())
    with pytest.raises(TamperedAnswer, match="clientnonce"):
        check(BODY, signed(), nonce="n2")
    text = b"KeyAuth_Invalid"
    with pytest.raises(ClientError, match="not JSON"):
        check(text, signed(text))


def test_origin_of_is_what_browsers_send() -> None:
    from licensegate_client.client import origin_of

    assert origin_of("https://Licenses.Example.com/") == "https://licenses.example.com"
    assert origin_of("https://licenses.example.com:443/panel/1/") == "https://licenses.example.com"
    assert origin_of("http://localhost:8000") == "http://localhost:8000"
    assert origin_of("http://[::1]:8000/x") == "http://[::1]:8000"
    with pytest.raises(ValueError, match="absolute"):
        origin_of("licenses.example.com")
