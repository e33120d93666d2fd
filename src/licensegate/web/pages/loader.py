"""Web loader: the customer panel's switch and link, the web loader's download link, and the
buttons the panel shows once the loader has signed in (add, edit, move up or down, delete one or
all, confirmed). Every change runs the seller operation of the same effect (`updatesettings`
with `customerpanel` / `webdownload` / `clearwebdownload`, `addbutton`, `editbutton`,
`movebutton`, `delbutton`, `delallbuttons`), so the permission area is `settings` as in the
seller API."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import loader
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.visit import Visit, error_page, page

SLUG = "loader"
AREA: Area = "settings"
register(Section("Web loader", SLUG, AREA))

# Where a refusal is shown: parameter names and error codes -> form fields.
BUTTON_FIELDS = {
    "value": "value",
    "text": "text",
    "invalid_button_value": "value",
    "button_exists": "value",
    "too_many_buttons": "",
}
EDIT_FIELDS = {"newvalue": "value", "text": "text", "invalid_button_value": "value", "button_exists": "value"}
SETUP_FIELDS = {"webdownload": "webdownload", "invalid_url": "webdownload"}


def panel_url(visit: Visit, app_id: int) -> str:
    return f"{visit.services.settings.public_url}/panel/{app_id}/"


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


async def show(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    buttons = await loader.list_all(visit.services.db, app.id)
    posted = visit.request.method == "POST"
    form = visit.form
    return visit.render(
        "loader/page.html",
        status=status,
        title=f"Web loader · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        path=app.path(SLUG),
        buttons=buttons,
        maximum=loader.MAX_BUTTONS,
        panel_url=panel_url(visit, app.id),
        errors=errors,
        form={
            "text": form.get("text") if posted else "",
            "value": form.get("value") if posted else "",
            "webdownload": form.get("webdownload")
            if posted and "webdownload" in form
            else (app.app["web_loader_download"] or ""),
            "customerpanel": form.flag("customerpanel")
            if posted and "webdownload" in form
            else bool(app.app["customer_panel"]),
        },
    )


async def save_setup(visit: Visit) -> Response:
    """The customer panel's switch and the web loader's download link, in one `updatesettings`."""
    app = await _open(visit)
    form = visit.form
    download = form.get("webdownload").strip()
    params = {"customerpanel": "1" if form.flag("customerpanel") else "0"}
    if download:
        params["webdownload"] = download
    elif app.app["web_loader_download"]:
        params["clearwebdownload"] = "1"
    try:
        await seller.run(visit, app, "updatesettings", params)
    except Refusal as refusal:
        return await show(visit, seller.refused(app, refusal, SETUP_FIELDS, default="webdownload"))
    state = "on" if form.flag("customerpanel") else "off"
    visit.flash(f"Saved: the customer panel is {state}.")
    return visit.redirect(app.path(SLUG))


async def add(visit: Visit) -> Response:
    app = await _open(visit)
    value, text = visit.form.get("value").strip(), visit.form.get("text").strip()
    try:
        await seller.run(visit, app, "addbutton", {"value": value, "text": text})
    except Refusal as refusal:
        return await show(visit, seller.refused(app, refusal, BUTTON_FIELDS, default="value"))
    visit.flash(f"The button {text} ({value}) is added at the end.")
    return visit.redirect(app.path(SLUG))


async def edit_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    source = visit.form if visit.request.method == "POST" else visit.request.query_params
    value = str(source.get("button", ""))
    button = next((b for b in await loader.list_all(visit.services.db, app.id) if b["value"] == value), None)
    if button is None:
        return error_page(visit, 404, "Not found", "This application has no button with that value.")
    posted = visit.request.method == "POST"
    return visit.render(
        "loader/edit.html",
        status=status,
        title=f"Edit the button {button['text']} · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        path=app.path(SLUG),
        button=button,
        errors=errors,
        form={
            "text": visit.form.get("text") if posted else button["text"],
            "value": visit.form.get("value") if posted else button["value"],
        },
    )


async def edit(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    old, value, text = form.get("button"), form.get("value").strip(), form.get("text").strip()
    params = {"value": old, "text": text, "newvalue": value}
    try:
        await seller.run(visit, app, "editbutton", params)
    except Refusal as refusal:
        if refusal.error == "button_not_found":
            visit.flash(refusal.message, "error")
            return visit.redirect(app.path(SLUG))
        return await edit_page(visit, seller.refused(app, refusal, EDIT_FIELDS, default="value"))
    visit.flash(f"The button {text} ({value}) is saved.")
    return visit.redirect(app.path(SLUG))


async def move(visit: Visit) -> Response:
    app = await _open(visit)
    value, position = visit.form.get("value"), visit.form.get("position")
    return await seller.act(
        visit,
        app,
        "movebutton",
        {"value": value, "position": position},
        done=lambda body: f"The button {value} is now number {body['position']}.",
        back=app.path(SLUG) + "#h-buttons",
    )


async def delete(visit: Visit) -> Response:
    app = await _open(visit)
    value = visit.form.get("value")
    ask = Question(
        title=f"Delete the button {value[:64]}?",
        message="The customer panel no longer shows it; a loader waiting for it waits in vain.",
        button="Delete it",
    )
    done = f"The button {value} is deleted."
    return await seller.act(
        visit, app, "delbutton", {"value": value}, done=done, back=app.path(SLUG), ask=ask
    )


async def delete_all(visit: Visit) -> Response:
    app = await _open(visit)
    total = len(await loader.list_all(visit.services.db, app.id))
    ask = Question(
        title="Delete every button?",
        message=f"All {total:,} buttons are deleted; the customer panel shows none. This cannot be undone.",
        button="Delete every button",
    )
    return await seller.act(
        visit,
        app,
        "delallbuttons",
        {},
        done=lambda body: f"Every button is deleted ({int(body.get('deleted', 0)):,} in all).",
        back=app.path(SLUG),
        ask=ask,
    )


BASE = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(BASE, page(show), methods=["GET"]),
    Route(BASE + "/setup", page(save_setup), methods=["POST"]),
    Route(BASE + "/buttons", page(add), methods=["POST"]),
    Route(BASE + "/edit", page(edit_page), methods=["GET"]),
    Route(BASE + "/edit", page(edit), methods=["POST"]),
    Route(BASE + "/move", page(move), methods=["POST"]),
    Route(BASE + "/delete", page(delete), methods=["POST"]),
    Route(BASE + "/delete-all", page(delete_all), methods=["POST"]),
]
