"""The refill schedule of usage credits: the boundaries a balance is topped up at (UTC)."""

from __future__ import annotations

import calendar

import pytest

from licensegate.domain import credits
from licensegate.domain.errors import Refusal


def at(text: str) -> int:
    """`YYYY-MM-DD HH:MM` (UTC) as Unix seconds."""
    return calendar.timegm(
        (int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]), 0, 0, 0, 0)
    )


@pytest.mark.parametrize(
    ("period", "minute", "now", "last", "following"),
    [
        ("day", 0, "2026-11-28 00:35", "2026-11-28 00:00", "2026-11-29 00:00"),
        ("day", 9 * 60 + 30, "2026-11-28 09:29", "2026-11-27 09:30", "2026-11-28 09:30"),
        ("day", 9 * 60 + 30, "2026-11-28 09:30", "2026-11-28 09:30", "2026-11-29 09:30"),
        # 2026-11-28 is a Saturday: the week's refill was Monday the 23rd.
        ("week", 6 * 60, "2026-11-28 12:00", "2026-11-23 06:00", "2026-11-30 06:00"),
        ("week", 6 * 60, "2026-11-30 05:59", "2026-11-23 06:00", "2026-11-30 06:00"),
        ("month", 0, "2026-11-28 12:00", "2026-11-01 00:00", "2026-12-01 00:00"),
        ("month", 12 * 60, "2026-12-01 11:00", "2026-11-01 12:00", "2026-12-01 12:00"),
        ("month", 0, "2026-12-31 23:59", "2026-12-01 00:00", "2027-01-01 00:00"),
        ("month", 60, "2027-01-01 00:30", "2026-12-01 01:00", "2027-01-01 01:00"),
    ],
)
def test_boundaries(period: str, minute: int, now: str, last: str, following: str) -> None:
    assert credits.last_boundary(period, minute, at(now)) == at(last)
    assert credits.next_boundary(period, minute, at(now)) == at(following)


def test_time_of_day() -> None:
    assert credits.parse_time("09:30") == 570
    assert credits.time_text(570) == "09:30"
    for bad in ("9:30", "24:00", "12:60", "noon", ""):
        with pytest.raises(Refusal):
            credits.parse_time(bad)
