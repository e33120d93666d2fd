"""User variables (every user's, searched by user, name or the start of the value, keyset paged;
set for one user or for all, read-only or not; delete one or a name for everyone) and global
variables (create, edit, delete, the authenticated-only flag). Every change runs the seller
operation of the same effect (`setvar`, `deluservar`, `massUserVarDelete`, `addvar`, `editvar`,
`delvar`)."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import errorcodes, globalvars, uservars
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import Column, Filter, ListSpec
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.templating import counted
from licensegate.web.visit import Visit, page

AREA: Area = "variables"
USER_SLUG = "user-variables"
GLOBAL_SLUG = "global-variables"
register(Section("User variables", USER_SLUG, AREA))
register(Section("Global variables", GLOBAL_SLUG, AREA))

USER_SPEC = ListSpec(
    columns=(
        Column("user", "User"),
        Column("name", "Variable"),
        Column("value", "Value"),
        Column("read_only", "Read-only"),
        Column("updated", "Changed"),
    ),
    filters=(
        Filter("user", "User", "search", placeholder="A whole username", max_length=128),
        Filter("name", "Variable", placeholder="A whole name", max_length=64),
        Filter("value", "Value starts with", max_length=500),
    ),
    default_sort="created",
    empty_text="No user variables yet. Set one below.",
)
# Where a refusal is shown: parameter names and error codes -> form fields.
USER_FIELDS = {
    "user": "user",
    "user_not_found": "user",
    "no_users": "user",
    "var": "var",
    "name": "var",
    "data": "data",
}
GLOBAL_FIELDS = {
    "name": "name",
    "varid": "name",
    "variable_exists": "name",
    "data": "data",
}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


# --- user variables ----------------------------------------------------------------------------


async def user_list(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    view = USER_SPEC.read(visit.request.query_params)
    values = view.values
    found = await uservars.browse(
        visit.services.db,
        app.id,
        username=values.get("user"),
        name=values.get("name"),
        value_prefix=values.get("value"),
        request=view.request,
    )
    for row in found.rows:
        row["label"] = f"{row['name']} of {row['username']}"
    form = visit.form
    posted = visit.request.method == "POST"
    return visit.render(
        "variables/users.html",
        status=status,
        title=f"User variables · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(USER_SLUG), found, None),
        path=app.path(USER_SLUG),
        errors=errors,
        form={
            "user": form.get("user"),
            "everyone": form.flag("everyone"),
            "var": form.get("var"),
            "data": form.get("data"),
            "read_only": form.flag("read_only"),
            "name": form.get("name") if posted else "",
        },
    )


async def user_set(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    everyone = form.flag("everyone")
    user = form.get("user").strip()
    try:
        if not everyone and user == uservars.ALL_USERS:
            raise errorcodes.INVALID_FORM(
                "To set it for every user, tick “Every user”; a username of 'all' means every user.",
                param="user",
            )
        if not everyone and not user:
            raise errorcodes.MISSING_PARAMETER(name="user", param="user")
        body = await seller.run(
            visit,
            app,
            "setvar",
            {
                "user": uservars.ALL_USERS if everyone else user,
                "var": form.get("var"),
                "data": form.get("data"),
                "readOnly": "1" if form.flag("read_only") else "0",
            },
        )
    except Refusal as refusal:
        return await user_list(visit, seller.refused(app, refusal, USER_FIELDS))
    name = form.get("var").strip()
    if everyone:
        written = int(body.get("updated", 0))
        visit.flash(f"{name} is set for every user ({written:,} user{'' if written == 1 else 's'}).")
    else:
        visit.flash(f"{name} is set for {user}.")
    return visit.redirect(app.path(USER_SLUG))


async def user_delete(visit: Visit) -> Response:
    app = await _open(visit)
    user, name = visit.form.get("user"), visit.form.get("var")
    ask = Question(
        title=f"Delete {name[:64]} of {user[:128]}?",
        message=f"The user {user[:128]} loses the variable {name[:64]}.",
        button="Delete the variable",
    )
    done = f"The variable {name} of {user} is deleted."
    return await seller.act(
        visit, app, "deluservar", {"user": user, "var": name}, done=done, back=app.path(USER_SLUG), ask=ask
    )


async def user_delete_name(visit: Visit) -> Response:
    """Delete a variable name from every user; the confirmation says how many users have it."""
    app = await _open(visit)
    name = visit.form.get("name").strip()
    if not name:
        return await user_list(visit, Shown(app, {"name": "Fill this in."}, 400))
    if len(name) > uservars.MAX_NAME:
        message = f"A variable name has at most {uservars.MAX_NAME} characters."
        return await user_list(visit, Shown(app, {"name": message}, 400))
    holders = await uservars.count_named(visit.services.db, app.id, name)
    ask = Question(
        title=f"Delete {name} from every user?",
        message=f"{holders:,} user{'' if holders == 1 else 's'} have a variable named {name}; "
        "it is deleted from all of them. This cannot be undone.",
        button=f"Delete {name} from {holders:,} user{'' if holders == 1 else 's'}",
    )
    return await seller.act(
        visit,
        app,
        "massUserVarDelete",
        {"name": name},
        done=lambda body: f"{name} is deleted from {counted(int(body.get('deleted', 0)), 'user')}.",
        back=app.path(USER_SLUG),
        ask=ask,
    )


# --- global variables --------------------------------------------------------------------------


async def global_list(visit: Visit, shown: Shown | None = None, *, editing: str | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    rows = await globalvars.list_with_flags(visit.services.db, app.id)
    form = visit.form
    posted = visit.request.method == "POST"
    return visit.render(
        "variables/globals.html",
        status=status,
        title=f"Global variables · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        rows=rows,
        path=app.path(GLOBAL_SLUG),
        errors=errors,
        editing=editing,
        form={
            "name": form.get("name"),
            "data": form.get("data"),
            "authed": form.flag("authed") if posted else True,
        },
    )


async def global_create(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    try:
        await seller.run(
            visit,
            app,
            "addvar",
            {
                "name": form.get("name"),
                "data": form.get("data"),
                "authed": "1" if form.flag("authed") else "0",
            },
        )
    except Refusal as refusal:
        return await global_list(visit, seller.refused(app, refusal, GLOBAL_FIELDS))
    visit.flash(f"The global variable {form.get('name').strip()} is created.")
    return visit.redirect(app.path(GLOBAL_SLUG))


async def global_edit(visit: Visit) -> Response:
    """Save one variable's value and flag (each row's form posts its own name)."""
    app = await _open(visit)
    form = visit.form
    name = form.get("name").strip()
    try:
        await seller.run(
            visit,
            app,
            "editvar",
            {"varid": name, "data": form.get("data"), "authed": "1" if form.flag("authed") else "0"},
        )
    except Refusal as refusal:
        errors = {f"edit-{name}": refusal.message}
        return await global_list(visit, Shown(app, errors, seller.status_of(refusal)), editing=name)
    visit.flash(f"The global variable {name} is saved.")
    return visit.redirect(app.path(GLOBAL_SLUG))


async def global_delete(visit: Visit) -> Response:
    app = await _open(visit)
    name = visit.form.get("name")
    ask = Question(
        title=f"Delete the global variable {name[:64]}?",
        message="Programs that read it get “not found” from then on. This cannot be undone.",
        button="Delete the variable",
    )
    done = f"The global variable {name} is deleted."
    return await seller.act(
        visit, app, "delvar", {"name": name}, done=done, back=app.path(GLOBAL_SLUG), ask=ask
    )


USERS = "/apps/{app_id:int}/" + USER_SLUG
GLOBALS = "/apps/{app_id:int}/" + GLOBAL_SLUG
ROUTES = [
    Route(USERS, page(user_list), methods=["GET"]),
    Route(USERS, page(user_set), methods=["POST"]),
    Route(USERS + "/delete", page(user_delete), methods=["POST"]),
    Route(USERS + "/delete-name", page(user_delete_name), methods=["POST"]),
    Route(GLOBALS, page(global_list), methods=["GET"]),
    Route(GLOBALS, page(global_create), methods=["POST"]),
    Route(GLOBALS + "/edit", page(global_edit), methods=["POST"]),
    Route(GLOBALS + "/delete", page(global_delete), methods=["POST"]),
]
