"""Seller team: the application's resellers (balance per key duration, allowed levels) and
managers (permission areas), creating one (role, username, e-mail, a password or an invitation
link with which it chooses its own (`domain.invitations`); levels or areas),
a member's page to add to or take from a reseller's balance, change its levels or a manager's
areas (checkboxes), disable it, and delete it (confirmed). Every change runs the seller
operation of the same effect (`addAccount`, `setbalance`, `editreseller`, `editmanager`,
`deleteAccount`), so only the owner reaches it (the `team` area is never a manager's) and every
change is in the audit log."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import audit, errorcodes, invitations, permissions, team
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import MANAGER, MANAGER_AREAS, RESELLER, Area
from licensegate.operations.seller.team import AMOUNTS
from licensegate.web import seller
from licensegate.web.balances import BUCKET_LABELS, history_context
from licensegate.web.confirm import confirm_page, confirmed
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.pages.apps import record
from licensegate.web.pages.sellerkeys import AREA_HINTS
from licensegate.web.visit import Access, Visit, error_page, page

AREA: Area = "team"
SLUG = "team"
NEW_KEY = "team-seller-key"  # what a new member's redirect carries: its seller key, shown once
register(Section("Seller team", SLUG, AREA))

ROLES = ((RESELLER, "Reseller"), (MANAGER, "Manager"))
PASSWORD, INVITE = "password", "invite"
ACCESS = ((PASSWORD, "Typed below by you"), (INVITE, "Chosen by it through an invitation link"))
# setbalance's parameter (the form field) of each bucket.
AMOUNT_OF_BUCKET = {bucket: name for name, bucket in AMOUNTS.items()}
# Where a refusal is shown: parameter names and error codes -> form fields.
CREATE_FIELDS = {
    "role": "role",
    "invalid_role": "role",
    "user": "username",
    "username": "username",
    "account_exists": "username",
    "invalid_name": "username",
    "pass": "password",
    "email": "email",
    "invalid_email": "email",
    "keylevels": "keylevels",
    "invalid_levels": "keylevels",
    "perms": "areas",
    "invalid_permissions": "areas",
    "beyond_own_areas": "areas",
}
BALANCE_FIELDS = {name: name for name in AMOUNTS}
EDIT_FIELDS = {
    "keylevels": "keylevels",
    "invalid_levels": "keylevels",
    "perms": "areas",
    "invalid_permissions": "areas",
    "beyond_own_areas": "areas",
    "email": "email",
    "invalid_email": "email",
    "pass": "password",
}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


def _manager_areas() -> list[tuple[str, str]]:
    return [(name, AREA_HINTS[name]) for name in permissions.names(MANAGER_AREAS)]


def _levels(row: dict[str, Any]) -> list[str]:
    return list(permissions.parse_levels(row["key_levels"]))


async def listing(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    resellers, managers = [], []
    invited = await invitations.pending_in_app(visit.services.db, app.id, visit.now())
    for row in await team.members(visit.services.db, app.id):
        entry = {
            "username": row["username"],
            "email": row["email"],
            "disabled": bool(row["disabled"]),
            "invited_until": invited.get(row["account_id"]),
            "href": app.path(f"{SLUG}/{row['username']}"),
        }
        if row["role"] == RESELLER:
            resellers.append({**entry, "balance": team.balance(row), "levels": _levels(row)})
        else:
            areas = permissions.names(row["permissions"] & MANAGER_AREAS)
            managers.append({**entry, "areas": areas})
    form = visit.form
    posted = visit.request.method == "POST"
    return visit.render(
        "team/list.html",
        status=status,
        title=f"Seller team · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        resellers=resellers,
        managers=managers,
        buckets=BUCKET_LABELS,
        path=app.path(SLUG),
        roles=ROLES,
        access=ACCESS,
        areas=_manager_areas(),
        errors=errors,
        form={
            "role": form.get("role") or RESELLER,
            "access": INVITE if form.get("access") == INVITE else PASSWORD,
            "username": form.get("username"),
            "email": form.get("email"),
            "keylevels": form.get("keylevels"),
            "areas": set(form.all("areas")) if posted else set(),
        },
    )


async def create(visit: Visit) -> Response:
    """Create a reseller or a manager that signs in with the username and the password given, or
    (invited) with the password it chooses through the link shown once (and e-mailed)."""
    app = await _open(visit)
    form = visit.form
    role = form.get("role").strip().lower()
    invited = form.get("access") == INVITE
    params = {
        "role": role,
        "user": form.get("username").strip(),
        # Invited: a random password nobody is shown, until the link sets its own.
        "pass": invitations.unknown_password() if invited else form.get("password"),
    }
    if form.get("email").strip():
        params["email"] = form.get("email").strip()
    try:
        if role == MANAGER:
            areas = form.all("areas")
            if not areas:
                raise errorcodes.INVALID_FORM("Tick at least one area.", param="perms")
            params["perms"] = ",".join(areas)
        elif form.get("keylevels").strip():
            params["keylevels"] = form.get("keylevels").strip()
        body = await seller.run(visit, app, "addAccount", params)
    except Refusal as refusal:
        return await listing(visit, seller.refused(app, refusal, CREATE_FIELDS))
    # addAccount makes a seller key acting as the new account (for its scripts and bots): shown
    # once, as a new application's is, never kept. Password given: post/redirect/get to the
    # member's page, the key carried there sealed; invited: on the invitation page, itself shown once.
    if invited:
        row = await team.get_member(visit.services.db, app.id, body["username"])
        return await _invite(visit, app, dict(row), created=True, sellerkey=body["sellerkey"])
    visit.flash(f"The {body['role']} {body['username']} is created; it signs in with the password given.")
    visit.carry(NEW_KEY, {"username": body["username"], "sellerkey": body["sellerkey"]})
    return visit.redirect(app.path(f"{SLUG}/{body['username']}"))


async def _invite(
    visit: Visit, app: AppPage, row: dict[str, Any], *, created: bool = False, sellerkey: str = ""
) -> Response:
    """A new invitation link for the account (an earlier one stops working), e-mailed when the
    account has an address and the server can send, and shown this once."""
    services, name = visit.services, row["username"]
    token, expires_at = await invitations.issue(services.db, row["account_id"], visit.now())
    url = invitations.link(services.settings.public_url, token)
    emailed = bool(row["email"]) and services.mailer.configured
    if emailed:
        invitations.send(
            services.mailer, row["email"], url=url, username=name, role=row["role"], app_name=app.app["name"]
        )
    after = {"expires_at": expires_at, "emailed": emailed}
    await record(visit, app.id, "inviteAccount", f"account:{name}", after=after)
    return visit.render(
        "team/invited.html",
        title=f"Invitation link for {name} · Seller team · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        member=row,
        created=created,
        url=url,
        expires_at=expires_at,
        emailed=emailed,
        mail_on=services.mailer.configured,
        sellerkey=sellerkey,
        path=app.path(f"{SLUG}/{name}"),
    )


async def invite(visit: Visit) -> Response:
    app = await _open(visit)
    return await _invite(visit, app, await _member(visit, app))


async def _member(visit: Visit, app: AppPage) -> dict[str, Any]:
    row = await team.get_member(visit.services.db, app.id, visit.request.path_params["member"][:64])
    return dict(row)


async def member(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    row = await _member(visit, app)
    form = visit.form
    # What was typed is shown again in the form that was posted; the other form shows the account.
    posted = visit.request.url.path.rsplit("/", 1)[-1]
    edited = posted == "edit"
    held = permissions.names(row["permissions"] & MANAGER_AREAS)
    made_keys, made_users = await team.made_by(visit.services.db, app.id, row["account_id"])
    new_key = visit.carried(NEW_KEY) if visit.request.method == "GET" else None
    invitation = await invitations.pending(visit.services.db, row["account_id"], visit.now())
    return visit.render(
        "team/member.html",
        status=status,
        title=f"{row['username']} · Seller team · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        member=row,
        reseller=row["role"] == RESELLER,
        balance=team.balance(row),
        levels=", ".join(_levels(row)),
        buckets=[(bucket, label, AMOUNT_OF_BUCKET[bucket]) for bucket, label in BUCKET_LABELS.items()],
        areas=_manager_areas(),
        path=app.path(f"{SLUG}/{row['username']}"),
        back=app.path(SLUG),
        made_keys=made_keys,
        made_users=made_users,
        invitation=invitation,
        sellerkey=new_key["sellerkey"] if new_key and new_key.get("username") == row["username"] else "",
        **(
            await history_context(visit, row["account_id"], app.path(f"{SLUG}/{row['username']}"))
            if row["role"] == RESELLER
            else {}
        ),
        errors=errors,
        form={
            "amounts": {name: form.get(name) for name in AMOUNTS} if posted == "balance" else {},
            "keylevels": form.get("keylevels") if edited else ", ".join(_levels(row)),
            "areas": set(form.all("areas")) if edited else set(held),
            "email": form.get("email") if edited else (row["email"] or ""),
        },
    )


async def balance(visit: Visit) -> Response:
    """Add to (or, with negative amounts, take from) a reseller's buckets, all or none."""
    app = await _open(visit)
    row = await _member(visit, app)
    form = visit.form
    params = {name: form.get(name).strip() for name in AMOUNTS if form.get(name).strip()}
    try:
        if not params:
            raise errorcodes.INVALID_FORM("Give an amount for at least one duration.")
        body = await seller.run(visit, app, "setbalance", {"username": row["username"], **params})
    except Refusal as refusal:
        return await member(visit, seller.refused(app, refusal, BALANCE_FIELDS, default="balance"))
    held = ", ".join(f"{BUCKET_LABELS[b]} {n}" for b, n in body["balance"].items() if n)
    visit.flash(f"The balance of {row['username']} is now: {held or 'empty'}.")
    return visit.redirect(app.path(f"{SLUG}/{row['username']}"))


async def edit(visit: Visit) -> Response:
    """A reseller's allowed levels or a manager's areas, its e-mail, password and disabled flag."""
    app = await _open(visit)
    row = await _member(visit, app)
    form = visit.form
    params = {"username": row["username"], "disabled": "1" if form.get("disabled") == "1" else "0"}
    if form.get("email").strip():
        params["email"] = form.get("email").strip()
    if form.get("password"):
        params["pass"] = form.get("password")
    try:
        if row["role"] == RESELLER:
            params["keylevels"] = form.get("keylevels").strip() or "any"
            operation = "editreseller"
        else:
            areas = form.all("areas")
            if not areas:
                raise errorcodes.INVALID_FORM("Tick at least one area.", param="perms")
            params["perms"] = ",".join(areas)
            operation = "editmanager"
        await seller.run(visit, app, operation, params)
    except Refusal as refusal:
        return await member(visit, seller.refused(app, refusal, EDIT_FIELDS))
    visit.flash(f"The {row['role']} {row['username']} is changed.")
    return visit.redirect(app.path(f"{SLUG}/{row['username']}"))


async def delete(visit: Visit) -> Response:
    """Delete the account; with `purge` ticked, also the license keys it generated and the users
    that belong to it (else they stay, unlinked)."""
    app = await _open(visit)
    row = await _member(visit, app)
    name = row["username"]
    purge = visit.form.get("purge") == "1"
    if not confirmed(visit):
        made = "the license keys it generated and the users that belong to it are deleted too"
        return confirm_page(
            visit,
            title=f"Delete the {row['role']} {name}?",
            message="It can no longer sign in, and its seller keys stop working. This cannot be undone.",
            details=(f"With it, {made}.",) if purge else ("The keys and users it made stay.",),
            button=f"Delete {name}",
            back=app.path(f"{SLUG}/{name}"),
        )
    params = {"user": name, "purge": "1" if purge else "0"}
    try:
        body = await seller.run(visit, app, "deleteAccount", params)
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(app.path(f"{SLUG}/{name}"))
    done = f"The {row['role']} {name} is deleted"
    if purge:
        keys = team.plural(body["deletedkeys"], "license key")
        users = team.plural(body["deletedusers"], "user")
        done += f", with {keys} and {users} it made"
    visit.flash(done + ".")
    return visit.redirect(app.path(SLUG))


# --- the invited account's side: choosing its password (no sign-in) --------------------------


def _accept_form(
    visit: Visit, account: Any, token: str, *, errors: dict[str, str] | None = None, status: int = 200
) -> Response:
    return visit.render(
        "team/invitation.html",
        status=status,
        title="Choose your password",
        account=account,
        token=token,
        errors=errors or {},
    )


GONE = errorcodes.INVITATION_INVALID.message


async def invitation_page(visit: Visit) -> Response:
    """The link: who it is for, and the form (opening it changes nothing)."""
    token = visit.request.query_params.get("token", "")[: invitations.MAX_TOKEN]
    account = await invitations.check(visit.services.db, token, visit.now())
    if account is None:
        return error_page(visit, 400, "Link expired", GONE)
    return _accept_form(visit, account, token)


async def invitation_accept(visit: Visit) -> Response:
    services, form = visit.services, visit.form
    token = form.get("token")[: invitations.MAX_TOKEN]
    account = await invitations.check(services.db, token, visit.now())
    if account is None:
        return error_page(visit, 400, "Link expired", GONE)
    if form.get("password") != form.get("confirm"):
        return _accept_form(
            visit, account, token, errors={"confirm": "The two passwords differ."}, status=400
        )
    try:
        username = await invitations.accept(
            services.db, services.passwords, token, form.get("password"), visit.now()
        )
    except Refusal as refusal:
        if refusal.error == errorcodes.INVITATION_INVALID.code:
            return error_page(visit, 400, "Link expired", GONE)
        return _accept_form(visit, account, token, errors={"password": refusal.message}, status=400)
    await audit.append(
        services.db,
        audit.Entry(
            app_id=account["app_id"],
            account_id=account["account_id"],
            actor=f"{username} (invitation)",
            action="acceptInvitation",
            target=f"account:{username}",
            before=None,
            after={"password": "chosen"},
            ip=visit.ip,
            created_at=visit.now(),
        ),
    )
    visit.flash(f"Your password is set, {username}: sign in with it.")
    return visit.redirect("/dashboard/signin")


PATH = "/apps/{app_id:int}/" + SLUG
MEMBER = PATH + "/{member}"
ROUTES = [
    Route(PATH, page(listing), methods=["GET"]),
    Route(PATH, page(create), methods=["POST"]),
    Route(MEMBER, page(member), methods=["GET"]),
    Route(MEMBER + "/balance", page(balance), methods=["POST"]),
    Route(MEMBER + "/edit", page(edit), methods=["POST"]),
    Route(MEMBER + "/delete", page(delete), methods=["POST"]),
    Route(MEMBER + "/invite", page(invite), methods=["POST"]),
    Route("/invitation", page(invitation_page, Access.PUBLIC), methods=["GET"]),
    Route("/invitation", page(invitation_accept, Access.PUBLIC), methods=["POST"]),
]
