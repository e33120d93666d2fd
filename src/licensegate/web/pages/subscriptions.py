"""Subscriptions: the application's subscription definitions (name and level), how many users hold
each, and creating, renaming, re-levelling, pausing and deleting them. Every change runs the
seller operation of the same name (`addsub`, `editsub`, `pausesub`, `unpausesub`, `delappsub`)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import errorcodes, subscriptions
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.pages import seats as seat_part
from licensegate.web.pages.attached_entitlements import attached
from licensegate.web.visit import Visit, page

SLUG = "subscriptions"
AREA: Area = "subscriptions"
register(Section("Subscriptions", SLUG, AREA))

# Where a refusal is shown: parameter names and error codes -> form fields.
FIELDS = {
    "name": "name",
    "newName": "name",
    "level": "level",
    "subscription_exists": "name",
}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


async def _find(visit: Visit, app: AppPage) -> dict[str, Any]:
    """The subscription of the URL (with its users), or the 404 page."""
    sub_id = str(visit.request.path_params["sub_id"])
    for row in _described(await subscriptions.list_with_users(visit.services.db, app.id)):
        if row["id"] == sub_id:
            return row
    raise errorcodes.SUBSCRIPTION_NOT_FOUND("This subscription does not exist (it may have been deleted).")


def _path(app: AppPage, row: dict[str, Any] | None = None, action: str = "") -> str:
    base = app.path(SLUG)
    if row is None:
        return base
    return f"{base}/{row['id']}{'/' + action if action else ''}"


async def list_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    rows = _described(await subscriptions.list_with_users(visit.services.db, app.id))
    return visit.render(
        "subscriptions/list.html",
        status=status,
        title=f"Subscriptions · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        rows=rows,
        path=app.path(SLUG),
        errors=errors,
        form={"name": visit.form.get("name"), "level": visit.form.get("level")},
    )


async def create(visit: Visit) -> Response:
    app = await _open(visit)
    name, level = visit.form.get("name"), visit.form.get("level")
    try:
        await seller.run(visit, app, "addsub", {"name": name, "level": level})
    except Refusal as refusal:
        return await list_page(visit, seller.refused(app, refusal, FIELDS))
    visit.flash(f"The subscription {name.strip()} is created (level {level.strip()}).")
    return visit.redirect(app.path(SLUG))


async def detail(visit: Visit, shown: Shown | None = None, *, row: dict[str, Any] | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    row = row or await _find(visit, app)
    posted = visit.request.method == "POST"
    return visit.render(
        "subscriptions/edit.html",
        status=status,
        title=f"{row['name']} · Subscriptions · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        sub=row,
        list_path=app.path(SLUG),
        base=_path(app, row),
        ent=await attached(visit, app, "sub", int(row["id"]), row["name"], _path(app, row)),
        seat=await seat_part.shown(visit, app, "sub", int(row["id"]), row["name"], _path(app, row)),
        errors=errors,
        form={
            "name": visit.form.get("name") if posted else row["name"],
            "level": visit.form.get("level") if posted else row["level"],
        },
    )


async def edit(visit: Visit) -> Response:
    app = await _open(visit)
    row = await _find(visit, app)
    name, level = visit.form.get("name").strip(), visit.form.get("level").strip()
    params = {"sub": row["name"], "level": level or row["level"]}
    if name != row["name"]:
        params["newName"] = name
    try:
        if not name:
            raise _missing("name")
        if not level:
            raise _missing("level")
        await seller.run(visit, app, "editsub", params)
    except Refusal as refusal:
        return await detail(visit, seller.refused(app, refusal, FIELDS), row=row)
    visit.flash(f"The subscription {name} is saved (level {level}).")
    return visit.redirect(app.path(SLUG))


def _missing(name: str) -> Refusal:
    return errorcodes.MISSING_PARAMETER(name=name, param=name)


async def _pause(visit: Visit, *, pause: bool) -> Response:
    app = await _open(visit)
    row = await _find(visit, app)
    if pause:
        done = f"{row['name']} is paused: its users' time is frozen until you unpause it."
    else:
        done = f"{row['name']} is running again; its users got back the time the pause lasted."
    operation = "pausesub" if pause else "unpausesub"
    return await seller.act(
        visit, app, operation, {"subscription": row["name"]}, done=done, back=app.path(SLUG)
    )


async def pause(visit: Visit) -> Response:
    return await _pause(visit, pause=True)


async def unpause(visit: Visit) -> Response:
    return await _pause(visit, pause=False)


def users_text(users: int) -> str:
    return f"{users:,} user{'' if users == 1 else 's'}"


def affected(users: int, more: bool = False) -> str:
    """What deleting the subscription does to its users, said before it happens (`more`: at
    least `users`, the list's count stopped there)."""
    if users == 0:
        return "No user holds it."
    if more:
        return f"At least {users_text(users)} hold it and will lose it."
    return f"{users_text(users)} hold{'s' if users == 1 else ''} it and will lose it."


def _described(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with what the page says of their users."""
    for row in rows:
        row["users_label"] = f"at least {row['users']:,}" if row["users_more"] else f"{row['users']:,}"
        row["affected"] = affected(row["users"], row["users_more"])
    return rows


async def delete(visit: Visit) -> Response:
    app = await _open(visit)
    row = await _find(visit, app)
    users = await subscriptions.users_holding(visit.services.db, app.id, row["name"])
    ask = Question(
        title=f"Delete the subscription {row['name']}?",
        message=f"Deleting {row['name']} (level {row['level']}) cannot be undone. {affected(users)}",
        button=f"Delete {row['name']}",
    )
    lost = f" {users_text(users)} lost it." if users else ""
    done = f"The subscription {row['name']} is deleted.{lost}"
    return await seller.act(
        visit, app, "delappsub", {"name": row["name"]}, done=done, back=app.path(SLUG), ask=ask
    )


SUB = "/apps/{app_id:int}/subscriptions/{sub_id:int}"
ROUTES = [
    Route("/apps/{app_id:int}/subscriptions", page(list_page), methods=["GET"]),
    Route("/apps/{app_id:int}/subscriptions", page(create), methods=["POST"]),
    Route(SUB, page(detail), methods=["GET"]),
    Route(SUB + "/edit", page(edit), methods=["POST"]),
    Route(SUB + "/pause", page(pause), methods=["POST"]),
    Route(SUB + "/unpause", page(unpause), methods=["POST"]),
    Route(SUB + "/delete", page(delete), methods=["POST"]),
]
