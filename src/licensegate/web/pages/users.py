"""Users: the application's end users, the Licenses list's conventions (filters in the URL, sort,
keyset paging, export of the filtered view), with the actions a seller takes on one user (create,
ban with what it blacklists shown, unban, pause, unpause, reset HWID, add or take time with a
preview of the new expiry, set a variable) and a variable for all users. Actions run through
`operations.seller.invoke()` (web/seller.py), so the seller API's permission rules, rate limit
and audit apply; a reseller sees and changes only the users it owns."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import subscriptions, users
from licensegate.domain.errors import Refusal
from licensegate.domain.paging import PageRequest, known_total
from licensegate.domain.permissions import Scope
from licensegate.web import export as export_view
from licensegate.web import seller
from licensegate.web.confirm import Question, confirm_page, confirmed
from licensegate.web.listing import Column, Filter, ListSpec, View
from licensegate.web.navigation import AppPage, Section, open_app, register
from licensegate.web.pages.licenses import reseller_of
from licensegate.web.visit import Visit, page

SLUG = "users"
register(Section("Users", SLUG, "users"))

STATUSES = (
    ("", "Any status"),
    ("active", "Active"),
    ("paused", "Paused"),
    ("expired", "Expired"),
    ("banned", "Banned"),
)
HWID_CHOICES = (("", "Any"), ("set", "Has an HWID"), ("none", "No HWID yet"))
SPEC = ListSpec(
    columns=(
        # The name and status first; the actions column stays in view (app.css).
        Column("username", "Username", sortable=True),
        Column("status", "Status"),
        Column("subscriptions", "Subscriptions"),
        Column("expires_at", "Expires"),
        Column("hwid", "HWID"),
        Column("last_login", "Last login"),  # and from which address
        Column("created", "Created", sortable=True),  # and by whom
    ),
    filters=(
        Filter("q", "Search", "search", placeholder="Start of a username, an HWID or an IP", max_length=256),
        Filter("status", "Status", "select", STATUSES),
        Filter("sub", "Subscription", "select"),
        Filter("hwid", "HWID", "select", HWID_CHOICES),
        Filter("created_from", "Created from", "date", more=True),
        Filter("created_to", "Created until", "date", more=True),
        Filter("login_from", "Last login from", "date", more=True),
        Filter("login_to", "Last login until", "date", more=True),
        Filter("expires_from", "Expires from", "date", more=True),
        Filter("expires_to", "Expires until", "date", more=True),
    ),
    default_sort="created",
    empty_text="No users yet. Create one above, or let your program register them.",
)
EXPORT_BATCH = 1000
EXPORT_FIELDS = (
    "username",
    "email",
    "status",
    "banned_reason",
    "subscriptions",
    "expires_at",
    "hwids",
    "last_ip",
    "created_at",
    "last_login_at",
    "created_by",
)
STATUS_CLASS = {
    "active": "status-ok",
    "paused": "status-warn",
    "expired": "status-off",
    "banned": "status-bad",
}
# Where a refusal of a form belongs: the field of the parameter it names, or of its error code.
FIELDS = {
    "user": "user",
    "sub": "sub",
    "expiry": "expiry",
    "pass": "pass",
    "email": "email",
    "reason": "reason",
    "seconds": "amount",
    "user_exists": "user",
    "username_not_allowed": "user",
    "invalid_username": "user",
    "invalid_email": "email",
    "invalid_expiry": "expiry",
    "number_out_of_range": "expiry",
    "subscription_not_found": "sub",
    "level_not_allowed": "sub",
    "duration_not_sold": "expiry",
    "insufficient_balance": "expiry",
    "grant_not_found": "sub",
}
TIME_FIELDS = {
    "sub": "sub",
    "expiry": "amount",
    "seconds": "amount",
    "subscription_not_found": "sub",
    "grant_not_found": "sub",
    "level_not_allowed": "sub",
}
UNITS = (("days", "days", 86400), ("hours", "hours", 3600), ("minutes", "minutes", 60))


# --- reading -----------------------------------------------------------------------------------


async def _subscription_names(visit: Visit, app_id: int) -> list[dict[str, Any]]:
    return list(await subscriptions.list_all(visit.services.db, app_id))


async def _open(visit: Visit) -> tuple[AppPage, View, list[dict[str, Any]]]:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), "users")
    subs = await _subscription_names(visit, app.id)
    options = {"sub": (("", "Any subscription"), *((sub["name"], sub["name"]) for sub in subs))}
    view = SPEC.read(visit.request.query_params, options)
    return app, view, subs


def user_query(view: View, subs: list[dict[str, Any]], now: int) -> users.UserQuery:
    values = view.values
    sub_ids = {sub["name"]: int(sub["id"]) for sub in subs}
    return users.UserQuery(
        now=now,
        status=values.get("status") or "all",
        subscription_id=sub_ids.get(values.get("sub", "")),
        search=values.get("q", ""),
        hwid=values.get("hwid", ""),
        created_from=view.date("created_from"),
        created_to=view.date("created_to", end=True),
        login_from=view.date("login_from"),
        login_to=view.date("login_to", end=True),
        expires_from=view.date("expires_from"),
        expires_to=view.date("expires_to", end=True),
    )


def _scope(visit: Visit, app: AppPage) -> Scope:
    return Scope(app.id, reseller_of(visit))


async def list_page(
    visit: Visit, *, errors: dict[str, str] | None = None, error: str = "", status: int = 200
) -> Response:
    app, view, subs = await _open(visit)
    db, now, scope = visit.services.db, visit.now(), _scope(visit, app)
    query = user_query(view, subs, now)
    found = await users.browse(db, scope, query, view.request)
    total = known_total(found, view.request)
    if total is None:
        total = await users.count_matching(db, scope, query)
    listing = view.listing(app.path(SLUG), found, total, cap=users.COUNT_CAP)
    account = visit.account
    return visit.render(
        "users/list.html",
        status=status,
        title=f"Users · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=listing,
        subs=subs,
        reseller=scope.reseller,
        now=now,
        status_class=STATUS_CLASS,
        can_variables=account.allows("variables"),
        errors=errors or {},
        error=error,
        form=visit.form,
        units=UNITS,
        back=_back_of(visit, app),
    )


def _export_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "username": row["username"],
        "email": row["email"],
        "status": row["status"],
        "banned_reason": row["banned_reason"],
        "subscriptions": [
            {
                "name": g["subscription"],
                "level": g["level"],
                "expires_at": g["expires_at"],
                "paused": g["paused"],
            }
            for g in row["grants"]
        ],
        "expires_at": row["expires_at"],
        "hwids": row["hwids"],
        "last_ip": row["last_ip"],
        "created_at": row["created_at"],
        "last_login_at": row["last_login_at"],
        "created_by": row["created_by"],
    }


def _csv_row(row: dict[str, Any]) -> dict[str, Any]:
    flat = dict(row)
    flat["subscriptions"] = " ".join(f"{g['name']}:{g['expires_at']}" for g in row["subscriptions"])
    flat["hwids"] = " ".join(row["hwids"])
    return flat


async def export(visit: Visit) -> Response:
    """The filtered view as CSV or JSON, streamed in batches read by keyset (any size, constant
    memory); never password hashes or second-factor secrets."""
    app, view, subs = await _open(visit)
    fmt = export_view.chosen_format(visit)
    if fmt is None:
        return export_view.refused(visit)
    db, scope = visit.services.db, _scope(visit, app)
    query = user_query(view, subs, visit.now())

    async def rows() -> AsyncIterator[dict[str, Any]]:
        request = PageRequest("created", False, EXPORT_BATCH)
        while True:
            found = await users.browse(db, scope, query, request)
            for row in found.rows:
                yield _export_row(row)
            if not found.has_next:
                return
            request = PageRequest("created", False, EXPORT_BATCH, users.position_after(found.rows[-1]))

    return export_view.stream(visit, f"users-{app.id}", fmt, rows(), EXPORT_FIELDS, _csv_row)


# --- one user -----------------------------------------------------------------------------------


async def _user(visit: Visit) -> tuple[AppPage, dict[str, Any]]:
    """The user of the path, if the signed-in account may see it (404 otherwise)."""
    app = await open_app(visit, int(visit.request.path_params["app_id"]), "users")
    user_id = int(visit.request.path_params["user_id"])
    user = await users.by_id(visit.services.db, _scope(visit, app), user_id, visit.now())
    return app, user


def _user_path(app: AppPage, user: dict[str, Any], action: str = "") -> str:
    return app.path(f"{SLUG}/{user['id']}" + (f"/{action}" if action else ""))


def _back_of(visit: Visit, app: AppPage) -> str:
    """Where an action returns: the page it was taken on (a list view, a user's or a key's page),
    if it is one of this application's; otherwise the list."""
    wanted = visit.form.get("back") or visit.request.query_params.get("back", "")
    if wanted.startswith(app.path(SLUG)) and "//" not in wanted and "\\" not in wanted:
        return wanted
    keys = app.path("licenses") + "/"
    if wanted.startswith(keys) and wanted[len(keys) :].isdigit():  # a key's page
        return wanted
    current = visit.request.url.path + (f"?{visit.request.url.query}" if visit.request.url.query else "")
    return current if visit.request.method == "GET" else app.path(SLUG)


async def create(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), "users")
    form = visit.form
    params = {"user": form.get("user"), "sub": form.get("sub"), "expiry": form.get("expiry")}
    for optional in ("pass", "email"):
        if form.get(optional):
            params[optional] = form.get(optional)
    params["hwidAffected"] = "1" if form.flag("hwid_lock") or "hwid_lock" not in form else "0"
    try:
        await seller.run(visit, app, "adduser", params)
    except Refusal as refusal:
        fields = seller.field_error(refusal, FIELDS)
        whole = fields.pop("", "")
        return await list_page(visit, errors=fields, error=whole, status=seller.status_of(refusal))
    visit.flash(f"The user {params['user']} is created.")
    return visit.redirect(app.path(SLUG))


async def ban_form(visit: Visit, *, errors: dict[str, str] | None = None, status: int = 200) -> Response:
    """What banning this user does, before it is done: the sessions it ends and, when the account
    may manage the blacklists, the HWIDs and IP it blacklists (with the choice to leave the IP out)."""
    app, user = await _user(visit)
    return visit.render(
        "users/ban.html",
        status=status,
        title=f"Ban {user['username']}",
        app=app.app,
        nav=app.nav,
        user=user,
        blacklists=visit.account.allows("blacklists"),
        errors=errors or {},
        form=visit.form,
        back=_back_of(visit, app),
        action=_user_path(app, user, "ban"),
    )


async def ban(visit: Visit) -> Response:
    app, user = await _user(visit)
    params = {
        "user": user["username"],
        "reason": visit.form.text("reason", 256) or users.DEFAULT_BAN_REASON,
        "blacklistIp": "1" if visit.form.flag("blacklist_ip") else "0",
    }
    back = _back_of(visit, app)
    try:
        await seller.run(visit, app, "banuser", params)
    except Refusal as refusal:
        return await ban_form(
            visit, errors=seller.field_error(refusal, FIELDS, "reason"), status=seller.status_of(refusal)
        )
    visit.flash(f"{user['username']} is banned; their sessions have ended.")
    return visit.redirect(back)


def _row_action(operation: str, param: str, done: str) -> Callable[[Visit], Awaitable[Response]]:
    """A button on a user's row: run `operation` on the user (named by `param`), say `done`."""

    async def act(visit: Visit) -> Response:
        app, user = await _user(visit)
        name = user["username"]
        back = _back_of(visit, app)
        return await seller.act(visit, app, operation, {param: name}, done=done.format(name=name), back=back)

    return act


unban = _row_action("unbanuser", "user", "{name} is unbanned.")
pause = _row_action("pauseuser", "username", "{name}'s time is paused.")
unpause = _row_action("unpauseuser", "username", "{name}'s time runs again.")


async def reset_hwid(visit: Visit) -> Response:
    app, user = await _user(visit)
    name = user["username"]
    ask = Question(
        title=f"Reset {name}'s HWID?",
        message=f"{name} may then sign in from a new device; the next login records it.",
        button="Reset HWID",
        danger=False,
    )
    return await seller.act(
        visit,
        app,
        "resetuser",
        {"user": name},
        done=f"{name}'s HWID is reset.",
        back=_back_of(visit, app),
        ask=ask,
    )


def _seconds(visit: Visit, source: Any) -> tuple[int | None, dict[str, str]]:
    """The amount of time a time form asks for, in seconds (negative to subtract), or the error
    next to its field."""
    raw = source.get("amount", "").strip()
    unit = source.get("unit", "days")
    sizes = {value: size for value, _label, size in UNITS}
    if not raw:
        return None, {}
    try:
        amount = float(raw)
    except ValueError:
        return None, {"amount": "Write a number, such as 30 or 1.5."}
    if unit not in sizes:
        return None, {"unit": "Choose days, hours or minutes."}
    seconds = round(amount * sizes[unit])
    if not amount > 0 or seconds < 1 or seconds > 1_000_000 * 86400:
        return None, {"amount": "Give more than 0 and at most 1,000,000 days."}
    return (seconds if source.get("direction", "add") != "subtract" else -seconds), {}


async def time_form(
    visit: Visit, *, errors: dict[str, str] | None = None, status: int = 200, source: Any = None
) -> Response:
    """Add or take time on one of the user's subscriptions, with the expiry it would leave: the
    preview follows the form as it changes (htmx), or comes after "Preview" without script."""
    app, user = await _user(visit)
    source = source if source is not None else visit.request.query_params
    subs = await _subscription_names(visit, app.id)
    names = [sub["name"] for sub in subs]
    held = [g["subscription"] for g in user["grants"]]
    chosen = source.get("sub") or (held[-1] if held else (names[0] if names else ""))
    seconds, found_errors = _seconds(visit, source)
    errors = {**found_errors, **(errors or {})}
    if chosen and chosen not in names:
        errors["sub"] = "Choose one of the application's subscriptions."
    preview = None
    if seconds is not None and not errors:
        before, after = users.time_preview(user, chosen, seconds, visit.now())
        preview = {"before": before, "after": after, "seconds": seconds}
    template = "users/time_preview.html" if visit.request.headers.get("HX-Request") else "users/time.html"
    return visit.render(
        template,
        status=status,
        title=f"Time of {user['username']}",
        app=app.app,
        nav=app.nav,
        user=user,
        subs=names,
        chosen=chosen,
        values=source,
        units=UNITS,
        errors=errors,
        preview=preview,
        now=visit.now(),
        back=_back_of(visit, app),
        action=_user_path(app, user, "time"),
    )


async def change_time(visit: Visit) -> Response:
    form = visit.form
    if form.get("preview"):  # "Preview" (or the form changing, with htmx): nothing changes
        return await time_form(visit, source=form)
    app, user = await _user(visit)
    seconds, errors = _seconds(visit, form)
    if seconds is None:
        errors = errors or {"amount": "Give an amount of time."}
        return await time_form(visit, errors=errors, status=400, source=form)
    name, sub = user["username"], form.get("sub")
    if seconds > 0:
        operation, params = "extend", {"user": name, "sub": sub, "expiry": repr(seconds / 86400)}
        done = f"{name} has more time on {sub}."
    else:
        operation, params = "subtract", {"user": name, "sub": sub, "seconds": str(-seconds)}
        done = f"Time was taken from {name} on {sub}."
    try:
        await seller.run(visit, app, operation, params)
    except Refusal as refusal:
        errors = seller.field_error(refusal, TIME_FIELDS, "amount")
        return await time_form(visit, errors=errors, status=seller.status_of(refusal), source=form)
    visit.flash(done)
    return visit.redirect(_back_of(visit, app))


async def set_variable(visit: Visit) -> Response:
    """A variable for one user (on the user's row or page) or for every user (the list)."""
    app = await open_app(visit, int(visit.request.path_params["app_id"]), "users")
    form = visit.form
    target = "all"
    if "user_id" in visit.request.path_params:
        app, user = await _user(visit)
        target = user["username"]
    elif not confirmed(visit):
        return confirm_page(
            visit,
            title="Set this variable for every user?",
            message=f"Every user gets the variable '{form.get('var')[:64]}' with this value; "
            "one they already hold is replaced.",
            button="Set for every user",
            back=_back_of(visit, app),
        )
    params = {"user": target, "var": form.get("var"), "data": form.get("data")}
    params["readOnly"] = "1" if form.flag("read_only") else "0"
    try:
        body = await seller.run(visit, app, "setvar", params)
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(_back_of(visit, app))
    count = int(body.get("updated", 1))
    who = f"{count:,} users" if target == "all" else target
    visit.flash(f"The variable {params['var']} is set for {who}.")
    return visit.redirect(_back_of(visit, app))


ROUTES = [
    Route("/apps/{app_id:int}/users", page(list_page), methods=["GET"]),
    Route("/apps/{app_id:int}/users", page(create), methods=["POST"]),
    Route("/apps/{app_id:int}/users/export", page(export), methods=["GET"]),
    Route("/apps/{app_id:int}/users/variable", page(set_variable), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/ban", page(ban_form), methods=["GET"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/ban", page(ban), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/unban", page(unban), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/pause", page(pause), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/unpause", page(unpause), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/reset-hwid", page(reset_hwid), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/time", page(time_form), methods=["GET"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/time", page(change_time), methods=["POST"]),
    Route("/apps/{app_id:int}/users/{user_id:int}/variable", page(set_variable), methods=["POST"]),
]
