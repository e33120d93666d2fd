"""Application settings: the settings and client messages the seller API exposes, one tab each
for a group of them (plain links, so the tabs work without JavaScript). The form fields are made
from the declarations of `updatesettings` and `setmessage`, and every save runs those operations,
so validation, permission (area `settings`), audit and the seller log are the API's own; a
refusal is shown next to the field it names. The messages tab previews each message as a
program receives it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import messages as catalogue
from licensegate.domain import settings as app_settings
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import registry
from licensegate.operations.seller.settings import CLEAR_PARAMS, SETTING_PARAMS
from licensegate.web import seller
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.visit import Visit, error_page, page

SLUG = "settings"
AREA: Area = "settings"
register(Section("Settings", SLUG, AREA))

PARAMS: dict[str, tuple[Param, str]] = {param.name: (param, column) for param, column in SETTING_PARAMS}
CLEARS: dict[str, Param] = {param.name: param for param in CLEAR_PARAMS}
# Short labels over the declarations' longer descriptions (shown as hints).
LABELS = {
    "enabled": "Application enabled",
    "ver": "Current version",
    "download": "Download link",
    "webhook": "Log forwarding URL",
    "sellerlogs": "Seller log",
    "logretention": "Keep client logs (days)",
    "tamperaction": "On a tamper report",
    "hwidcheck": "HWID lock",
    "forcehwid": "HWID required",
    "minhwid": "Shortest HWID",
    "maxhwids": "Devices per user",
    "hwidcooldown": "HWID reset cooldown (seconds)",
    "session": "Session lifetime (seconds)",
    "minusernamelength": "Shortest username",
    "caseinsensitiveusernames": "Usernames ignore case",
    "hashcheck": "Program hash check",
    "tokensystem": "Token validation",
    "clientratelimit": "Client requests per window",
    "clientratewindow": "Client rate window (seconds)",
    "authratelimit": "Login attempts per window",
    "authratewindow": "Login rate window (seconds)",
    "chathistory": "Chat messages kept per channel",
    "webdownload": "Web loader download (URL)",
    "customerpanel": "Customer panel",
}
HINTS = {"enabled": "Unticked, the client API refuses every call of the application."}
CHOICE_LABELS = {"log": "Log it", "ban": "Log it and ban the user"}


@dataclass(frozen=True, slots=True)
class Tab:
    slug: str
    label: str
    params: tuple[str, ...]  # updatesettings parameters, in the order shown
    clears: tuple[str, ...] = ()  # its clear-a-URL checkboxes (`clearwebhook`, ...)


TABS = (
    Tab(
        "general",
        "General",
        (
            "enabled",
            "ver",
            "download",
            "webhook",
            "sellerlogs",
            "logretention",
            "tamperaction",
            "customerpanel",
            "webdownload",
        ),
        ("cleardownload", "clearwebhook", "clearwebdownload"),
    ),
    Tab("devices", "Devices (HWID)", ("hwidcheck", "forcehwid", "minhwid", "maxhwids", "hwidcooldown")),
    Tab(
        "sign-in",
        "Sign-in and limits",
        (
            "session",
            "minusernamelength",
            "caseinsensitiveusernames",
            "hashcheck",
            "tokensystem",
            "clientratelimit",
            "clientratewindow",
            "authratelimit",
            "authratewindow",
            "chathistory",
        ),
    ),
)
MESSAGES = "messages"
TAB_BY_SLUG = {tab.slug: tab for tab in TABS}
ALL_TABS = [(tab.slug, tab.label) for tab in TABS] + [(MESSAGES, "Client messages")]
assert {name for tab in TABS for name in tab.params} == set(PARAMS), "every setting is on a tab"
# Error codes that are about one field rather than a parameter.
ERROR_FIELDS = {"usernames_differ_only_in_case": "caseinsensitiveusernames"}
# Example values a message's placeholders are previewed with.
SAMPLE_REASON = "chargeback"
REASON_MESSAGES = frozenset({"keybanned", "userbanned", "tokenbanned"})
SUCCESS_MESSAGES = frozenset({"loggedInMsg", "upgraded"})  # answered with success true
_SETMESSAGE = registry.get("setmessage")
assert _SETMESSAGE is not None
TEXT_PARAM = next(param for param in _SETMESSAGE.params if param.name == "text")


@dataclass(frozen=True, slots=True)
class Field:
    """One form field, made from a parameter's declaration."""

    name: str
    label: str
    hint: str
    widget: str  # checkbox | number | text | select
    value: Any
    attrs: dict[str, str]
    options: list[tuple[str, str]]


def _field(param: Param, current: Any, submitted: dict[str, str] | None) -> Field:
    label = LABELS.get(param.name, param.name)
    hint = param.doc[:1].upper() + param.doc[1:] + "."
    attrs: dict[str, str] = {"maxlength": str(param.max_length)}
    options: list[tuple[str, str]] = []
    value: Any = current
    if param.kind == "bool":
        widget = "checkbox"
        hint = HINTS.get(param.name, hint.replace(" (1/0 or true/false)", "").replace("1: ", "", 1))
        hint = hint[:1].upper() + hint[1:]
        if submitted is not None:
            value = param.name in submitted
    elif param.kind == "int":
        widget = "number"
        # The range is the declaration's; the browser is told it, the server checks it again.
        attrs = {"min": f"{param.minimum:g}", "max": f"{param.maximum:g}", "step": "1"}
        if submitted is not None:
            value = submitted.get(param.name, "")
    elif param.choices:
        widget = "select"
        options = [(choice, CHOICE_LABELS.get(choice, choice)) for choice in param.choices]
        if submitted is not None:
            value = submitted.get(param.name, "")
    else:
        widget = "text"
        if param.secret:
            # Never shown back: the field is for a new value only.
            value = submitted.get(param.name, "") if submitted is not None else ""
        elif submitted is not None:
            value = submitted.get(param.name, "")
    return Field(param.name, label, hint, widget, "" if value is None else value, attrs, options)


def _clear_field(name: str, submitted: dict[str, str] | None) -> Field:
    assert name in CLEARS
    label = {
        "cleardownload": "Remove the download link",
        "clearwebhook": "Remove the log forwarding URL",
        "clearwebdownload": "Remove the web loader download link",
    }[name]
    checked = submitted is not None and name in submitted
    return Field(name, label, "", "checkbox", checked, {}, [])


def _preview(name: str, text: str, minimum: int) -> str:
    """The client API's answer carrying this message, as a program receives it."""
    # Only the placeholders the client API fills for this message (others stay as typed).
    values = {"reason": SAMPLE_REASON} if name in REASON_MESSAGES else {}
    if name == "hwidtooshort":
        values["minimum"] = str(minimum)
    rendered = catalogue.render(name, {name: text}, **values)
    return json.dumps({"success": name in SUCCESS_MESSAGES, "message": rendered}, ensure_ascii=False)


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


async def settings_page(
    visit: Visit,
    shown: Shown | None = None,
    *,
    tab: str | None = None,
    submitted: dict[str, str] | None = None,
) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    tab = tab or str(visit.request.path_params.get("tab", "general"))
    if tab != MESSAGES and tab not in TAB_BY_SLUG:
        return error_page(visit, 404, "Not found", "There is no such settings tab.")
    current = await seller.run(visit, app, "getsettings", {})
    values: dict[str, Any] = current["settings"]
    fields: list[Field] = []
    messages: list[dict[str, Any]] = []
    if tab == MESSAGES:
        texts: dict[str, str] = current["messages"]
        for name, default in catalogue.DEFAULTS.items():
            text = submitted[name] if submitted is not None and name in submitted else texts[name]
            messages.append(
                {
                    "name": name,
                    "text": text,
                    "default": default,
                    "is_default": texts[name] == default,
                    "preview": _preview(name, text, int(values["min_hwid_length"])),
                    "success": name in SUCCESS_MESSAGES,
                }
            )
    else:
        chosen = TAB_BY_SLUG[tab]
        for name in chosen.params:
            param, column = PARAMS[name]
            setting = app_settings.BY_COLUMN[column]
            fields.append(_field(param, values[setting.name], submitted))
        fields += [_clear_field(name, submitted) for name in chosen.clears]
    return visit.render(
        "settings/page.html",
        status=status,
        title=f"Settings · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        path=app.path(SLUG),
        tabs=ALL_TABS,
        tab=tab,
        tab_label=dict(ALL_TABS)[tab],
        fields=fields,
        messages=messages,
        webhook_set=values["log_webhook"] == "set",
        download_set=bool(values["download_link"]),
        errors=errors,
        owner=visit.account.is_owner,
        max_message=catalogue.MAX_LENGTH,
    )


async def save_tab(visit: Visit) -> Response:
    """One tab's settings in one `updatesettings` call: a checkbox left unticked is sent as 0, an
    empty text field as not given (the URLs are removed with their own checkboxes)."""
    app = await _open(visit)
    slug = str(visit.request.path_params["tab"])
    chosen = TAB_BY_SLUG.get(slug)
    if chosen is None:
        return await settings_page(visit, Shown(app), tab=slug)
    form = visit.form
    params: dict[str, str] = {}
    submitted: dict[str, str] = {}
    for name in chosen.params:
        param, _column = PARAMS[name]
        if param.kind == "bool":
            params[name] = "1" if form.flag(name) else "0"
            if form.flag(name):
                submitted[name] = "1"
        else:
            params[name] = form.get(name)
            submitted[name] = form.get(name)
    for name in chosen.clears:
        if form.flag(name):
            params[name] = "1"
            submitted[name] = "1"
    try:
        await seller.run(visit, app, "updatesettings", params)
    except Refusal as refusal:
        fields = {name: name for name in (*chosen.params, *chosen.clears)} | ERROR_FIELDS
        errors = seller.field_error(refusal, fields)
        return await settings_page(
            visit, Shown(app, errors, seller.status_of(refusal)), tab=slug, submitted=submitted
        )
    visit.flash(f"{chosen.label} settings saved.")
    return visit.redirect(f"{app.path(SLUG)}/{slug}")


def _check_texts(changed: dict[str, str]) -> dict[str, str]:
    """Every changed text checked before any is saved (the declaration's limit, then the same
    check `setmessage` makes), so a refused text leaves all the others unsaved too."""
    errors: dict[str, str] = {}
    for name, text in changed.items():
        try:
            TEXT_PARAM.parse(text)
            app_settings.check_message_text(text)
        except Refusal as refusal:
            errors[name] = refusal.message
    return errors


async def save_messages(visit: Visit) -> Response:
    """Each message whose text changed runs `setmessage` (a text equal to the default, or empty,
    restores the default); "Preview" shows the answers without saving."""
    app = await _open(visit)
    form = visit.form
    submitted = {
        name: form.get(name)[: catalogue.MAX_LENGTH + 1] for name in catalogue.DEFAULTS if name in form
    }
    if form.get("do") == "preview":
        return await settings_page(visit, Shown(app), tab=MESSAGES, submitted=submitted)
    current: dict[str, str] = (await seller.run(visit, app, "getsettings", {}))["messages"]
    changed = {name: text for name, text in submitted.items() if text != current[name]}
    errors = _check_texts(changed)
    if errors:
        return await settings_page(visit, Shown(app, errors, 400), tab=MESSAGES, submitted=submitted)
    if not changed:
        visit.flash("No message changed.", "warning")
        return visit.redirect(f"{app.path(SLUG)}/{MESSAGES}")
    steps = await seller.Steps.of(visit, app)
    for name, text in changed.items():
        restore = text.strip() == "" or text == catalogue.DEFAULTS[name]
        try:
            await steps.run("setmessage", {"name": name, "text": "" if restore else text})
        except Refusal as refusal:
            return await settings_page(
                visit,
                Shown(app, {name: refusal.message}, seller.status_of(refusal)),
                tab=MESSAGES,
                submitted=submitted,
            )
    count = len(changed)
    visit.flash(f"{count} message{'' if count == 1 else 's'} saved. Programs get the new text at once.")
    return visit.redirect(f"{app.path(SLUG)}/{MESSAGES}")


BASE = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(BASE, page(settings_page), methods=["GET"]),
    Route(BASE + "/" + MESSAGES, page(save_messages), methods=["POST"]),
    Route(BASE + "/{tab}", page(settings_page), methods=["GET"]),
    Route(BASE + "/{tab}", page(save_tab), methods=["POST"]),
]
