"""Tokens (the token system: one per license key and per user): listed with the key or user each
belongs to (linked to its page), searched by a whole token or by its key or username, filtered
by type and state, keyset paged; ban with a reason, unban, reset the bound file hash, delete
(confirmed). Every change runs the seller operation of the same effect (`bantoken`,
`unbantoken`, `resettokenhash`, `deltoken`)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import tokens
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import Column, Filter, ListSpec
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.visit import Visit, page

SLUG = "tokens"
AREA: Area = "tokens"  # the seller API's Tokens operations
register(Section("Tokens", SLUG, AREA))

SPEC = ListSpec(
    columns=(
        Column("token", "Token"),
        Column("state", "State"),
        Column("assigned", "Belongs to"),
        Column("kind", "Type"),
        Column("hash", "File hash"),
        Column("used_at", "First used"),
        Column("created", "Made", sortable=True),
    ),
    filters=(
        Filter(
            "search",
            "Token, key or username",
            "search",
            placeholder="A whole token, key or name",
            max_length=128,
        ),
        Filter("kind", "Type", "select", options=(("", "Any"), ("license", "License key"), ("user", "User"))),
        Filter(
            "state",
            "State",
            "select",
            options=(
                ("", "Any"),
                ("active", "Not banned"),
                ("banned", "Refused (it, its key or its user banned)"),
                ("used", "Used"),
                ("unused", "Not used"),
            ),
        ),
    ),
    default_sort="created",
    empty_text="No tokens yet. Every new license key and user gets one.",
)
FIELDS = {"reason": "reason", "token": "token", "token_not_found": "token"}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


async def list_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    view = SPEC.read(visit.request.query_params)
    found = await tokens.browse(
        visit.services.db,
        visit.services.secrets,
        app.id,
        search=view.values.get("search"),
        kind=view.values.get("kind"),
        state=view.values.get("state"),
        request=view.request,
    )
    for row in found.rows:
        row["link"] = _link(app, row)
    form = visit.form
    return visit.render(
        "tokens/list.html",
        status=status,
        title=f"Tokens · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(SLUG), found, None),
        path=app.path(SLUG),
        errors=errors,
        form={"token": form.get("token"), "reason": form.get("reason")},
    )


def _link(app: AppPage, row: dict[str, Any]) -> str | None:
    """The page of the key or user the token belongs to (none once it is deleted)."""
    if row["kind"] == "license" and row["license_key_id"] is not None:
        return app.path(f"licenses/{row['license_key_id']}")
    if row["kind"] == "user" and row["user_id"] is not None:
        return app.path(f"users/{row['user_id']}")
    return None


async def ban(visit: Visit) -> Response:
    app = await _open(visit)
    token, reason = visit.form.get("token").strip(), visit.form.get("reason")
    try:
        await seller.run(visit, app, "bantoken", {"token": token, "reason": reason})
    except Refusal as refusal:
        return await list_page(visit, seller.refused(app, refusal, FIELDS, default="token"))
    visit.flash(f"The token {token} is banned: programs using it are refused at init.")
    return visit.redirect(app.path(SLUG))


async def unban(visit: Visit) -> Response:
    app = await _open(visit)
    token = visit.form.get("token")
    done = f"The token {token} is no longer banned."
    return await seller.act(visit, app, "unbantoken", {"token": token}, done=done, back=app.path(SLUG))


async def reset_hash(visit: Visit) -> Response:
    app = await _open(visit)
    token = visit.form.get("token")
    done = f"The file hash of {token} is reset: its next init binds a new one."
    return await seller.act(visit, app, "resettokenhash", {"token": token}, done=done, back=app.path(SLUG))


async def delete(visit: Visit) -> Response:
    app = await _open(visit)
    token = visit.form.get("token")
    ask = Question(
        title=f"Delete the token {token[:64]}?",
        message="Its program can no longer pass init while token validation is on. This cannot be undone.",
        button="Delete the token",
    )
    done = f"The token {token} is deleted."
    return await seller.act(visit, app, "deltoken", {"token": token}, done=done, back=app.path(SLUG), ask=ask)


BASE = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(BASE, page(list_page), methods=["GET"]),
    Route(BASE + "/ban", page(ban), methods=["POST"]),
    Route(BASE + "/unban", page(unban), methods=["POST"]),
    Route(BASE + "/reset-hash", page(reset_hash), methods=["POST"]),
    Route(BASE + "/delete", page(delete), methods=["POST"]),
]
