"""The client API's envelope, shared by every client operation."""

from __future__ import annotations

import re

from licensegate.api.envelope import CLIENT_FAILURE_CODES, client_failure, client_success
from licensegate.operations.declarations import CLIENT_SUCCESS_CODE

NONCE = re.compile(r"[0-9a-f]{32}")


def test_success_carries_code_68_a_fresh_nonce_and_the_ownerid() -> None:
    first = client_success("AbCdEf1234", "Logged in!", {"info": {"username": "k"}})
    second = client_success("AbCdEf1234", "Logged in!")
    assert list(first) == ["success", "code", "message", "info", "nonce", "ownerid"]
    assert first["success"] is True
    assert first["code"] == CLIENT_SUCCESS_CODE == 68
    assert first["ownerid"] == "AbCdEf1234"
    assert NONCE.fullmatch(first["nonce"])
    assert first["nonce"] != second["nonce"]


def test_webhook_success_code_can_be_69() -> None:
    assert client_success("o", "ok", code=69)["code"] == 69


def test_failure_carries_error_an_integer_code_nonce_and_ownerid() -> None:
    body = client_failure("AbCdEf1234", "Session not found.", "session_not_found", "forbidden")
    assert body["success"] is False
    assert body["error"] == "session_not_found"
    assert body["code"] == CLIENT_FAILURE_CODES["forbidden"]
    assert isinstance(body["code"], int)
    assert body["code"] not in (68, 69)
    assert NONCE.fullmatch(body["nonce"])
    assert body["ownerid"] == "AbCdEf1234"


def test_failure_codes_are_distinct_integers() -> None:
    codes = list(CLIENT_FAILURE_CODES.values())
    assert len(set(codes)) == len(codes)
    assert all(isinstance(c, int) and c not in (68, 69) for c in codes)
