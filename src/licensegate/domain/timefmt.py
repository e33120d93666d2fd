"""How times are written in responses: Unix seconds, or `YYYY-MM-DD HH:MM:SS` in UTC where the
interface document asks for that form."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache


@lru_cache(maxsize=8192)  # a user's creation time is formatted at every login
def datetime_text(unix_seconds: int) -> str:
    return datetime.fromtimestamp(unix_seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")


def unix_text(unix_seconds: int) -> str:
    """Unix seconds as a string of digits (the interface document's `expiry`, `lastlogin`)."""
    return str(int(unix_seconds))
