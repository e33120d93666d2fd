"""License key masks: placeholders, literals, character sets and the randomness source."""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Sequence

import pytest

from licensegate.domain import keygen
from licensegate.domain.errors import Invalid


def test_default_mask_makes_six_groups_of_six_mixed_case_characters() -> None:
    key = keygen.fill(keygen.DEFAULT_MASK)
    assert re.fullmatch(r"[0-9a-zA-Z]{6}(-[0-9a-zA-Z]{6}){5}", key)


def test_fill_replaces_every_placeholder_and_keeps_every_literal() -> None:
    mask = "PRO-**_x.X-*"
    key = keygen.fill(mask)
    assert len(key) == len(mask)
    for made, template in zip(key, mask, strict=True):
        if template == "*":
            assert made in keygen.ALPHABETS[keygen.MIXED]
        else:
            assert made == template  # X and x are literals, not placeholders


@pytest.mark.parametrize(
    ("character", "allowed"),
    [
        (keygen.MIXED, string.digits + string.ascii_letters),
        (keygen.UPPER, string.digits + string.ascii_uppercase),
        (keygen.LOWER, string.digits + string.ascii_lowercase),
    ],
)
def test_character_sets(character: int, allowed: str) -> None:
    seen = set("".join(keygen.fill("*" * 64, character) for _ in range(50)))
    assert seen <= set(allowed)
    # 3,200 draws from at most 62 symbols: every symbol of the alphabet shows up.
    assert seen == set(allowed)


def test_unknown_character_set_is_refused() -> None:
    with pytest.raises(Invalid) as caught:
        keygen.fill("***", 4)
    assert caught.value.error == "invalid_parameter"


def test_fill_draws_from_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def choice(seq: Sequence[str]) -> str:
        calls.append("".join(seq))
        return seq[0]

    monkeypatch.setattr(secrets, "choice", choice)
    assert keygen.fill("A-***", keygen.UPPER) == "A-000"
    assert calls == [keygen.ALPHABETS[keygen.UPPER]] * 3


def test_a_mask_without_placeholders_is_a_custom_key() -> None:
    assert keygen.is_custom("MY-FIXED-KEY")
    assert not keygen.is_custom("MY-*")
    assert keygen.fill("MY-FIXED-KEY") == "MY-FIXED-KEY"


@pytest.mark.parametrize("mask", ["", "has space", "tab\there", "a,b", "nl\n", "ctl\x01", "x" * 129])
def test_check_mask_refuses_masks_that_make_unlistable_keys(mask: str) -> None:
    with pytest.raises(Invalid) as caught:
        keygen.check_mask(mask)
    assert caught.value.error == "invalid_mask"


def test_check_mask_accepts_ordinary_masks() -> None:
    assert keygen.check_mask(keygen.DEFAULT_MASK) == keygen.DEFAULT_MASK
    assert keygen.check_mask("KEY_*#*.*") == "KEY_*#*.*"
