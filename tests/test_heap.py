"""A worker freezes what its start-up made (`app.settle_heap`): a full garbage collection then
scans only what requests made since, never the start-up heap (tens to hundreds of milliseconds
with the event loop stopped)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from licensegate.app import build_app
from licensegate.config import Settings

pytestmark = pytest.mark.anyio


@pytest.fixture
def unfrozen_after() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of this test process collects as before


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


async def test_a_started_worker_has_frozen_its_start_up_heap_and_still_collects_new_garbage(
    settings: Settings, unfrozen_after: None
) -> None:
    app = build_app(settings)  # no services given: the lifespan opens them, as a worker's does
    gc.unfreeze()
    async with app.app.router.lifespan_context(app.app):
        assert gc.get_freeze_count() > 100_000  # the modules, declarations and services
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle made after start-up
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
