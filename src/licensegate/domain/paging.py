"""Keyset paging for lists people browse (see `store.paging`): what a list asks for and gets."""

from __future__ import annotations

from licensegate.store.paging import MAX_SIZE, Page, PageRequest, Position, finish, known_total

__all__ = ["MAX_SIZE", "Page", "PageRequest", "Position", "finish", "known_total"]
