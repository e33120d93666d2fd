"""Seller keys: the application's keys for the seller API (name, areas, who it acts as, created,
last used and from which address), creating one with a name and areas chosen as checkboxes (the
key is shown once), and revoking one. Changes run the seller operations `addsellerkey` and
`delsellerkey`, so a caller can only grant the areas it holds (`beyond_own_areas`) and every
change is in the audit log."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import errorcodes, permissions, sellerkeys
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.visit import Visit, page

AREA: Area = "sellerkeys"
SLUG = "seller-keys"
register(Section("Seller keys", SLUG, AREA))

# What each area lets a key do, beside its checkbox.
AREA_HINTS: dict[str, str] = {
    "licenses": "license keys",
    "users": "users",
    "subscriptions": "subscriptions",
    "chats": "chat channels",
    "sessions": "client sessions",
    "webhooks": "webhooks",
    "files": "files",
    "variables": "user and global variables",
    "logs": "client, tamper, audit and seller logs",
    "blacklists": "blacklists and whitelists",
    "settings": "application settings and messages",
    "tokens": "tokens",
    "team": "resellers and managers",
    "sellerkeys": "seller keys",
}
FIELDS = {"name": "name", "permissions": "areas", "invalid_permissions": "areas", "beyond_own_areas": "areas"}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


async def listing(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    identity = (await seller.caller(visit, app)).identity
    keys = await sellerkeys.list_keys(visit.services.db, identity)
    for key in keys:
        key["all_areas"] = len(key["permissions"]) == len(permissions.AREAS)
    form = visit.form
    posted = visit.request.method == "POST"
    held = permissions.names(identity.permissions)
    return visit.render(
        "sellerkeys/list.html",
        status=status,
        title=f"Seller keys · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        keys=keys,
        path=app.path(SLUG),
        areas=[(name, AREA_HINTS[name]) for name in held],
        errors=errors,
        form={
            "name": form.get("name"),
            "areas": set(form.all("areas")) if posted else set(),
        },
    )


async def create(visit: Visit) -> Response:
    """Create a key with the ticked areas; the answer shows the key, this once."""
    app = await _open(visit)
    form = visit.form
    areas = form.all("areas")
    try:
        if not areas:
            raise errorcodes.INVALID_FORM("Tick at least one area.", param="permissions")
        body = await seller.run(
            visit, app, "addsellerkey", {"name": form.get("name"), "permissions": ",".join(areas)}
        )
    except Refusal as refusal:
        return await listing(visit, seller.refused(app, refusal, FIELDS))
    name = form.get("name").strip()
    visit.flash(f"The seller key {name or body['sellerkey'][:6]} is created.")
    return visit.render(
        "sellerkeys/created.html",
        title=f"Seller key created · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        key=body["sellerkey"],
        name=name,
        areas=body["permissions"],
        all_areas=len(body["permissions"]) == len(permissions.AREAS),
        path=app.path(SLUG),
    )


async def revoke(visit: Visit) -> Response:
    app = await _open(visit)
    key_id, label = visit.form.get("id"), visit.form.get("label")[:64]
    ask = Question(
        title=f"Revoke the seller key {label}?",
        message="Programs and scripts using it are refused from now on. This cannot be undone.",
        button="Revoke the key",
    )
    done = f"The seller key {label} is revoked."
    return await seller.act(
        visit, app, "delsellerkey", {"id": key_id}, done=done, back=app.path(SLUG), ask=ask
    )


PATH = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(PATH, page(listing), methods=["GET"]),
    Route(PATH, page(create), methods=["POST"]),
    Route(PATH + "/revoke", page(revoke), methods=["POST"]),
]
