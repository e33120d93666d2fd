"""The signed-in person's own account: two-step sign-in (authenticator app, security keys,
recovery codes), password, and the sessions it is signed in with."""

from __future__ import annotations

import io

import segno
from markupsafe import Markup
from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import (
    accounts,
    emailchange,
    errorcodes,
    passkeys,
    secondfactor,
    signin,
    totp,
    websessions,
)
from licensegate.domain.errors import Invalid, Refusal
from licensegate.web.balances import before_of
from licensegate.web.confirm import confirm_page, confirmed
from licensegate.web.navigation import account_nav
from licensegate.web.pages.signin import throttle
from licensegate.web.visit import Access, Visit, error_page, page
from licensegate.web.webauthn import passkeys_possible, relying_party

ACCOUNT = "/dashboard/account"


async def account_page(
    visit: Visit,
    *,
    error: str = "",
    errors: dict[str, str] | None = None,
    rename_error: tuple[int, str] | None = None,
    status: int = 200,
) -> Response:
    services, account = visit.services, visit.account
    session = visit.session
    assert session is not None
    keys = await passkeys.list_for(services.db, account.id)
    before = before_of(visit)
    attempts, older = await signin.history(services.db, account.id, before=before)
    if error:
        visit.flash(error, "error")
    return visit.render(
        "account.html",
        status=status,
        title="Your account",
        nav=await account_nav(visit),
        keys=keys,
        keys_options=[(str(key["id"]), key["name"]) for key in keys],
        codes_left=await secondfactor.codes_left(services.db, account.id),
        sessions=await websessions.list_for(services.db, account.id, visit.now()),
        current_session=session.id,
        passkey_problem=passkeys_possible(visit),
        errors=errors or {},
        rename_error=rename_error,
        email_form={"new_email": visit.form.get("new_email")[:254] if errors else ""},
        email_pending=await emailchange.pending(services.db, account.id, visit.now()),
        email_possible=services.mailer.configured,
        attempts=attempts,
        results=signin.RESULTS,
        attempts_older=f"{ACCOUNT}?before={older}#h-signins" if older is not None else "",
        attempts_newest=f"{ACCOUNT}#h-signins" if before is not None else "",
    )


FIELDS = ("password", "code")  # the form fields of the password and the code


async def _check_password_and_code(visit: Visit, fields: tuple[str, str] = FIELDS) -> None:
    """Sensitive changes to sign-in ask for the password again, and a second-factor code when the
    account has one (throttled like sign-in)."""
    services, account, form = visit.services, visit.account, visit.form
    password_field, code_field = fields

    async def check() -> None:
        await accounts.confirm_password(services.db, services.passwords, account.id, form.get(password_field))
        if account.second_factor and not await secondfactor.check_code(
            services.db, services.secrets, account.id, form.get(code_field)[:64], visit.now()
        ):
            raise errorcodes.WRONG_CODE()

    await signin.confirm(services.limiter, throttle(visit), account, visit.ip, check)


# --- authenticator app ---------------------------------------------------------------------------


def _qr_svg(uri: str) -> Markup:
    out = io.BytesIO()
    segno.make(uri, error="m").save(
        out,
        kind="svg",
        scale=5,
        border=4,
        xmldecl=False,
        svgns=True,
        title="QR code for your authenticator app",
        dark="#000",
        light="#fff",
        svgclass="qr-code",
    )
    return Markup(out.getvalue().decode())  # noqa: S704 - segno's own SVG; the URI is only encoded as modules


def _grouped(secret: str) -> str:
    return " ".join(secret[i : i + 4] for i in range(0, len(secret), 4))


async def totp_start(visit: Visit) -> Response:
    account = visit.account
    if account.has_totp:
        return visit.redirect(ACCOUNT)
    await secondfactor.begin_totp(
        visit.services.db, visit.services.secrets, account.id, account.username, visit.now()
    )
    return visit.redirect(f"{ACCOUNT}/totp")


async def totp_page(visit: Visit, *, error: str = "", status: int = 200) -> Response:
    services, account = visit.services, visit.account
    secret = await secondfactor.pending_totp(services.db, services.secrets, account.id, visit.now())
    if secret is None or account.has_totp:
        return visit.redirect(ACCOUNT)
    uri = totp.provisioning_uri(secret, account.username, secondfactor.ISSUER)
    return visit.render(
        "totp.html",
        status=status,
        title="Set up an authenticator app",
        qr_svg=_qr_svg(uri),
        secret_grouped=_grouped(secret),
        error=error,
    )


async def totp_confirm(visit: Visit) -> Response:
    services, account = visit.services, visit.account
    try:
        codes = await signin.confirm(
            services.limiter,
            throttle(visit),
            account,
            visit.ip,
            lambda: secondfactor.confirm_totp(
                services.db, services.secrets, account.id, visit.form.get("code")[:16], visit.now()
            ),
        )
    except Invalid as refusal:
        return await totp_page(visit, error=refusal.message, status=400)
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(ACCOUNT)
    if codes:
        return _show_codes(
            visit, codes, "Two-step sign-in is on. If you lose your phone, these codes let you in."
        )
    visit.flash("The authenticator app is on.")
    return visit.redirect(ACCOUNT)


def _show_codes(visit: Visit, codes: list[str], intro: str) -> Response:
    return visit.render("recovery_codes.html", title="Your recovery codes", codes=codes, intro=intro)


async def totp_disable(visit: Visit) -> Response:
    services, account = visit.services, visit.account
    try:
        await _check_password_and_code(visit)
    except Refusal as refusal:
        return await account_page(visit, error=refusal.message, status=400)
    await secondfactor.disable_totp(services.db, account.id)
    if account.passkeys == 0:
        await secondfactor.forget_recovery_codes(services.db, account.id)
    visit.flash("The authenticator app is off." + ("" if account.passkeys else " Two-step sign-in is off."))
    return visit.redirect(ACCOUNT)


async def recovery_codes(visit: Visit) -> Response:
    services, account = visit.services, visit.account
    try:
        await _check_password_and_code(visit)
    except Refusal as refusal:
        return await account_page(visit, error=refusal.message, status=400)
    codes = await secondfactor.new_recovery_codes(services.db, account.id, visit.now())
    return _show_codes(visit, codes, "Your new recovery codes; the old ones no longer work.")


# --- security keys ---------------------------------------------------------------------------------


async def passkey_options(visit: Visit) -> Response:
    session = visit.session
    assert session is not None
    options = await passkeys.registration_options(
        visit.services.db, relying_party(visit), visit.account, session.id, visit.now()
    )
    return visit.finish(Response(options, media_type="application/json"))


async def passkey_add(visit: Visit) -> Response:
    services, account, form = visit.services, visit.account, visit.form
    session = visit.session
    assert session is not None
    try:
        await passkeys.register(
            services.db,
            relying_party(visit),
            account,
            session.id,
            form.get("credential"),
            form.text("name", 64),
            visit.now(),
        )
    except Refusal as refusal:
        return await account_page(visit, error=refusal.message, status=400)
    codes = await secondfactor.ensure_recovery_codes(services.db, account.id, visit.now())
    if codes:
        return _show_codes(visit, codes, "Your security key is added and two-step sign-in is on.")
    visit.flash("The security key is added.")
    return visit.redirect(ACCOUNT)


async def passkey_rename(visit: Visit) -> Response:
    """Name a security key as its owner knows it ("YubiKey on the keyring", "work laptop")."""
    try:
        passkey_id = int(visit.form.get("passkey") or "0")
    except ValueError:
        passkey_id = 0
    name = visit.form.get("name")[:200].strip()
    try:
        await passkeys.rename(visit.services.db, visit.account.id, passkey_id, name)
    except Refusal as refusal:
        return await account_page(visit, rename_error=(passkey_id, refusal.message), status=400)
    visit.flash(f"The security key is now called {name}.")
    return visit.redirect(ACCOUNT)


async def passkey_remove(visit: Visit) -> Response:
    services, account = visit.services, visit.account
    try:
        await _check_password_and_code(visit)
        passkey_id = int(visit.form.get("passkey") or "0")
        await passkeys.remove(services.db, account.id, passkey_id)
    except ValueError:
        return await account_page(visit, error="Choose a key to remove.", status=400)
    except Refusal as refusal:
        return await account_page(visit, error=refusal.message, status=400)
    if account.passkeys == 1 and not account.has_totp:
        await secondfactor.forget_recovery_codes(services.db, account.id)
        visit.flash("The security key is removed. Two-step sign-in is off.")
    else:
        visit.flash("The security key is removed.")
    return visit.redirect(ACCOUNT)


# --- e-mail address ---------------------------------------------------------------------------------

# Where a refusal of the e-mail form is shown.
EMAIL_FIELDS = {
    "wrong_password": "email_password",
    "wrong_code": "email_code",
    "invalid_email": "new_email",
    "email_not_configured": "new_email",
}


async def change_email(visit: Visit) -> Response:
    """Send a confirmation link to the new address (after the password, and the second step)."""
    services, account = visit.services, visit.account
    new_email = visit.form.get("new_email")[:512]
    try:
        await _check_password_and_code(visit, ("email_password", "email_code"))
        await emailchange.request(
            services.db,
            services.mailer,
            account,
            new_email=new_email,
            public_url=services.settings.public_url,
            now=visit.now(),
        )
    except Refusal as refusal:
        limited = refusal.kind == "rate_limited"
        field = "email_password" if limited else EMAIL_FIELDS.get(refusal.error, "new_email")
        return await account_page(visit, errors={field: refusal.message}, status=429 if limited else 400)
    visit.flash(
        f"A link is on its way to {new_email.strip()}. Open it within an hour to make it your address; "
        "until then your address stays as it is."
    )
    return visit.redirect(ACCOUNT + "#h-email")


async def cancel_email(visit: Visit) -> Response:
    if await emailchange.cancel(visit.services.db, visit.account.id):
        visit.flash("The change of address is cancelled; the link no longer works.")
    return visit.redirect(ACCOUNT + "#h-email")


GONE = "This link has expired or was used already. Ask for a new one on your account page."


async def email_confirm_page(visit: Visit) -> Response:
    """The link from the e-mail: a button to confirm (a GET changes nothing, so a mail scanner
    that opens links cannot spend it)."""
    token = visit.request.query_params.get("token", "")[:128]
    found = await emailchange.check(visit.services.db, token, visit.now())
    if found is None:
        return error_page(visit, 400, "Link expired", GONE)
    username, new_email = found
    return visit.render(
        "email_confirm.html",
        title="Confirm your e-mail address",
        token=token,
        username=username,
        email=new_email,
    )


async def email_confirm(visit: Visit) -> Response:
    services = visit.services
    done = await emailchange.confirm(services.db, services.mailer, visit.form.get("token")[:128], visit.now())
    if done is None:
        return error_page(visit, 400, "Link expired", GONE)
    username, new_email = done
    return visit.render(
        "error.html",
        title="E-mail address confirmed",
        message=f"{new_email} is now the address of the account {username}.",
    )


# --- password and sessions --------------------------------------------------------------------------


async def change_password(visit: Visit) -> Response:
    services, account, form = visit.services, visit.account, visit.form
    session = visit.session
    assert session is not None
    if form.get("new") != form.get("confirm"):
        return await account_page(visit, error="The two new passwords differ.", status=400)
    try:
        ended = await signin.confirm(
            services.limiter,
            throttle(visit),
            account,
            visit.ip,
            lambda: accounts.change_password(
                services.db,
                services.passwords,
                account,
                current=form.get("current"),
                new=form.get("new"),
                keep_session=session.id,
            ),
        )
    except Refusal as refusal:
        return await account_page(visit, error=refusal.message, status=400)
    visit.flash(
        "Your password is changed"
        + (f"; {ended} other session{'s' if ended != 1 else ''} signed out." if ended else ".")
    )
    return visit.redirect(ACCOUNT)


async def end_session(visit: Visit) -> Response:
    try:
        session_id = int(visit.form.get("session") or "0")
    except ValueError:
        session_id = 0
    if await websessions.end_one(visit.services.db, visit.account.id, session_id):
        visit.flash("That session is signed out.")
    else:
        visit.flash("That session had ended already.", "warning")
    return visit.redirect(ACCOUNT)


async def end_other_sessions(visit: Visit) -> Response:
    if not confirmed(visit):
        return confirm_page(
            visit,
            title="Sign out everywhere else",
            message="Every other browser signed in to your account will be signed out.",
            button="Sign out the others",
            back=ACCOUNT,
        )
    session = visit.session
    assert session is not None
    ended = await websessions.end_others(visit.services.db, visit.account.id, session.id)
    visit.flash(f"{ended} other session{'s' if ended != 1 else ''} signed out.")
    return visit.redirect(ACCOUNT)


ROUTES = [
    Route("/account", page(account_page), methods=["GET"]),
    Route("/account/totp/start", page(totp_start), methods=["POST"]),
    Route("/account/totp", page(totp_page), methods=["GET"]),
    Route("/account/totp/confirm", page(totp_confirm), methods=["POST"]),
    Route("/account/totp/disable", page(totp_disable), methods=["POST"]),
    Route("/account/recovery-codes", page(recovery_codes), methods=["POST"]),
    Route("/account/passkeys/options", page(passkey_options), methods=["POST"]),
    Route("/account/passkeys", page(passkey_add), methods=["POST"]),
    Route("/account/passkeys/rename", page(passkey_rename), methods=["POST"]),
    Route("/account/passkeys/remove", page(passkey_remove), methods=["POST"]),
    Route("/account/password", page(change_password), methods=["POST"]),
    Route("/account/email", page(change_email), methods=["POST"]),
    Route("/account/email/cancel", page(cancel_email), methods=["POST"]),
    Route("/account/email/confirm", page(email_confirm_page, Access.PUBLIC), methods=["GET"]),
    Route("/account/email/confirm", page(email_confirm, Access.PUBLIC), methods=["POST"]),
    Route("/account/sessions/end", page(end_session), methods=["POST"]),
    Route("/account/sessions/end-others", page(end_other_sessions), methods=["POST"]),
]
