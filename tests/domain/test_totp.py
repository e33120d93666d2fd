"""TOTP against RFC 6238's published test vectors (SHA-1 key "12345678901234567890")."""

from __future__ import annotations

import base64

import pytest

from licensegate.domain import totp

RFC_SECRET = base64.b32encode(b"12345678901234567890").decode()


@pytest.mark.parametrize(
    ("unix_time", "eight_digits"),
    [
        (59, "94287082"),
        (1111111109, "07081804"),
        (1111111111, "14050471"),
        (1234567890, "89005924"),
        (2000000000, "69279037"),
    ],
)
def test_rfc_6238_vectors(unix_time: int, eight_digits: str) -> None:
    assert totp.code_at(RFC_SECRET, totp.step_of(unix_time), digits=8) == eight_digits
    assert totp.code_at(RFC_SECRET, totp.step_of(unix_time)) == eight_digits[-6:]


def test_codes_of_neighbouring_steps_match_and_others_do_not() -> None:
    secret = totp.new_secret()
    now = 1_800_000_000
    step = totp.step_of(now)
    assert totp.matching_step(secret, totp.code_at(secret, step), now) == step
    assert totp.matching_step(secret, totp.code_at(secret, step - 1), now) == step - 1
    assert totp.matching_step(secret, totp.code_at(secret, step + 1), now) == step + 1
    assert totp.matching_step(secret, totp.code_at(secret, step - 3), now) is None
    assert totp.matching_step(secret, "12345", now) is None
    assert totp.matching_step(secret, "abcdef", now) is None


def test_secrets_are_random_base32_of_160_bits() -> None:
    first, second = totp.new_secret(), totp.new_secret()
    assert first != second
    assert len(first) == 32
    assert len(base64.b32decode(first)) == 20


def test_provisioning_uri() -> None:
    uri = totp.provisioning_uri("ABC", "alice", "My App")
    assert uri == "otpauth://totp/My%20App%3Aalice?secret=ABC&issuer=My%20App&digits=6&period=30"
