"""Entitlements: the application's named features (create, edit, delete) and, on the
subscription, key and user pages, those attached to it (attach one, detach one). Every change runs
the seller operation of the same name (`addentitlement`, `editentitlement`, `delentitlement`,
`attachentitlement`, `detachentitlement`), so permissions and the audit log are the API's own."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import entitlements
from licensegate.domain.entitlements import Owner
from licensegate.domain.errors import Refusal
from licensegate.web import seller
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.pages.attached_entitlements import AREA, SLUG
from licensegate.web.visit import Visit, page

register(Section("Entitlements", SLUG, AREA))
FIELDS = {
    "code": "code",
    "newCode": "code",
    "name": "name",
    "metadata": "metadata",
    "entitlement_exists": "code",
}
OWNERS: dict[str, Owner] = {"sub": "sub", "key": "key", "user": "user"}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


def _shown(row: entitlements.EntitlementRow) -> dict[str, Any]:
    return {**row, "metadata": row["metadata"] or ""}


async def list_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    rows = [_shown(row) for row in await entitlements.list_all(visit.services.db, app.id)]
    return visit.render(
        "entitlements/list.html",
        status=status,
        title=f"Entitlements · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        rows=rows,
        path=app.path(SLUG),
        errors=errors,
        form={key: visit.form.get(key) for key in ("code", "name", "metadata")},
    )


async def create(visit: Visit) -> Response:
    app = await _open(visit)
    params = {key: visit.form.get(key) for key in ("code", "name", "metadata")}
    try:
        await seller.run(visit, app, "addentitlement", params)
    except Refusal as refusal:
        return await list_page(visit, seller.refused(app, refusal, FIELDS))
    visit.flash(f"The entitlement {params['code'].strip()} is created.")
    return visit.redirect(app.path(SLUG))


async def edit(visit: Visit) -> Response:
    app = await _open(visit)
    code = visit.form.get("code")
    params = {"code": code, "name": visit.form.get("name"), "metadata": visit.form.get("metadata") or "{}"}
    new_code = visit.form.get("new_code").strip()
    if new_code and new_code != code:
        params["newCode"] = new_code
    return await seller.act(
        visit,
        app,
        "editentitlement",
        params,
        done=f"The entitlement {new_code or code} is saved.",
        back=app.path(SLUG),
    )


async def delete(visit: Visit) -> Response:
    app = await _open(visit)
    code = visit.form.get("code")
    return await seller.act(
        visit,
        app,
        "delentitlement",
        {"code": code},
        done=f"The entitlement {code} is deleted.",
        back=app.path(SLUG),
    )


def _back(visit: Visit, app: AppPage) -> str:
    """Back to the subscription, key or user page of this application the form was on."""
    wanted = visit.form.get("back")
    base = app.path("")
    return wanted if wanted.startswith(base) and "//" not in wanted and ".." not in wanted else app.path(SLUG)


async def _attachment(visit: Visit, operation: str, done: str) -> Response:
    app = await _open(visit)
    owner = OWNERS.get(visit.form.get("owner"), "sub")
    code = visit.form.get("code")
    params = {"code": code, owner: visit.form.get("name")}
    return await seller.act(
        visit, app, operation, params, done=done.format(code=code), back=_back(visit, app)
    )


async def attach(visit: Visit) -> Response:
    return await _attachment(visit, "attachentitlement", "The entitlement {code} is attached.")


async def detach(visit: Visit) -> Response:
    return await _attachment(visit, "detachentitlement", "The entitlement {code} is detached.")


BASE = "/apps/{app_id:int}/entitlements"
ROUTES = [
    Route(BASE, page(list_page), methods=["GET"]),
    Route(BASE, page(create), methods=["POST"]),
    Route(BASE + "/edit", page(edit), methods=["POST"]),
    Route(BASE + "/delete", page(delete), methods=["POST"]),
    Route(BASE + "/attach", page(attach), methods=["POST"]),
    Route(BASE + "/detach", page(detach), methods=["POST"]),
]
