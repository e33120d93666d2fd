"""Sessions: the application's client sessions (credential, with license keys masked; user, IP,
HWID, started, ends, logged in), filtered by state, user and address and keyset paged; the users
online now; end one session, every session of one user, or every session of the application
(confirmed). Every change runs the seller operation of the same effect (`kill`, `killall`)."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import errorcodes, overview, sessions
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import Column, Filter, ListSpec
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.templating import counted, when
from licensegate.web.visit import Visit, page

SLUG = "sessions"
AREA: Area = "sessions"
register(Section("Sessions", SLUG, AREA))

STATES = (
    ("", "Open"),
    ("online", "Logged in"),
    ("waiting", "Not logged in"),
    ("all", "Open and expired"),
)
SPEC = ListSpec(
    columns=(
        Column("credential", "Credential"),
        Column("user", "User"),
        Column("ip", "IP"),
        Column("hwid", "HWID"),
        Column("created_at", "Started", sortable=True),
        Column("expires", "Ends"),
        Column("validated", "Logged in"),
    ),
    filters=(
        Filter("state", "State", "select", options=STATES),
        Filter("user", "User", "search", placeholder="A whole username", max_length=128),
        Filter("ip", "IP", placeholder="An address", max_length=64),
    ),
    default_sort="created_at",
    empty_text="No open sessions. A program opens one when it starts.",
    text_ids=True,
)
SHOWN_ONLINE = 100  # names of users online the page lists


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


async def list_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    view = SPEC.read(visit.request.query_params)
    if view.position is not None and type(view.position.value) is not int:
        raise errorcodes.INVALID_VIEW("This page link is damaged; start again from the first page.")
    values, db, now = view.values, visit.services.db, visit.now()
    found = await sessions.browse(
        db,
        app.id,
        now=now,
        state=values.get("state", ""),
        username=values.get("user"),
        ip=values.get("ip"),
        request=view.request,
    )
    for row in found.rows:
        row["label"] = f"the session started {when(row['created_at'])}" + (
            f" by {row['username']}" if row["username"] else ""
        )
    names = await sessions.online_names(db, app.id, now)
    return visit.render(
        "sessions/list.html",
        status=status,
        title=f"Sessions · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(SLUG), found, None),
        path=app.path(SLUG),
        online=await overview.online(db, app.id, now),
        online_names=names[:SHOWN_ONLINE],
        online_more=len(names) > SHOWN_ONLINE,
        errors=errors,
        form={"user": visit.form.get("user") if visit.request.method == "POST" else ""},
    )


async def end_one(visit: Visit) -> Response:
    app = await _open(visit)
    wanted = visit.form.get("sessid")
    return await seller.act(
        visit, app, "kill", {"sessid": wanted}, done="The session has ended.", back=app.path(SLUG)
    )


async def end_user(visit: Visit) -> Response:
    """End every open session of one user (named in the form), one `kill` each, counted once."""
    app = await _open(visit)
    username = visit.form.get("user").strip()
    try:
        if not username:
            raise errorcodes.MISSING_PARAMETER(name="user", param="user")
        if len(username) > 128:
            raise errorcodes.PARAMETER_TOO_LONG(name="user", max_length=128, param="user")
        ids = await sessions.open_ids_of(visit.services.db, app.id, username, visit.now())
        if ids is None:
            raise errorcodes.USER_NOT_FOUND(username=username, param="user")
        steps = await seller.Steps.of(visit, app)
        for session_id in ids:
            await steps.run("kill", {"sessid": session_id})
    except Refusal as refusal:
        return await list_page(visit, seller.refused(app, refusal, {"user": "user"}, default="user"))
    ended = len(ids)
    visit.flash(f"{ended:,} session{'' if ended == 1 else 's'} of {username} ended.")
    return visit.redirect(app.path(SLUG))


async def end_all(visit: Visit) -> Response:
    app = await _open(visit)
    total, _logged_in = await sessions.count_live(visit.services.db, app.id, visit.now())
    ask = Question(
        title="End every session?",
        message=f"{total:,} open session{'' if total == 1 else 's'} end; every program using "
        f"{app.app['name']} must start and sign in again.",
        button="End every session",
    )
    return await seller.act(
        visit,
        app,
        "killall",
        {},
        done=lambda body: f"Every session ended ({counted(int(body.get('deleted', 0)), 'session')}).",
        back=app.path(SLUG),
        ask=ask,
    )


BASE = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(BASE, page(list_page), methods=["GET"]),
    Route(BASE + "/end", page(end_one), methods=["POST"]),
    Route(BASE + "/end-user", page(end_user), methods=["POST"]),
    Route(BASE + "/end-all", page(end_all), methods=["POST"]),
]
