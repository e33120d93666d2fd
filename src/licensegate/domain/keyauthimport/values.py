"""Reading KeyAuth's values as its sources give them (numbers as text, flags as 1/0 or
true/false, empty as absent), and naming rows in a warning."""

from __future__ import annotations

NAMED = 20  # rows named in one warning; the rest are counted


def integer(value: object) -> int | None:
    """KeyAuth sends numbers as text ("1800000000", "86400.0"); empty or absent is None."""
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    if isinstance(value, int):
        return value
    try:
        return int(float(str(value).strip()))
    except ValueError:
        return None


def text(value: object) -> str | None:
    if value is None:
        return None
    result = str(value)
    return result if result != "" else None


def flag(value: object, default: bool) -> bool:
    """1/0, "1"/"0", true/false as KeyAuth sends them."""
    if value is None or value == "":
        return default
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def named(names: list[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
