"""Signing in (password, then the second factor), signing out, the first-run setup link and,
when it is switched on, self-service sign-up."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import accounts, passkeys, secondfactor, setuplinks, signin
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.web.visit import HOME, SECOND_FACTOR_PATH, Access, Visit, page
from licensegate.web.webauthn import relying_party


def safe_next(target: str) -> str:
    """Where to go after signing in: a dashboard path of ours, never another site."""
    if target.startswith("/dashboard/") and not target.startswith("//") and "\\" not in target:
        return target[:2048]
    return HOME


def throttle(visit: Visit) -> signin.Throttle:
    settings = visit.services.settings
    return signin.Throttle(
        settings.dashboard_signin_limit,
        settings.dashboard_signin_address_limit,
        settings.dashboard_signin_window,
    )


def origin(visit: Visit) -> signin.Origin:
    return signin.Origin(visit.ip, visit.user_agent, visit.now())


async def signin_page(visit: Visit) -> Response:
    if visit.session is not None and not visit.session.pending:
        return visit.redirect(safe_next(visit.request.query_params.get("next", "")))
    return _signin_form(visit, next_=visit.request.query_params.get("next", ""))


def _signin_form(
    visit: Visit, *, next_: str, username: str = "", error: str = "", status: int = 200
) -> Response:
    return visit.render(
        "signin.html",
        status=status,
        title="Sign in",
        next=safe_next(next_) if next_ else "",
        username=username,
        error=error,
        signup=visit.services.settings.dashboard_signup == "on",
    )


async def signin_post(visit: Visit) -> Response:
    services, form = visit.services, visit.form
    username, next_ = form.get("username")[:64], form.get("next")
    try:
        account = await signin.check_password(
            services.db,
            services.passwords,
            services.limiter,
            throttle(visit),
            username=username,
            password=form.get("password"),
            origin=origin(visit),
        )
    except RateLimited as refusal:
        response = _signin_form(visit, next_=next_, username=username, error=refusal.message, status=429)
        response.headers["Retry-After"] = str(refusal.retry_after)
        return response
    except Refusal as refusal:
        return _signin_form(visit, next_=next_, username=username, error=refusal.message, status=401)
    if account.second_factor:
        await visit.start_session(account, pending=True)
        target = f"{SECOND_FACTOR_PATH}?next={next_}" if next_ else SECOND_FACTOR_PATH
        return visit.redirect(target)
    await visit.start_session(account, pending=False)
    await signin.signed_in(services.db, account, origin(visit))
    return visit.redirect(safe_next(next_))


async def second_factor_page(visit: Visit) -> Response:
    return _second_factor_form(visit, next_=visit.request.query_params.get("next", ""))


def _second_factor_form(visit: Visit, *, next_: str, error: str = "", status: int = 200) -> Response:
    account = visit.account
    return visit.render(
        "second_factor.html",
        status=status,
        title="Second step",
        username=account.username,
        passkeys=account.passkeys > 0,
        next=safe_next(next_) if next_ else "",
        error=error,
    )


async def second_factor_post(visit: Visit) -> Response:
    services, form, account = visit.services, visit.form, visit.account
    session = visit.session
    assert session is not None
    next_ = form.get("next")

    async def verify() -> bool:
        if form.get("credential"):
            rp = relying_party(visit)
            return await passkeys.authenticate(
                services.db, rp, account, session.id, form.get("credential"), visit.now()
            )
        return await secondfactor.check_code(
            services.db, services.secrets, account.id, form.get("code")[:64], visit.now()
        )

    try:
        ok = await signin.check_second_step(
            services.db, services.limiter, throttle(visit), account, verify, origin(visit)
        )
    except RateLimited as refusal:
        return _second_factor_form(visit, next_=next_, error=refusal.message, status=429)
    except Refusal as refusal:
        return _second_factor_form(visit, next_=next_, error=refusal.message, status=400)
    if not ok:
        return _second_factor_form(visit, next_=next_, error=signin.WRONG_CODE, status=401)
    used_recovery = bool(form.get("code")) and not form.get("code").strip().isdigit()
    await visit.start_session(account, pending=False)
    await signin.signed_in(services.db, account, origin(visit))
    if used_recovery:
        left = await secondfactor.codes_left(services.db, account.id)
        visit.flash(
            f"You signed in with a recovery code; {left} are left. Make new ones on your account page.",
            "warning",
        )
    return visit.redirect(safe_next(next_))


async def passkey_options(visit: Visit) -> Response:
    """The challenge for a security-key sign-in (fetched by app.js, with the CSRF header)."""
    session = visit.session
    assert session is not None
    options = await passkeys.authentication_options(
        visit.services.db, relying_party(visit), visit.account, session.id, visit.now()
    )
    return visit.finish(Response(options, media_type="application/json"))


async def signout(visit: Visit) -> Response:
    await visit.end_session()
    visit.flash("You are signed out.")
    return visit.redirect("/dashboard/signin")


# --- first run and sign-up ---------------------------------------------------------------------


def _setup_form(
    visit: Visit, *, token: str, error: str = "", status: int = 200, signup: bool = False
) -> Response:
    form = visit.form
    return visit.render(
        "setup.html",
        status=status,
        title="Create an account" if signup else "Set up licensegate",
        heading="Create an account" if signup else "Create the owner account",
        intro=(
            "An owner account manages its own applications, their keys and users."
            if signup
            else "Welcome. This account owns the applications you create; you can add resellers "
            "and managers later."
        ),
        action="/dashboard/signup" if signup else setuplinks.PATH,
        button="Create account",
        token=token,
        username=form.get("username")[:64],
        email=form.get("email")[:254],
        error=error,
    )


async def setup_page(visit: Visit) -> Response:
    token = visit.request.query_params.get("token", "")[:128]
    if not await setuplinks.is_live(visit.services.db, token, visit.now()):
        return visit.render("error.html", status=400, title="Link expired", message=setuplinks.GONE)
    return _setup_form(visit, token=token)


async def _create_owner(visit: Visit, *, token: str | None) -> Response:
    services, form = visit.services, visit.form
    if form.get("password") != form.get("confirm"):
        return _setup_form(
            visit, token=token or "", error="The two passwords differ.", status=400, signup=token is None
        )
    try:
        account = await accounts.create_owner(
            services.db,
            services.passwords,
            username=form.text("username", 64),
            password=form.get("password"),
            email=form.text("email", 254) or None,
            now=visit.now(),
            guard=setuplinks.spend(token, visit.now()) if token is not None else None,
            claim=token is not None,
        )
    except Refusal as refusal:
        status = 409 if refusal.kind == "conflict" else 403 if refusal.kind == "forbidden" else 400
        return _setup_form(
            visit, token=token or "", error=refusal.message, status=status, signup=token is None
        )
    await visit.start_session(account, pending=False)
    await signin.signed_in(services.db, account, origin(visit))
    visit.flash(f"Welcome, {account.username}. Next: turn on two-step sign-in on your account page.")
    return visit.redirect(HOME)


async def setup_post(visit: Visit) -> Response:
    token = visit.form.get("token")[:128]
    if not await setuplinks.is_live(visit.services.db, token, visit.now()):
        return visit.render("error.html", status=400, title="Link expired", message=setuplinks.GONE)
    return await _create_owner(visit, token=token)


def _signup_on(visit: Visit) -> bool:
    return visit.services.settings.dashboard_signup == "on"


async def signup_page(visit: Visit) -> Response:
    if not _signup_on(visit):
        return visit.render(
            "error.html", status=404, title="Not found", message="Sign-up is not open on this service."
        )
    return _setup_form(visit, token="", signup=True)


async def signup_post(visit: Visit) -> Response:
    if not _signup_on(visit):
        return visit.render(
            "error.html", status=404, title="Not found", message="Sign-up is not open on this service."
        )
    try:  # sign-ups count against the address like sign-in attempts
        await throttle(visit).count(visit.services.limiter, "signup", visit.ip)
    except RateLimited as refusal:
        return _setup_form(visit, token="", error=refusal.message, status=429, signup=True)
    return await _create_owner(visit, token=None)


ROUTES = [
    Route("/signin", page(signin_page, Access.PUBLIC), methods=["GET"]),
    Route("/signin", page(signin_post, Access.PUBLIC), methods=["POST"]),
    Route("/signin/second-factor", page(second_factor_page, Access.PENDING), methods=["GET"]),
    Route("/signin/second-factor", page(second_factor_post, Access.PENDING), methods=["POST"]),
    Route("/signin/passkey-options", page(passkey_options, Access.PENDING), methods=["POST"]),
    Route("/signout", page(signout, Access.PUBLIC), methods=["POST"]),
    Route("/setup", page(setup_page, Access.PUBLIC), methods=["GET"]),
    Route("/setup", page(setup_post, Access.PUBLIC), methods=["POST"]),
    Route("/signup", page(signup_page, Access.PUBLIC), methods=["GET"]),
    Route("/signup", page(signup_post, Access.PUBLIC), methods=["POST"]),
]
