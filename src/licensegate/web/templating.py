"""Jinja2 for the dashboard: autoescaped templates under web/templates, static files under
web/static served with a content hash in their URL (so browsers may keep them for a year)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from licensegate.web.useragents import describe

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
STATIC_PREFIX = "/dashboard/static/"


@cache
def _version(path: str) -> str:
    return hashlib.sha256((STATIC / path).read_bytes()).hexdigest()[:12]


def static(path: str) -> str:
    return f"{STATIC_PREFIX}{path}?v={_version(path)}"


def when(unix_seconds: int | None) -> str:
    """A time as people read it (UTC); '—' for none."""
    if unix_seconds is None:
        return "—"
    return datetime.fromtimestamp(unix_seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def iso(unix_seconds: int | None) -> str:
    if unix_seconds is None:
        return ""
    return datetime.fromtimestamp(unix_seconds, UTC).isoformat()


UNITS = (("year", 365 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def duration(seconds: int | None) -> str:
    """A length of time in its largest whole unit, e.g. '30 days', '1 year', '90 minutes'."""
    if seconds is None:
        return "—"
    if seconds <= 0:
        return "0 seconds"
    for name, size in UNITS:
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {name}{'' if count == 1 else 's'}"
    return f"{seconds} seconds"


def number(value: int) -> str:
    return f"{value:,}"


def counted(count: int, noun: str, plural: str = "") -> str:
    """'1 file', '1,024 files' ('entries' and the like given as `plural`)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


SIZE_UNITS = ("KiB", "MiB", "GiB", "TiB")


def size(value: int | None) -> str:
    """A size in bytes as people read it: '512 bytes', '1.5 MiB' (binary units, one decimal
    below 10 of a unit, so '9.9 MiB' and '10 MiB' but never '10.0 MiB')."""
    if value is None:
        return "—"
    if value < 1024:
        return f"{value:,} byte{'' if value == 1 else 's'}"
    amount = float(value)
    for unit in SIZE_UNITS:
        amount /= 1024
        if amount < 1024 or unit == SIZE_UNITS[-1]:
            shown = f"{amount:.1f}" if amount < 10 else f"{amount:,.0f}"
            return f"{shown.removesuffix('.0')} {unit}"
    raise AssertionError("unreachable")


SPLIT_ABOVE = 20  # characters: a longer word (a key, a token, a name that is a key) may take two lines


def halves(value: object) -> Markup:
    """A long unbroken value (a license key, a token, a username that is a key) as two unbreakable
    halves, split at the hyphen nearest its middle (or at its middle): in a narrow column it takes
    two lines at most, never one per group, and copying it still gives the value unchanged."""
    text = "" if value is None else str(value)
    if len(text) <= SPLIT_ABOVE or any(c.isspace() for c in text):
        return escape(text)
    middle = len(text) // 2
    hyphens = [i + 1 for i, c in enumerate(text) if c == "-" and 0 < i < len(text) - 1]
    cut = min(hyphens, key=lambda i: abs(i - middle)) if hyphens else middle
    if abs(cut - middle) > len(text) // 4:
        cut = middle
    return Markup(
        '<span class="split"><span class="half">{}</span><wbr><span class="half">{}</span></span>'
    ).format(text[:cut], text[cut:])


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.globals.update(static=static)
    env.filters.update(
        when=when, iso=iso, duration=duration, number=number, size=size, halves=halves, browser=describe
    )
    return env


ENV = _environment()


def render_template(name: str, context: dict[str, Any]) -> str:
    return ENV.get_template(name).render(context)
