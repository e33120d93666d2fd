"""`/api/1.0/`: read the parameters, find the operation by `type`, identify the application (and
the session where one is needed), rate-limit, validate, run the handler and write the client
envelope (`success`, `code`, `message`, `nonce`, `ownerid` on every answer)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from licensegate.addresses import client_ip
from licensegate.api.envelope import (
    CLIENT_1_0,
    ClientDialect,
    client_failure,
    client_success,
    refusal_headers,
    unexpected_fault,
)
from licensegate.api.request import merge, read_form_body, read_query
from licensegate.domain import errorcodes, sessions
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.messages import Messages
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Operation
from licensegate.services import Services
from licensegate.store.database import Database

MAX_ECHOED_OWNERID = 64


async def handle(
    request: Request,
    services: Services,
    op: Operation[ClientCall],
    raw: dict[str, str],
    db: Database,
    dialect: ClientDialect,
) -> Response:
    """One call, once its operation is known, on the database handle it should use."""
    settings = services.settings
    ownerid = raw.get("ownerid", "")[:MAX_ECHOED_OWNERID]
    now = services.clock.now()
    app, session = await sessions.identify(
        db,
        ownerid=raw.get("ownerid", "").strip(),
        name=raw.get("name", "").strip() or None,
        session_id=None if op.requires == "app" else raw.get("sessionid", "").strip(),
        now=now,
    )
    if not app.enabled:
        overrides = await services.messages.get(db, app.id)
        raise errorcodes.APP_DISABLED(Messages(overrides)("appdisabled"))
    retry_after = await services.limiter.hit(
        f"client:{app.id}", app.client_rate_limit, app.client_rate_window
    )
    if retry_after:
        raise RateLimited(retry_after, "This application has sent too many requests; try again later.")
    call = ClientCall(
        services=services,
        args=op.parse_args(raw),
        ip=client_ip(request.scope, settings.trusted_proxies),
        ownerid=ownerid,
        app=app,
        session=session,
        db=db,
    )
    if op.requires == "validated":
        await call.require_logged_in()
    body: dict[str, Any] = await op.handler(call)
    message = body.pop("message")
    return dialect.response(client_success(ownerid, message, body, dialect.success_code(op)))


def endpoint_for(dialect: ClientDialect) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint of one version of the client API: the same operations, answered as `dialect`
    decides."""

    async def endpoint(request: Request) -> Response:
        services: Services = request.app.state.services
        settings = services.settings
        op: Operation[ClientCall] | None = None
        ownerid = ""
        try:
            query = read_query(request, settings.max_query_bytes)
            raw = merge(query, await read_form_body(request, settings.max_body_bytes))
            ownerid = raw.get("ownerid", "")[:MAX_ECHOED_OWNERID]
            op = registry.lookup(raw)
            if not op.pinned:
                return await handle(request, services, op, raw, services.db, dialect)
            async with services.db.pinned() as db:
                return await handle(request, services, op, raw, db, dialect)
        except Refusal as refusal:
            failure = client_failure(ownerid, refusal.message, refusal.error, refusal.kind, refusal.extra)
            return dialect.response(failure, dialect.refusal_status(op, refusal), refusal_headers(refusal))
        except Exception:
            body, request_id = unexpected_fault(f"client API type={op.type if op else '?'}")
            failure = client_failure(ownerid, body["message"], body["error"], "internal")
            failure["request_id"] = request_id
            return dialect.response(failure, dialect.fault_status(op))

    return endpoint


endpoint = endpoint_for(CLIENT_1_0)
