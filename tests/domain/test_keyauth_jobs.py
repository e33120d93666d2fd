"""Dashboard imports from KeyAuth as background work: the state and progress kept in the
database (a reload shows them, on any worker), the seller key sealed, a failed read resumed from
its checkpoint without asking KeyAuth again for what it already answered, a stopped worker's read
taken over once it is stale and not before, and the folder gone once imported. The writer is
replaced by one that reports what the source holds (the real one is tested with the CLI and the
browser)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from licensegate.background import Background
from licensegate.clock import MovableClock
from licensegate.domain import accounts
from licensegate.domain.keyauthimport import jobs
from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport.sellerread import LISTS
from licensegate.services import Services
from tests import keyauth_standin as ka

pytestmark = pytest.mark.anyio


class Recorder:
    def __init__(self) -> None:
        self.runs: list[bool] = []

    async def __call__(self, source: r.Source, dry_run: bool, say: Callable[[str], None]) -> dict[str, Any]:
        self.runs.append(dry_run)
        say("counting")
        return jobs.summary(source) | {"dry_run": dry_run}


def context(services: Services, writer: Recorder) -> jobs.Context:
    return jobs.Context(
        settings=services.settings.with_overrides(outbound_allow=("127.0.0.1",)),
        db=services.db,
        secrets=services.secrets,
        clock=services.clock,
        background=Background(),
        writer=writer,
    )


async def owner(services: Services) -> int:
    made = await accounts.create_owner(
        services.db, services.passwords, username="mover", password="a long passphrase", email=None, now=1
    )
    return made.id


async def test_a_seller_key_import_from_read_to_done(services: Services) -> None:
    app = ka.generate(users=12, keys=8)
    standin = ka.Standin(app)
    writer = Recorder()
    ctx = context(services, writer)
    account_id = await owner(services)
    with ka.serving(standin) as url:
        import_id, folder = await jobs.create(
            ctx, account_id, "seller", seller_key=app.sellerkey, options={"from": url, "pace": "1000/0"}
        )
        row = await jobs.get(ctx.db, import_id, account_id)
        assert row is not None
        assert row["state"] == "reading"
        raw = await services.db.fetch_one("SELECT sellerkey_sealed, options FROM keyauth_imports")
        assert raw is not None
        assert app.sellerkey not in str(dict(raw))  # sealed, as is the address
        assert await jobs.get(ctx.db, import_id, account_id + 1) is None  # another account's

        await jobs.run_read(ctx, import_id, account_id)
        row = await jobs.get(ctx.db, import_id, account_id)
        assert row is not None
        steps = len(standin.steps(LISTS))  # the lists, each user, usersub where some may be paused
        assert (row["state"], row["done"], row["total"]) == ("read", steps, steps)
        assert writer.runs == [True]
        assert row["report"] is not None
        assert '"users": 12' in row["report"]
        assert (folder / jobs.CHECKPOINT).exists()

        done: list[dict[str, Any]] = []

        async def recorded(report: dict[str, Any]) -> None:
            done.append(report)

        assert await jobs.confirm(ctx, row, recorded)
        assert not await jobs.confirm(ctx, row, recorded)  # once
        await ctx.background.drain()
    assert writer.runs == [True, False]
    assert done
    assert done[0]["dry_run"] is False
    row = await jobs.get(ctx.db, import_id, account_id)
    assert row is not None
    assert row["state"] == "done"
    assert row["sellerkey_sealed"] is None
    assert not folder.exists()
    # Confirming read nothing again: every step was asked once.
    assert standin.answered == standin.steps(LISTS)


async def test_a_failed_read_resumes_where_it_stopped(services: Services) -> None:
    app = ka.generate(users=10, keys=6)
    standin = ka.Standin(app)
    standin.fail_after = len(LISTS) + 4
    ctx = context(services, Recorder())
    account_id = await owner(services)
    with ka.serving(standin) as url:
        import_id, _ = await jobs.create(
            ctx, account_id, "seller", seller_key=app.sellerkey, options={"from": url, "pace": "1000/0"}
        )
        await jobs.run_read(ctx, import_id, account_id)
        row = await jobs.get(ctx.db, import_id, account_id)
        assert row is not None
        assert row["state"] == "failed"
        assert "--resume" in str(row["error"])
        assert row["done"] == len(LISTS) + 4

        standin.fail_after = None
        assert await jobs.resume_read(ctx, row)
        await ctx.background.drain()
    row = await jobs.get(ctx.db, import_id, account_id)
    assert row is not None
    assert row["state"] == "read"
    assert standin.answered == standin.steps(LISTS)


async def test_a_stale_read_is_taken_over_once(services: Services, clock: MovableClock) -> None:
    app = ka.generate(users=3, keys=2)
    ctx = context(services, Recorder())
    account_id = await owner(services)
    with ka.serving(ka.Standin(app)) as url:
        import_id, _ = await jobs.create(
            ctx, account_id, "seller", seller_key=app.sellerkey, options={"from": url, "pace": "1000/0"}
        )
        row = await jobs.get(ctx.db, import_id, account_id)
        assert row is not None
        assert not await jobs.resume_read(ctx, row)  # its worker may still be at it
        clock.advance(jobs.STALE)
        assert await jobs.resume_read(ctx, row)
        assert not await jobs.resume_read(ctx, row)  # taken: the row moved on
        await ctx.background.drain()
    row = await jobs.get(ctx.db, import_id, account_id)
    assert row is not None
    assert row["state"] == "read"


async def test_export_files_and_their_identity(services: Services, tmp_path: Any) -> None:
    app = ka.generate(users=6, keys=4)
    ctx = context(services, Recorder())
    account_id = await owner(services)
    options = {
        "name": app.name,
        "ownerid": app.ownerid,
        "secret": app.secret,
        "subscriptions": [["default", "1"]],
    }
    import_id, folder = await jobs.create(ctx, account_id, "files", options=options)
    keys, users = ka.write_exports(app, tmp_path)
    (folder / jobs.KEYS_FILE).write_bytes(keys.read_bytes())
    (folder / jobs.USERS_FILE).write_bytes(users.read_bytes())
    raw = await services.db.fetch_value("SELECT options FROM keyauth_imports")
    assert app.secret not in raw
    await jobs.run_read(ctx, import_id, account_id)
    row = await jobs.get(ctx.db, import_id, account_id)
    assert row is not None
    assert row["state"] == "read"
    assert '"keys": 4' in str(row["report"])
    assert "no key status" in str(row["report"])


async def test_an_import_whose_worker_stopped_runs_again(services: Services, clock: MovableClock) -> None:
    """An import left `importing` by a worker that stopped may be run again once stale (the
    writer adds only what is missing), and not while it may still be running."""
    app = ka.generate(users=3, keys=2)
    writer = Recorder()
    ctx = context(services, writer)
    account_id = await owner(services)
    with ka.serving(ka.Standin(app)) as url:
        import_id, _ = await jobs.create(
            ctx, account_id, "seller", seller_key=app.sellerkey, options={"from": url, "pace": "1000/0"}
        )
        await jobs.run_read(ctx, import_id, account_id)
        await services.db.execute("UPDATE keyauth_imports SET state = 'importing' WHERE id = ?", import_id)
        row = await jobs.get(ctx.db, import_id, account_id)
        assert row is not None

        async def recorded(_report: dict[str, Any]) -> None:
            pass

        assert not await jobs.confirm(ctx, row, recorded)  # it may still be running
        clock.advance(jobs.STALE)
        assert await jobs.confirm(ctx, row, recorded)
        assert not await jobs.confirm(ctx, row, recorded)  # taken once
        await ctx.background.drain()
    row = await jobs.get(ctx.db, import_id, account_id)
    assert row is not None
    assert row["state"] == "done"
    assert writer.runs == [True, False]
