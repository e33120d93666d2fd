"""What a worker holds: opened once, closed with a bounded grace period for unfinished work."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.config import Settings
from licensegate.services import Services

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("drain", "job_seconds", "finished"),
    [(0, 30, []), (30, 0, ["job"])],
    ids=["work-outlasting-the-drain-is-dropped", "work-within-the-drain-finishes"],
)
async def test_close_waits_for_work_under_way_at_most_the_shutdown_drain(
    settings: Settings, drain: int, job_seconds: int, finished: list[str]
) -> None:
    services = await Services.open(settings.with_overrides(shutdown_drain=drain))
    done: list[str] = []

    async def job() -> None:
        await asyncio.sleep(job_seconds)
        done.append("job")

    services.background.run_later(job, what="a job", delays=(0.0,))
    await services.close()
    assert services.background.pending == 0
    assert done == finished
