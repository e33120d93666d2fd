"""`/api/1.0/` … `/api/1.3/`: read the parameters (where the dialect says), find the operation by
`type`, identify the application (and the session where one is needed), rate-limit, validate, run
the handler and write the client envelope (`success`, `code`, `message`, `nonce`, `ownerid` on
every answer), shaped, encoded and signed as the dialect says (`dialects`, `answers`)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope

from licensegate.addresses import client_ip, counted_as
from licensegate.api.client import legacy
from licensegate.api.client.answers import TEXT, Answering, read_clientnonce
from licensegate.api.client.legacy import Cipher10
from licensegate.api.envelope import (
    CLIENT_1_0,
    DIALECTS,
    LEGACY_1_0,
    ClientDialect,
    client_failure,
    client_success,
    refusal_headers,
    refusal_of,
    unexpected_fault,
)
from licensegate.api.request import (
    HTTP_MAX_URI_BYTES,
    read_form_body,
    read_form_fields,
    read_heads,
    read_query,
    read_query_of,
    transport_status,
)
from licensegate.domain import apps, errorcodes, namedlimits, recheck, sessions
from licensegate.domain.apps import ClientApp
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.messages import Messages
from licensegate.domain.openedapps import StaleApp
from licensegate.domain.sessions import ClientSession
from licensegate.metrics import TYPE_KEY
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Operation
from licensegate.services import Services
from licensegate.store.database import Database, DatabaseUnavailable, Executor

MAX_ECHOED_OWNERID = 64


async def handle(
    scope: Scope,
    services: Services,
    op: Operation[ClientCall],
    raw: dict[str, str],
    db: Database,
    answering: Answering,
    *,
    limited: bool = False,
) -> Response:
    """One call, once its operation is known, on the database handle it should use (`limited`:
    its rate limits counted it already)."""
    settings = services.settings
    ownerid = raw.get("ownerid", "")[:MAX_ECHOED_OWNERID]
    now = services.clock.now()

    signers = services.signers

    async def found(app: ClientApp) -> None:
        if app.signing_key is not None:  # provisioned (every application since keys exist)
            keys = app.signing_key, app.secret
        else:
            keys = await signers.sealed_keys(db, app.id, app.signing_key, app.secret)
        answering.knows_app(*keys)
        signers.signer(keys[0])  # a key that does not open is a fault now, before any write
        signers.note_app(app.ownerid, app.name, *keys)

    async def messages(app_id: int) -> Messages:
        return Messages(await services.messages.get(db, app_id))

    app, session, held = await recheck.identify(
        services.rechecks,
        db,
        ownerid=raw.get("ownerid", "").strip(),
        name=raw.get("name", "").strip() or None,
        session_id=None if op.requires == "app" else raw.get("sessionid", "").strip(),
        now=now,
        found=found,
        messages=messages,
        opened=services.opened_apps,
    )
    if answering.legacy:
        raw = _decrypt_legacy(services, op, raw, session, answering)
    elif answering.dialect.hmac and session is not None and session.enckey is not None:
        answering.hmac_suffix = services.secrets.open(session.enckey, sessions.ENCKEY)
    if not app.enabled:
        overrides = await services.messages.get(db, app.id)
        raise errorcodes.APP_DISABLED(Messages(overrides)("appdisabled"))
    if app.paused and session is not None:  # pausing ends the sessions; this closes the race
        overrides = await services.messages.get(db, app.id)
        raise errorcodes.APP_PAUSED(Messages(overrides)("pausedApp"))
    ip = client_ip(scope, settings.trusted_proxies)
    counted_ip = counted_as(ip)
    if not limited:
        await _limit(services, db, app, session, counted_ip)
    call = ClientCall(
        services=services,
        args=op.parse_args(raw),
        ip=ip,
        counted_ip=counted_ip,
        ownerid=ownerid,
        app=app,
        session=session,
        db=db,
        keyauth=answering.dialect.keyauth,
        held=held,
    )
    if op.requires == "validated":
        await call.require_logged_in()
    body: dict[str, Any] = await op.handler(call)
    message = body.pop("message")
    dialect = answering.dialect
    success = client_success(ownerid, message, body, dialect.success_code(op))
    return await answering.respond(services, dialect.shape(op.type, success), 200)


async def _limit(
    services: Services, db: Executor, app: ClientApp, session: ClientSession | None, counted_ip: str
) -> None:
    """The client API's rate limits, narrowest first: the caller's address (at this application),
    its session, the named limits of its user and key (domain.namedlimits), then the whole
    application (far above what one address may send, so one abuser cannot use it up for
    everyone). A request any of them refuses is counted by none."""
    settings = services.settings
    window = settings.client_limit_window
    checks = [(f"client-address:{app.id}:{counted_ip}", settings.client_address_limit, window)]
    named: list[namedlimits.Counted] = []
    if session is not None:
        checks.append((f"client-session:{app.id}:{session.id}", settings.client_session_limit, window))
        if app.named_limits and session.validated and session.user_id is not None:
            limits = await services.named_limits.get(db, app.id)
            named = namedlimits.checks(app.id, limits, session.user_id, session.credential)
            checks += [counted.check for counted in named]
    checks.append((f"client:{app.id}", app.client_rate_limit, app.client_rate_window))
    position, retry_after = await services.limiter.admit_all(checks)
    if not retry_after:
        return
    first_named = 3 if session is not None else len(checks) + 1
    if first_named <= position < first_named + len(named):
        counted = named[position - first_named]
        services.named_limit_refusals[counted.owner] += 1
        raise namedlimits.refused(counted, retry_after)
    raise RateLimited(retry_after, "Too many requests; try again later.")


async def _named_app(services: Services, raw: dict[str, str], answering: Answering) -> None:
    """A call refused before its application was looked up (an unknown `type`, say) is still
    answered with that application's key when it names one."""
    ownerid, name = raw.get("ownerid", "").strip(), raw.get("name", "").strip()
    if not ownerid or not name:
        return
    try:
        app = await apps.find_for_client(services.db, ownerid, name)
    except Refusal:
        meant = await apps.meant_by_client(services.db, ownerid, name)
        if meant is None:
            return
        app = meant
    answering.knows_app(*await services.signers.sealed_keys(services.db, app.id, app.signing_key, app.secret))


def _noted_app(services: Services, raw: dict[str, str], answering: Answering) -> None:
    """The keys of the application a call names, if this worker served it before (no database)."""
    keys = services.signers.noted_app(raw.get("ownerid", "").strip(), raw.get("name", "").strip())
    if keys is not None:
        answering.knows_app(*keys)


def _decrypt_legacy(
    services: Services,
    op: Operation[ClientCall],
    raw: dict[str, str],
    session: ClientSession | None,
    answering: Answering,
) -> dict[str, str]:
    """A KeyAuth 1.0 library's values in clear; its answer will be encrypted with the same key."""
    init_iv = raw.get("init_iv")
    if not init_iv or len(init_iv) > 128:
        raise errorcodes.MISSING_PARAMETER("A legacy 1.0 request needs its 'init_iv'.", param="init_iv")
    if op.requires == "app":
        key_string = services.signers.secret(answering.secret or "")
    elif session is not None and session.enckey is not None:
        key_string = services.secrets.open(session.enckey, sessions.ENCKEY)
    else:
        raise errorcodes.SESSION_GONE()
    cipher = Cipher10(key_string, init_iv)
    decrypted = cipher.decrypt_params(raw.get("type", op.type), raw)  # as sent: `chatget`, not `chatfetch`
    answering.cipher = cipher  # from here on the answer is encrypted (a wrong key gets it plain)
    return decrypted


ScopeEndpoint = Callable[[Scope, Receive], Awaitable[Response]]


def endpoint_for(dialect: ClientDialect) -> Callable[[Request], Awaitable[Response]]:
    """The client endpoint of one dialect (its paths: `dialect.paths`), as a Starlette endpoint."""

    async def endpoint(request: Request) -> Response:
        return await serve(request.scope, request.receive, dialect)

    return endpoint


def scope_endpoint_for(dialect: ClientDialect) -> ScopeEndpoint:
    """The same endpoint on the ASGI scope and `receive` themselves (`app.FastPaths` calls it; the
    scope's `app` is set): no Starlette `Request` is made for a client call."""

    def endpoint(scope: Scope, receive: Receive) -> Awaitable[Response]:
        return serve(scope, receive, dialect)

    return endpoint


async def serve(scope: Scope, receive: Receive, dialect: ClientDialect) -> Response:
    services: Services = scope["app"].state.services
    settings = services.settings
    op: Operation[ClientCall] | None = None
    ownerid = ""
    raw: dict[str, str] = {}
    answering = Answering(dialect)
    try:
        heads = read_heads(scope, settings.max_header_bytes)
        query = read_query_of(scope, settings.max_query_bytes)
        fields, size = await read_form_fields(
            scope, receive, heads, registry.body_limit(settings.max_body_bytes)
        )
        raw = dialect.merge(query, fields)
        if dialect.legacy and legacy.decoded_type(raw, registry.knows) is not None:
            answering.legacy, answering.dialect = True, LEGACY_1_0
            raw = legacy.decode_identifiers(raw)
        ownerid = raw.get("ownerid", "")[:MAX_ECHOED_OWNERID]
        answering.clientnonce = read_clientnonce(raw)
        op = registry.lookup(raw)
        scope[TYPE_KEY] = op.type  # for the access log and the metrics
        if size > op.body_limit(settings.max_body_bytes):
            raise errorcodes.REQUEST_TOO_LARGE(
                what="request body", max_bytes=op.body_limit(settings.max_body_bytes)
            )
        if not op.pinned:
            # Once more if the application this worker held for the call changed (`init`: the
            # second run reads it afresh, `domain.openedapps`). The rate limits counted the first
            # run, as the application was held; they do not count the call twice.
            db = services.db
            try:
                return await handle(scope, services, op, raw, db, answering)
            except StaleApp:
                return await handle(scope, services, op, raw, db, answering, limited=True)
        async with services.db.pinned() as db:
            try:
                return await handle(scope, services, op, raw, db, answering)
            except StaleApp:  # as above
                return await handle(scope, services, op, raw, db, answering, limited=True)
    except (Refusal, DatabaseUnavailable) as caught:
        refusal = refusal_of(caught)
        if isinstance(caught, DatabaseUnavailable):
            # The database just failed to answer in time: asking it again (for the application,
            # or the deployment's key) would make the caller wait as long again, or longer.
            answering.database_failed = True
            if answering.signing_key is None:
                _noted_app(services, raw, answering)
        elif answering.signing_key is None:
            if not raw and transport_status(refusal):  # refused before its parameters were read
                raw = await _parameters_anyway(Request(scope, receive), dialect, settings.max_body_bytes)
                ownerid = raw.get("ownerid", "")[:MAX_ECHOED_OWNERID]
                with contextlib.suppress(Refusal):
                    answering.clientnonce = read_clientnonce(raw)
            with contextlib.suppress(DatabaseUnavailable):  # then the deployment's key signs it
                await _named_app(services, raw, answering)
        if answering.legacy and refusal.error == errorcodes.UNKNOWN_APPLICATION.code:
            # What every KeyAuth 1.0 library compares the answer with before decrypting it.
            return await answering.send(services, legacy.UNKNOWN_APPLICATION, TEXT, 200)
        failure = client_failure(ownerid, refusal.message, refusal.error, refusal.kind, refusal.extra)
        status = transport_status(refusal) or answering.dialect.refusal_status(op, refusal)
        return await answering.respond(services, failure, status, refusal_headers(refusal))
    except Exception:
        body, request_id = unexpected_fault(f"client API type={op.type if op else '?'}")
        failure = client_failure(ownerid, body["message"], "internal_error", "internal_error")
        failure["request_id"] = request_id
        return await answering.respond(services, failure, answering.dialect.fault_status(op))


endpoint = endpoint_for(CLIENT_1_0)


async def _parameters_anyway(request: Request, dialect: ClientDialect, max_body_bytes: int) -> dict[str, str]:
    """The parameters of a request refused for its URL's or headers' size, read past the limits
    (the HTTP layer bounds the URL) only to find the application whose key signs the answer."""
    query: dict[str, str] = {}
    with contextlib.suppress(Refusal):
        query = read_query(request, HTTP_MAX_URI_BYTES)
    with contextlib.suppress(Refusal):
        return dialect.merge(query, await read_form_body(request, max_body_bytes))
    return query


def _dialect_of_path(path: str) -> ClientDialect:
    """The dialect whose path a request went under (`/api/1.3/nope` is 1.3's), else 1.0's."""
    for dialect in DIALECTS.values():
        if path == dialect.paths[1] or path.startswith(dialect.paths[0]):
            return dialect
    return CLIENT_1_0


async def unrouted(
    request: Request, body: dict[str, Any], status: int, headers: Mapping[str, str] | None
) -> Response:
    """A 404 or 405 under `/api/` (no operation was reached): the client envelope in the dialect of
    the path it went under, with `code`, a fresh `nonce`, the `ownerid` and `clientnonce` the
    request carried (query string or form body, as the dialect reads them), signed with the key
    of the application it names, or the deployment's."""
    services: Services = request.app.state.services
    dialect = _dialect_of_path(request.url.path)
    answering = Answering(dialect)
    raw: dict[str, str] = {}
    try:
        query = read_query(request, services.settings.max_query_bytes)
        raw = dialect.merge(query, await read_form_body(request, services.settings.max_body_bytes))
        answering.clientnonce = read_clientnonce(raw)
    except Refusal:
        pass  # a malformed or oversized request cannot make this answer any worse
    with contextlib.suppress(DatabaseUnavailable):
        await _named_app(services, raw, answering)
    ownerid = raw.get("ownerid", "")[:MAX_ECHOED_OWNERID]
    kind = "not_found" if status == 404 else "invalid"
    failure = client_failure(ownerid, body["message"], body["error"], kind)
    return await answering.respond(services, failure, status, headers)
