"""Licenses: what a seller does to keys. Creating them (shown once, with "copy all"), the row
actions (ban and unban, delete, edit, add time) and bulk actions over checked rows or every key
matching the list's filter (previewed, a typed confirmation above `TYPED_ABOVE`, run in batches).

Every change is a seller operation run through `web.seller` (the seller API's permission areas,
a reseller's scope and balance, its audit log). Every form works as a plain post answered with a
redirect; htmx posts the same forms and swaps the list's results and the flash message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import errorcodes, keygen, licenses, team
from licensegate.domain.errors import Refusal
from licensegate.domain.licenses import KeyQuery
from licensegate.domain.paging import PageRequest
from licensegate.domain.permissions import Scope
from licensegate.web.confirm import confirm_page, confirmed
from licensegate.web.navigation import AppPage, open_app
from licensegate.web.pages.licenses import (
    BULK_ACTIONS,
    SLUG,
    SPEC,
    TYPED_ABOVE,
    BulkAction,
    key_query,
    levels_of,
    options,
    reseller_of,
)
from licensegate.web.seller import Steps, status_of
from licensegate.web.visit import Visit, page

# --- creating keys -----------------------------------------------------------------------------

CHARACTERS = (
    ("1", "Letters (upper and lower case) and digits"),
    ("2", "Upper-case letters and digits"),
    ("3", "Lower-case letters and digits"),
)
# A duration's unit and its length in days; lifetime is what a reseller's lifetime bucket pays for.
UNITS: dict[str, tuple[str, float]] = {
    "hours": ("hours", 1 / 24),
    "days": ("days", 1),
    "weeks": ("weeks", 7),
    "months": ("months (30 days)", 30),
    "years": ("years (365 days)", 365),
    "lifetime": ("lifetime (3,650 days)", team.LIFETIME_SECONDS / 86400),
}


def _days(value: str, unit: str, label: str) -> str:
    """A duration typed in a unit, as the days a seller operation takes (text, as a form sends)."""
    if unit not in UNITS:
        raise errorcodes.INVALID_FORM(f"Choose a unit for {label}.")
    if unit == "lifetime":
        return str(int(UNITS[unit][1]))
    try:
        amount = float(value.strip())
    except ValueError:
        raise errorcodes.INVALID_FORM(f"{label.capitalize()} must be a number.") from None
    if not 0 < amount < 1e9:
        raise errorcodes.INVALID_FORM(f"{label.capitalize()} must be more than 0.")
    days = amount * UNITS[unit][1]
    return str(int(days)) if days.is_integer() else f"{days:.12g}"


async def _create_context(visit: Visit, app: AppPage) -> dict[str, Any]:
    reseller = reseller_of(visit)
    levels = await levels_of(visit, app)
    balance = None
    if reseller is not None:
        levels = [level for level in levels if reseller.allows_level(level)]
        balance = (await team.reseller_info(visit.services.db, app.id, reseller.username))["balance"]
    form = visit.form
    return {
        "title": f"Create keys · {app.app['name']}",
        "app": app.app,
        "nav": app.nav,
        "levels": levels,
        "level_options": [(level, level) for level in levels],
        "characters": CHARACTERS,
        "units": [(name, label) for name, (label, _days) in UNITS.items()],
        "balance": balance,
        "reseller": reseller,
        "values": {
            "amount": form.get("amount", "1"),
            "mask": form.get("mask", keygen.DEFAULT_MASK),
            "character": form.get("character", "1"),
            "level": form.get("level", levels[0] if levels else ""),
            "duration": form.get("duration", "30"),
            "unit": form.get("unit", "days"),
            "note": form.get("note"),
        },
        "max_amount": licenses.MAX_AMOUNT,
        "list_url": app.path(SLUG),
    }


async def create_form(visit: Visit) -> Response:
    app = await _open(visit)
    return visit.render("licenses/create.html", **await _create_context(visit, app))


async def create(visit: Visit) -> Response:
    """Generate keys (the seller API's `add`): shown once on the answer, never in a redirect."""
    app = await _open(visit)
    form = visit.form
    try:
        params = {
            "amount": form.text("amount", 4) or "1",
            "mask": form.text("mask", keygen.MAX_KEY_LENGTH) or keygen.DEFAULT_MASK,
            "character": form.text("character", 1) or "1",
            "level": form.text("level", 12),
            "expiry": _days(form.get("duration"), form.get("unit"), "the duration"),
            "note": form.text("note", 256),
        }
        seller = await Steps.of(visit, app)
        body = await seller.run("add", {k: v for k, v in params.items() if v})
    except Refusal as refusal:
        context = await _create_context(visit, app)
        return visit.render(
            "licenses/create.html", status=status_of(refusal), error=refusal.message, **context
        )
    keys: list[str] = body["keys"]
    visit.flash(f"{len(keys)} key{'' if len(keys) == 1 else 's'} created.")
    return visit.render(
        "licenses/created.html",
        title=f"Keys created · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        keys=keys,
        list_url=app.path(SLUG),
        create_url=app.path(f"{SLUG}/create"),
    )


# --- row actions ---------------------------------------------------------------------------------


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), "licenses")


def _back(visit: Visit, app: AppPage) -> str:
    """Where a row action returns: the list view it was posted from (never another site)."""
    back = visit.form.get("back")
    base = app.path(SLUG)
    if back == base or back.startswith(base + "?"):
        return back
    return base


async def _row_action(visit: Visit, run: Any, done: str) -> Response:
    app = await _open(visit)
    key = visit.form.text("key", keygen.MAX_KEY_LENGTH)
    try:
        seller = await Steps.of(visit, app)
        await run(seller, key)
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
    else:
        visit.flash(done.format(key=key))
    return visit.redirect(_back(visit, app))


async def ban(visit: Visit) -> Response:
    form = visit.form

    async def run(seller: Steps, key: str) -> None:
        params = {
            "key": key,
            "reason": form.text("reason", 256),
            "userToo": "1" if form.flag("user_too") else "0",
        }
        await seller.run("ban", params)

    return await _row_action(visit, run, "The key {key} is banned.")


async def unban(visit: Visit) -> Response:
    async def run(seller: Steps, key: str) -> None:
        await seller.run("unban", {"key": key})

    return await _row_action(visit, run, "The key {key} is unbanned.")


async def delete(visit: Visit) -> Response:
    form = visit.form
    if not confirmed(visit):
        app = await _open(visit)
        key = form.text("key", keygen.MAX_KEY_LENGTH)
        also = " and the user who redeemed it" if form.flag("user_too") else ""
        return confirm_page(
            visit,
            title="Delete this key?",
            message=f"Delete the key {key}{also}? The subscriptions it granted end. This cannot be undone.",
            button="Delete",
            back=_back(visit, app),
        )

    async def run(seller: Steps, key: str) -> None:
        await seller.run("del", {"key": key, "userToo": "1" if form.flag("user_too") else "0"})

    return await _row_action(visit, run, "The key {key} is deleted.")


async def add_time(visit: Visit) -> Response:
    form = visit.form

    async def run(seller: Steps, key: str) -> None:
        days = _days(form.get("amount"), form.get("unit", "days"), "the time to add")
        await seller.run("addtime", {"key": key, "time": days})

    return await _row_action(visit, run, "Time added to the key {key}.")


async def edit(visit: Visit) -> Response:
    """Level, duration and note of one key: only what changed is sent, each as its own operation
    (`changekeysub`, `setduration`, `setnote`), so each keeps its own rules and audit entry."""
    form = visit.form

    async def run(seller: Steps, key: str) -> None:
        current = await seller.run("info", {"key": key})
        note = form.text("note", 256)
        if note != (current["note"] or ""):
            await seller.run("setnote", {"key": key, "note": note})
        level = form.text("level", 12)
        if level and level != current["level"]:
            await seller.run("changekeysub", {"key": key, "level": level})
        if form.get("duration").strip():
            days = _days(form.get("duration"), form.get("unit", "days"), "the duration")
            if round(float(days) * 86400) != current["duration"]:
                await seller.run("setduration", {"key": key, "expiry": days})

    return await _row_action(visit, run, "The key {key} is saved.")


# --- bulk actions --------------------------------------------------------------------------------

BATCH = 100  # keys read (and, for deletions, deleted) per step
COUNT_LIMIT = 100_000_000  # a preview counts exactly, however many keys match
MAX_CHECKED = 1000


@dataclass(frozen=True, slots=True)
class Target:
    """The keys a bulk action changes: its query (the list's filter or the checked rows, narrowed
    to the keys the action changes) and a description."""

    query: KeyQuery | None  # None: no key can be changed by it
    described: str


async def _target(visit: Visit, app: AppPage, action: BulkAction) -> Target:
    form = visit.form
    if form.get("scope") == "all":
        params = {name[len("filter.") :]: value for name, value in form.items() if name.startswith("filter.")}
        view = SPEC.read(params, await options(visit, app))
        query = key_query(view)
        described = "every key matching the filter" if view.values else "every key"
    else:
        raw = form.all("ids")
        if not raw:
            raise errorcodes.INVALID_FORM(
                "Check the keys to change first, or choose all keys matching the filter."
            )
        if len(raw) > MAX_CHECKED or not all(value.isascii() and value.isdigit() for value in raw):
            raise errorcodes.INVALID_FORM(
                f"Check at most {MAX_CHECKED} keys (or choose all keys matching the filter)."
            )
        query = KeyQuery(ids=tuple(sorted({int(value) for value in raw})))
        described = "the checked keys"
    status = action.statuses.get(query.status)
    return Target(None if status is None else replace(query, status=status), described)


def _params(visit: Visit, name: str) -> dict[str, str]:
    """What the action needs besides the key, checked before the preview."""
    form = visit.form
    if name == "ban":
        reason = form.text("reason", 256)
        if not reason:
            raise errorcodes.INVALID_FORM("Give a reason for the ban.")
        return {"reason": reason, "userToo": "1" if form.flag("user_too") else "0"}
    if name == "addtime":
        return {"time": _days(form.get("amount"), form.get("unit", "days"), "the time to add")}
    if name == "note":
        return {"note": form.text("note", 256)}
    if name == "delete":
        return {"userToo": "1" if form.flag("user_too") else "0"}
    return {}


async def bulk(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    back = _back(visit, app)
    name = form.get("action")
    action = BULK_ACTIONS.get(name)
    try:
        if action is None:
            raise errorcodes.INVALID_FORM("Choose one of the actions.")
        params = _params(visit, name)
        target = await _target(visit, app, action)
        scope = Scope(app.id, reseller_of(visit))
        count = 0
        if target.query is not None:
            count = await licenses.count_matching(visit.services.db, scope, target.query, cap=COUNT_LIMIT)
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(back)
    if count == 0:
        visit.flash(f"Nothing to change in {target.described}: {action.nothing}.", "warning")
        return visit.redirect(back)
    typed = f"{count}" if count > TYPED_ABOVE else None
    if not confirmed(visit, typed):
        return confirm_page(
            visit,
            title="Check before changing",
            message=f"This will {action.verb} {count:,} key{'' if count == 1 else 's'} ({target.described}).",
            details=_details(name, params, count),
            button=f"{action.label}: {count:,} key{'' if count == 1 else 's'}",
            back=back,
            typed=typed,
            typed_label=f"Type the number of keys ({count}) to confirm",
            danger=name in ("ban", "delete"),
        )
    assert target.query is not None
    seller = await Steps.of(visit, app)
    done, stopped = await _run_bulk(visit, seller, scope, target.query, name, params)
    if stopped is None:
        visit.flash(f"Done: {action.verb} {done:,} key{'' if done == 1 else 's'}.")
    else:
        visit.flash(f"Stopped after {done:,} key{'' if done == 1 else 's'}: {stopped}", "error")
    return visit.redirect(back)


def _details(name: str, params: dict[str, str], count: int) -> tuple[str, ...]:
    lines: list[str] = []
    if name == "ban":
        lines.append(f"Reason: {params['reason']}")
        if params["userToo"] == "1":
            lines.append("The users who redeemed them are banned too.")
    if name == "addtime":
        lines.append(
            f"Each key gets {params['time']} more days: an unused key a longer duration, "
            "a used key later expiries."
        )
    if name == "note":
        lines.append(f"New note: {params['note'] or '(empty)'}")
    if name == "delete":
        lines.append("The subscriptions they granted end. This cannot be undone.")
        if params["userToo"] == "1":
            lines.append("The users who redeemed them are deleted too.")
    if count > TYPED_ABOVE:
        lines.append(f"It runs in steps of {BATCH} keys; a large change takes a while.")
    return tuple(lines)


async def _batches(visit: Visit, scope: Scope, query: KeyQuery) -> AsyncIterator[list[str]]:
    """The keys the query selects, oldest first, `BATCH` at a time, read by keyset after the last
    key of the batch before (changing or deleting a batch does not move the next one)."""
    request = PageRequest("created", False, BATCH)
    while True:
        found = await licenses.browse(visit.services.db, scope, query, request)
        if not found.rows:
            return
        yield [row["key"] for row in found.rows]
        if not found.has_next:
            return
        request = PageRequest("created", False, BATCH, licenses.position_after(found.rows[-1]))


OPERATION = {"ban": "ban", "unban": "unban", "addtime": "addtime", "note": "setnote"}


async def _run_bulk(
    visit: Visit, seller: Steps, scope: Scope, query: KeyQuery, name: str, params: dict[str, str]
) -> tuple[int, str | None]:
    """Run the action key by key (deletions: a batch per call); how many were done, and why it
    stopped early (a refusal, such as a reseller's balance running out), if it did."""
    done = 0
    try:
        async for keys in _batches(visit, scope, query):
            if name == "delete":
                body = await seller.run("delmultiple", {"key": " ".join(keys), **params})
                done += int(body["deleted"])
                continue
            for key in keys:
                await seller.run(OPERATION[name], {"key": key, **params})
                done += 1
    except Refusal as refusal:
        return done, refusal.message
    return done, None


ROUTES = [
    Route("/apps/{app_id:int}/licenses/create", page(create_form), methods=["GET"]),
    Route("/apps/{app_id:int}/licenses/create", page(create), methods=["POST"]),
    Route("/apps/{app_id:int}/licenses/ban", page(ban), methods=["POST"]),
    Route("/apps/{app_id:int}/licenses/unban", page(unban), methods=["POST"]),
    Route("/apps/{app_id:int}/licenses/delete", page(delete), methods=["POST"]),
    Route("/apps/{app_id:int}/licenses/edit", page(edit), methods=["POST"]),
    Route("/apps/{app_id:int}/licenses/addtime", page(add_time), methods=["POST"]),
    Route("/apps/{app_id:int}/licenses/bulk", page(bulk), methods=["POST"]),
]
