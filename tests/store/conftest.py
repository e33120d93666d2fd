"""What the store's tests share: an opened database of each kind."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from licensegate.store.database import Database, open_database


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    database = await open_database(db_url, pool_size=4)
    yield database
    await database.close()
