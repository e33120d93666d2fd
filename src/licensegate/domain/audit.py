"""The audit log: who changed what, when, from where, with the state before and after.

Entries are append-only and form a hash chain per application: each entry's hash covers the
previous entry's hash and a canonical JSON of its own fields, so editing, deleting or reordering
an entry after the fact breaks the chain at that point, which `verify` reports. (Removing the
newest entries leaves a shorter chain that still verifies; the count of entries tells.)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.store import apps as app_store
from licensegate.store import audit as store
from licensegate.store.database import Database, Executor, Row

GENESIS = "0" * 64  # the `prev_hash` of an application's first entry
VERIFY_BATCH = 1000
MAX_ACTION_FILTER = 64


@dataclass(frozen=True, slots=True)
class Entry:
    app_id: int
    account_id: int | None
    actor: str
    action: str
    target: str | None
    before: Any
    after: Any
    ip: str | None
    created_at: int


def to_json(value: Any) -> str | None:
    """before/after as stored: canonical JSON text, None for nothing."""
    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str).decode()


def _from_json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def entry_hash(prev_hash: str, fields: dict[str, Any]) -> str:
    """SHA-256 over the previous hash and the canonical JSON (sorted keys, compact, UTF-8) of
    the entry's stored fields."""
    canonical = orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(prev_hash.encode() + b"\n" + canonical).hexdigest()


def _hashed_fields(row: Row) -> dict[str, Any]:
    return {
        "app_id": row["app_id"],
        "account_id": row["account_id"],
        "actor": row["actor"],
        "action": row["action"],
        "target": row["target"],
        "before": row["before"],
        "after": row["after"],
        "ip": row["ip"],
        "created_at": row["created_at"],
    }


async def append(db: Database, entry: Entry) -> int:
    """Add the entry at the end of its application's chain. Appends to one application are
    serialised (its row lock), so two concurrent entries never claim the same predecessor."""
    stored: Row = {
        "app_id": entry.app_id,
        "account_id": entry.account_id,
        "actor": entry.actor,
        "action": entry.action,
        "target": entry.target,
        "before": to_json(entry.before),
        "after": to_json(entry.after),
        "ip": entry.ip,
        "created_at": entry.created_at,
    }
    async with db.transaction() as tx:
        await app_store.lock(tx, entry.app_id)
        prev = await store.last_hash(tx, entry.app_id) or GENESIS
        return await store.insert(
            tx,
            app_id=entry.app_id,
            account_id=entry.account_id,
            actor=entry.actor,
            action=entry.action,
            target=entry.target,
            before=stored["before"],
            after=stored["after"],
            ip=entry.ip,
            created_at=entry.created_at,
            prev_hash=prev,
            entry_hash=entry_hash(prev, _hashed_fields(stored)),
        )


async def page(
    db: Executor, app_id: int, *, action: str | None, limit: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    """Newest first (each as `shown`), optionally only one action; with the number of matching
    entries."""
    rows = await store.page(db, app_id, action, limit, offset)
    return [shown(row) for row in rows], await store.count(db, app_id, action)


def shown(row: Row) -> dict[str, Any]:
    """An entry with its before and after states read from their JSON."""
    return {
        "id": row["id"],
        "actor": row["actor"],
        "action": row["action"],
        "target": row["target"],
        "before": _from_json(row["before"]),
        "after": _from_json(row["after"]),
        "ip": row["ip"],
        "created_at": row["created_at"],
    }


async def browse(
    db: Executor,
    app_id: int,
    *,
    actor: str | None = None,
    action: str | None = None,
    target: str | None = None,
    request: PageRequest,
) -> Page:
    """A keyset page of the application's entries by id (newest first by default), optionally
    only those of one actor, action and/or target (whole values, as the entries name them)."""
    rows = await store.browse(db, app_id, actor=actor, action=action, target=target, request=request)
    return finish([shown(row) for row in rows], request)


@dataclass(frozen=True, slots=True)
class Verification:
    valid: bool
    entries: int
    broken_at: int | None  # the id of the first entry that does not fit the chain
    since: int | None = None  # when the first entry was written (None: no entries)
    broken_created_at: int | None = None  # when the entry that does not fit says it was written


async def verify(db: Executor, app_id: int) -> Verification:
    """Walk the application's chain from its first entry, recomputing every hash."""
    expected_prev = GENESIS
    last_id = 0
    entries = 0
    broken_at: int | None = None
    since: int | None = None
    broken_created_at: int | None = None
    while True:
        rows = await store.chain_after(db, app_id, last_id, VERIFY_BATCH)
        for row in rows:
            entries += 1
            if since is None:
                since = row["created_at"]
            if broken_at is None and (
                row["prev_hash"] != expected_prev
                or row["entry_hash"] != entry_hash(row["prev_hash"] or "", _hashed_fields(row))
            ):
                broken_at, broken_created_at = row["id"], row["created_at"]
            expected_prev = row["entry_hash"] or ""
            last_id = row["id"]
        if len(rows) < VERIFY_BATCH:
            break
    return Verification(
        valid=broken_at is None,
        entries=entries,
        broken_at=broken_at,
        since=since,
        broken_created_at=broken_created_at,
    )
