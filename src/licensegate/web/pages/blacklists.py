"""Blacklist and whitelist. The blacklist (HWIDs, addresses, ranges) is listed with where each
entry came from (a ban of which user, or added directly by whom: the owner, a manager, a
reseller's ban, the client program, tamper detection), filtered by kind, origin and value and
keyset paged; add an IP or CIDR range and/or a HWID with a reason, delete one value or every
entry (confirmed). The whitelist (addresses and ranges that bypass IP entries, never HWID
ones), which KeyAuth never lists, the same way. Every change runs the seller operation of the
same effect (`black`, `delblack`, `delblacks`, `addWhite`, `delWhite`, `delallwhites`)."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import blacklists
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import Column, Filter, ListSpec
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.templating import counted
from licensegate.web.visit import Visit, page

AREA: Area = "blacklists"
BLACK_SLUG = "blacklist"
WHITE_SLUG = "whitelist"
register(Section("Blacklist", BLACK_SLUG, AREA))
register(Section("Whitelist", WHITE_SLUG, AREA))

KINDS = (("", "Any"), ("hwid", "HWID"), ("ip", "IP address"), ("cidr", "IP range"))
ORIGINS = (("", "Any"), ("direct", "Added directly"), ("ban", "A user's ban"))
BLACK_SPEC = ListSpec(
    columns=(
        Column("kind", "Type"),
        Column("value", "Value"),
        Column("reason", "Reason"),
        Column("origin", "Came from"),
        Column("created", "Added", sortable=True),
    ),
    filters=(
        Filter("kind", "Type", "select", options=KINDS),
        Filter("origin", "Came from", "select", options=ORIGINS),
        Filter("value", "Value", "search", placeholder="A whole HWID, address or range", max_length=256),
    ),
    default_sort="created",
    empty_text="The blacklist is empty. Add a HWID or an address below.",
)
WHITE_SPEC = ListSpec(
    columns=(
        Column("value", "Address or range"),
        Column("origin", "Came from"),
        Column("created", "Added", sortable=True),
    ),
    filters=(Filter("value", "Address or range", "search", placeholder="A whole address or range"),),
    default_sort="created",
    empty_text="The whitelist is empty.",
)
KIND_LABEL = {"hwid": "HWID", "ip": "IP address", "cidr": "IP range"}
# Where a refusal is shown: parameter names and error codes -> form fields.
BLACK_FIELDS = {"ip": "ip", "invalid_ip": "ip", "hwid": "hwid", "reason": "reason"}
WHITE_FIELDS = {"ip": "ip", "invalid_ip": "ip"}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


def _entries(count: int) -> str:
    return counted(count, "entry", "entries")


# --- blacklist ---------------------------------------------------------------------------------


async def black_list(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    view = BLACK_SPEC.read(visit.request.query_params)
    found = await blacklists.browse(
        visit.services.db,
        app.id,
        kind=view.values.get("kind", ""),
        origin=view.values.get("origin", ""),
        value=view.values.get("value"),
        request=view.request,
    )
    for row in found.rows:
        row["kind_label"] = KIND_LABEL.get(row["kind"], row["kind"])
    form = visit.form
    return visit.render(
        "blacklists/black.html",
        status=status,
        title=f"Blacklist · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(BLACK_SLUG), found, None),
        path=app.path(BLACK_SLUG),
        errors=errors,
        form={"ip": form.get("ip"), "hwid": form.get("hwid"), "reason": form.get("reason")},
    )


async def black_add(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    params = {name: form.get(name).strip() for name in ("ip", "hwid", "reason")}
    try:
        body = await seller.run(visit, app, "black", {k: v for k, v in params.items() if v})
    except Refusal as refusal:
        return await black_list(visit, seller.refused(app, refusal, BLACK_FIELDS))
    listed = " and ".join(value for value in (params["ip"], params["hwid"]) if value)
    added = int(body.get("added", 0))
    if added:
        visit.flash(f"{listed} {'is' if added == 1 else 'are'} blacklisted.")
    else:
        visit.flash(f"{listed} was already blacklisted; the entry is unchanged.", "warning")
    return visit.redirect(app.path(BLACK_SLUG))


async def black_delete(visit: Visit) -> Response:
    app = await _open(visit)
    value, blacktype = visit.form.get("data"), visit.form.get("blacktype")
    ask = Question(
        title=f"Remove {value[:64]} from the blacklist?",
        message="The value is removed whatever listed it (directly or by bans); "
        "programs from it are no longer refused for it.",
        button="Remove it",
    )
    done = f"{value} is no longer blacklisted."
    params = {"data": value, "blacktype": blacktype}
    return await seller.act(visit, app, "delblack", params, done=done, back=app.path(BLACK_SLUG), ask=ask)


async def black_delete_all(visit: Visit) -> Response:
    app = await _open(visit)
    total = await blacklists.count(visit.services.db, app.id)
    return await _empty(visit, app, BLACK_SLUG, "delblacks", total, " (those users' bans added included)")


async def _empty(
    visit: Visit, app: AppPage, slug: str, operation: str, total: int, which: str = ""
) -> Response:
    """Empty the blacklist or the whitelist (`slug`), once confirmed with the count."""
    ask = Question(
        title=f"Empty the {slug}?",
        message=f"Every entry is removed ({_entries(total)}){which}. This cannot be undone.",
        button=f"Empty the {slug}",
    )
    return await seller.act(
        visit,
        app,
        operation,
        {},
        done=lambda body: f"The {slug} is empty ({_entries(int(body.get('deleted', 0)))} removed).",
        back=app.path(slug),
        ask=ask,
    )


# --- whitelist ---------------------------------------------------------------------------------


async def white_list(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    view = WHITE_SPEC.read(visit.request.query_params)
    found = await blacklists.browse_whites(
        visit.services.db, app.id, value=view.values.get("value"), request=view.request
    )
    return visit.render(
        "blacklists/white.html",
        status=status,
        title=f"Whitelist · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(WHITE_SLUG), found, None),
        path=app.path(WHITE_SLUG),
        errors=errors,
        form={"ip": visit.form.get("ip")},
    )


async def white_add(visit: Visit) -> Response:
    app = await _open(visit)
    ip = visit.form.get("ip").strip()
    try:
        body = await seller.run(visit, app, "addWhite", {"ip": ip})
    except Refusal as refusal:
        return await white_list(visit, seller.refused(app, refusal, WHITE_FIELDS, default="ip"))
    if int(body.get("added", 0)):
        visit.flash(f"{ip} is whitelisted.")
    else:
        visit.flash(f"{ip} was already whitelisted.", "warning")
    return visit.redirect(app.path(WHITE_SLUG))


async def white_delete(visit: Visit) -> Response:
    app = await _open(visit)
    ip = visit.form.get("ip")
    ask = Question(
        title=f"Remove {ip[:64]} from the whitelist?",
        message="Programs from it are checked against the IP blacklist again.",
        button="Remove it",
    )
    done = f"{ip} is no longer whitelisted."
    return await seller.act(visit, app, "delWhite", {"ip": ip}, done=done, back=app.path(WHITE_SLUG), ask=ask)


async def white_delete_all(visit: Visit) -> Response:
    app = await _open(visit)
    total = await blacklists.count_whites(visit.services.db, app.id)
    return await _empty(visit, app, WHITE_SLUG, "delallwhites", total)


BLACK = "/apps/{app_id:int}/" + BLACK_SLUG
WHITE = "/apps/{app_id:int}/" + WHITE_SLUG
ROUTES = [
    Route(BLACK, page(black_list), methods=["GET"]),
    Route(BLACK, page(black_add), methods=["POST"]),
    Route(BLACK + "/delete", page(black_delete), methods=["POST"]),
    Route(BLACK + "/delete-all", page(black_delete_all), methods=["POST"]),
    Route(WHITE, page(white_list), methods=["GET"]),
    Route(WHITE, page(white_add), methods=["POST"]),
    Route(WHITE + "/delete", page(white_delete), methods=["POST"]),
    Route(WHITE + "/delete-all", page(white_delete_all), methods=["POST"]),
]
