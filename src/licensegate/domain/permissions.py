"""Permission areas shared by seller keys and manager accounts (a bitmask, as KeyAuth's managers use)."""

from __future__ import annotations

from typing import Literal

from licensegate.domain import errorcodes

Area = Literal[
    "licenses",
    "users",
    "subscriptions",
    "chats",
    "sessions",
    "webhooks",
    "files",
    "variables",
    "logs",
    "blacklists",
    "settings",
    "tokens",
    "team",
    "sellerkeys",
]
# Each area's bit; stored in seller keys and team rows, so a bit never changes meaning.
AREAS: dict[Area, int] = {
    "licenses": 1,
    "users": 2,
    "subscriptions": 4,
    "chats": 8,
    "sessions": 16,
    "webhooks": 32,
    "files": 64,
    "variables": 128,
    "logs": 256,
    "blacklists": 512,
    "settings": 1024,
    "tokens": 2048,
    "team": 4096,
    "sellerkeys": 8192,
}
ALL = sum(AREAS.values())


def allows(permissions: int, area: Area | Literal[""]) -> bool:
    """Whether `permissions` covers `area` (every caller may use an operation of no area)."""
    return area == "" or bool(permissions & AREAS[area])


def parse(text: str) -> int:
    """`all`, a bitmask number, or area names separated by commas."""
    text = text.strip().lower()
    if text == "all":
        return ALL
    if text.isdigit():
        value = int(text)
        if value <= 0 or value & ~ALL:
            raise errorcodes.INVALID_PERMISSIONS(f"Permissions must be a bitmask between 1 and {ALL}.")
        return value
    value = 0
    for name in (part.strip() for part in text.split(",")):
        if name not in AREAS:
            raise errorcodes.INVALID_PERMISSIONS(name=name[:32], known=", ".join(AREAS))
        value |= AREAS[name]
    return value


def names(permissions: int) -> list[str]:
    return [name for name, bit in AREAS.items() if permissions & bit]
