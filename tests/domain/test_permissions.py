"""Permission areas: the typed names and the stored bits agree."""

from __future__ import annotations

from typing import get_args

from licensegate.domain.permissions import AREAS, Area


def test_every_area_name_has_exactly_one_bit() -> None:
    assert list(AREAS) == list(get_args(Area))
    bits = list(AREAS.values())
    assert all(bit & (bit - 1) == 0 for bit in bits)  # one bit each
    assert len(set(bits)) == len(bits)
