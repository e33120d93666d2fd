"""A list knows its total from the first page when that page holds every match."""

from __future__ import annotations

from licensegate.domain.paging import Page, PageRequest, Position, known_total


def rows(count: int) -> list[dict[str, object]]:
    return [{"id": i} for i in range(count)]


def test_a_first_page_holding_every_match_is_the_total() -> None:
    first = PageRequest("created", True, 50)
    assert known_total(Page(rows(3), has_previous=False, has_next=False), first) == 3
    assert known_total(Page([], has_previous=False, has_next=False), first) == 0


def test_otherwise_only_a_count_can_say() -> None:
    assert (
        known_total(Page(rows(50), has_previous=False, has_next=True), PageRequest("created", True, 50))
        is None
    )
    later = PageRequest("created", True, 50, Position(7, 7))
    assert known_total(Page(rows(3), has_previous=True, has_next=False), later) is None
    before = PageRequest("created", True, 50, Position(7, 7, before=True))
    assert known_total(Page(rows(3), has_previous=False, has_next=True), before) is None
