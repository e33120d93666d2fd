"""How the customer panel says how long until the next HWID reset: two units, rounded up (a
second less than the cooldown still reads as the cooldown)."""

from __future__ import annotations

import pytest

from licensegate.domain.panel import remaining_text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "1 second"),
        (59, "59 seconds"),
        (61, "1 minute 1 second"),
        (2600, "43 minutes 20 seconds"),
        (3600, "1 hour"),
        (86399, "1 day"),
        (90061, "1 day 2 hours"),
        (604799, "7 days"),
    ],
)
def test_the_wait_reads_in_two_units_rounded_up(seconds: int, text: str) -> None:
    assert remaining_text(seconds) == text
