"""Detail pages (KeyAuth has none): a license key and a user, each on one page. A key leads to
the user who redeemed it; a user shows the subscriptions it holds (with their expiry and the key
that gave each), its HWIDs, its open sessions (end one or all), the keys it redeemed, a sign-in
lock-out (lifted here), and one
timeline of its client's log lines, tamper reports and the audit trail of changes made to it,
newest first and paged. The row actions of the lists are here too.

A reseller opens only its own keys and users (any other is "not found"), and sees only its own
changes in the audit trail."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import licenses, sessions, timeline, users
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Scope
from licensegate.web import seller
from licensegate.web.navigation import AppPage, open_app
from licensegate.web.pages import credits as credit_part
from licensegate.web.pages import ratelimits as limit_part
from licensegate.web.pages import seats as seat_part
from licensegate.web.pages.attached_entitlements import attached
from licensegate.web.pages.licensefiles import issue_form
from licensegate.web.pages.licenses import reseller_of
from licensegate.web.pages.users import STATUS_CLASS
from licensegate.web.visit import Visit, page


def _scope(visit: Visit, app: AppPage) -> Scope:
    return Scope(app.id, reseller_of(visit))


def _user_target(username: str) -> str:
    return f"user:{username}"


async def _user_parts(visit: Visit, app: AppPage, user: dict[str, Any]) -> dict[str, Any]:
    """What a page shows of a user beyond its row: keys redeemed and open sessions."""
    db, scope = visit.services.db, _scope(visit, app)
    keys = await licenses.of_user(db, scope, user["id"]) if visit.account.allows("licenses") else []
    return {
        "keys": keys,
        "sessions": await sessions.of_user(db, app.id, user["id"], visit.now()),
        "can_licenses": visit.account.allows("licenses"),
        "can_sessions": visit.account.allows("sessions"),
        "can_variables": visit.account.allows("variables"),
    }


async def _timeline(
    visit: Visit, app: AppPage, credentials: tuple[str, ...], user: dict[str, Any] | None
) -> timeline.Timeline:
    reseller = reseller_of(visit)
    sources = timeline.Sources(
        app_id=app.id,
        credentials=credentials,
        user_id=None if user is None else user["id"],
        audit_target=None if user is None else _user_target(user["username"]),
        audit_account_id=None if reseller is None else reseller.account_id,
    )
    return await timeline.page(visit.services.db, sources, visit.request.query_params.get("before", ""))


async def _render(
    visit: Visit,
    app: AppPage,
    template: str,
    title: str,
    path: str,
    credentials: tuple[str, ...],
    user: dict[str, Any] | None,
    **context: Any,
) -> Response:
    """A detail page: its own part (`context`), the user's parts when there is a user it may
    see, and the timeline of `credentials` and that user."""
    parts = await _user_parts(visit, app, user) if user is not None else {}
    credentials += tuple(key["key"] for key in parts.get("keys", ()) if key["key"] not in credentials)
    return visit.render(
        template,
        title=f"{title} · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        user=user,
        path=path,
        users_path=app.path("users"),
        licenses_path=app.path("licenses"),
        back=path,
        timeline=await _timeline(visit, app, credentials, user),
        status_class=STATUS_CLASS,
        locked=user is not None and (user["locked_until"] or 0) > visit.now(),
        **parts,
        **context,
    )


async def user_page(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), "users")
    scope = _scope(visit, app)
    user = await users.by_id(visit.services.db, scope, int(visit.request.path_params["user_id"]), visit.now())
    path = app.path(f"users/{user['id']}")
    ent = await attached(visit, app, "user", user["id"], user["username"], path)
    return await _render(
        visit,
        app,
        "details/user.html",
        user["username"],
        path,
        (user["username"],),
        user,
        ent=ent,
        cr=await credit_part.shown(visit, app, "user", user["id"], user["username"], path),
        seat=await seat_part.shown(visit, app, "user", user["id"], user["username"], path),
        rl=await limit_part.shown(visit, app, "user", user["id"], user["username"], path),
        lic_form=issue_form(visit, app, "user", user["username"], path),
    )


async def unlock(visit: Visit) -> Response:
    """Lift the user's sign-in lock-out (the seller operation `unlockuser`, of the users area)."""
    app, user = await _sessions_user(visit)
    return await seller.act(
        visit,
        app,
        "unlockuser",
        {"user": user["username"]},
        done=f"{user['username']} can sign in with a password again.",
        back=app.path(f"users/{user['id']}"),
    )


async def key_page(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), "licenses")
    db, scope = visit.services.db, _scope(visit, app)
    key = await licenses.by_id(db, scope, int(visit.request.path_params["key_id"]))
    key["status_text"] = licenses.status_text(key)
    user: dict[str, Any] | None = None
    may_see_user = visit.account.allows("users")
    if key["used_by_user_id"] is not None and may_see_user:
        try:
            user = await users.by_id(db, scope, key["used_by_user_id"], visit.now())
        except Refusal:
            user = None  # a user the caller does not own (a reseller's key redeemed by another's user)
    credentials = (key["key"],) + ((user["username"],) if user is not None else ())
    path = app.path(f"licenses/{key['id']}")
    return await _render(
        visit,
        app,
        "details/key.html",
        f"Key {key['key']}",
        path,
        credentials,
        user,
        key=key,
        may_see_user=may_see_user,
        ent=await attached(visit, app, "key", key["id"], key["key"], path),
        cr=await credit_part.shown(visit, app, "key", key["id"], key["key"], path),
        seat=await seat_part.shown(visit, app, "key", key["id"], key["key"], path),
        rl=await limit_part.shown(visit, app, "key", key["id"], key["key"], path),
        lic_form=issue_form(visit, app, "key", key["key"], path) if key["used_by_user_id"] else None,
    )


async def _sessions_user(visit: Visit) -> tuple[AppPage, dict[str, Any]]:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), "users")
    user = await users.by_id(
        visit.services.db, _scope(visit, app), int(visit.request.path_params["user_id"]), visit.now()
    )
    return app, user


def _back(visit: Visit, app: AppPage, user: dict[str, Any]) -> str:
    """Back to the page the form was on: the user's, or a key's of this application."""
    wanted = visit.form.get("back")
    keys = app.path("licenses") + "/"
    if wanted.startswith(keys) and wanted[len(keys) :].isdigit():
        return wanted
    return app.path(f"users/{user['id']}")


async def end_session(visit: Visit) -> Response:
    """End one of the user's sessions (the seller operation `kill`, of the sessions area)."""
    app, user = await _sessions_user(visit)
    wanted = visit.form.get("sessid")
    open_ids = {
        row["id"] for row in await sessions.of_user(visit.services.db, app.id, user["id"], visit.now())
    }
    back = _back(visit, app, user)
    if wanted not in open_ids:
        visit.flash("That session has already ended.", "warning")
        return visit.redirect(back)
    return await seller.act(visit, app, "kill", {"sessid": wanted}, done="The session has ended.", back=back)


async def end_all_sessions(visit: Visit) -> Response:
    app, user = await _sessions_user(visit)
    back = _back(visit, app, user)
    ended = 0
    try:
        for row in await sessions.of_user(visit.services.db, app.id, user["id"], visit.now()):
            await seller.run(visit, app, "kill", {"sessid": row["id"]})
            ended += 1
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(back)
    visit.flash(f"{ended} session{'' if ended == 1 else 's'} of {user['username']} ended.")
    return visit.redirect(back)


ROUTES = [
    Route("/apps/{app_id:int}/users/{user_id:int}", page(user_page), methods=["GET"]),
    Route("/apps/{app_id:int}/licenses/{key_id:int}", page(key_page), methods=["GET"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/sessions/end", page(end_session), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/unlock", page(unlock), methods=["POST"]),
    Route(
        "/apps/{app_id:int}/users/{user_id:int}/sessions/end-all", page(end_all_sessions), methods=["POST"]
    ),
]
