"""`/api/seller/`: read the parameters, find the operation by `type`, authenticate the seller key,
rate-limit, validate, run the handler and write the envelope."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import Response

from licensegate.api.addresses import client_ip
from licensegate.api.envelope import (
    failure_body,
    json_response,
    refusal_headers,
    seller_success,
    unexpected_fault,
)
from licensegate.api.request import merge, read_form_body, read_multipart, read_query
from licensegate.bodies import content_type_of
from licensegate.domain import audit, sellerkeys, sellerlog
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.sellerkeys import SellerIdentity
from licensegate.operations.declarations import Operation, status_of
from licensegate.operations.seller.registry import SellerCall, registry
from licensegate.services import Services

UPLOAD_OVERHEAD = 64 * 1024  # multipart boundaries and text fields around an upload
AUDIT_MAX_VALUE = 1024  # parameter values an audit entry keeps when the handler noted nothing

log = logging.getLogger("licensegate.api.seller")


@dataclass(slots=True)
class _Trace:
    """What the seller and audit logs need to know about a call, filled in as it proceeds."""

    op: Operation[SellerCall] | None = None
    identity: SellerIdentity | None = None
    raw: dict[str, str] = field(default_factory=dict)
    ip: str | None = None


async def endpoint(request: Request) -> Response:
    services: Services = request.app.state.services
    trace = _Trace()
    response = await _dispatch(request, services, trace)
    if trace.identity is not None and trace.identity.seller_log and trace.op is not None:
        await _write_seller_log(services, trace.identity, trace.op, trace, response.status_code)
    return response


async def _dispatch(request: Request, services: Services, trace: _Trace) -> Response:
    settings = services.settings
    op: Operation[SellerCall] | None = None
    form: FormData | None = None
    uploads: dict[str, UploadFile] = {}
    try:
        query = read_query(request, settings.max_query_bytes)
        op = registry.get(query.get("type", ""))
        if request.method == "POST" and content_type_of(request) == "multipart/form-data":
            file_fields = op.uploads if op is not None else ()
            limit = settings.max_upload_bytes + UPLOAD_OVERHEAD if file_fields else settings.max_body_bytes
            fields, uploads, form = await read_multipart(request, limit, file_fields)
            raw = merge(query, fields)
        else:
            limit = (op.max_body_bytes if op is not None else None) or settings.max_body_bytes
            raw = merge(query, await read_form_body(request, limit))
        op = registry.lookup(raw)
        now = services.clock.now()
        identity = await sellerkeys.authenticate(services.db, raw.get("sellerkey"), now)
        trace.op, trace.identity, trace.raw = op, identity, raw
        trace.ip = client_ip(request.scope, settings.trusted_proxies)
        sellerkeys.require(identity, op.area, op.type)
        retry_after = await services.limiter.hit(
            f"seller:{identity.app_id}", settings.seller_rate_limit, settings.seller_rate_window
        )
        if retry_after:
            raise RateLimited(retry_after, "Too many seller API requests for this application; slow down.")
        args = op.parse_args(raw)
        call = SellerCall(
            services=services,
            identity=identity,
            args=args,
            ip=trace.ip,
            request=request,
            uploads=uploads,
        )
        body = await op.handler(call)
        if op.mutates:
            # The change has committed; a failure to note it must not turn it into an error.
            await _write_audit(services, op, call, raw)
        return seller_success(op, body, raw.get("format"))
    except Refusal as refusal:
        status = status_of(op, refusal)
        body = failure_body(refusal.message, refusal.error, refusal.extra)
        return json_response(body, status, refusal_headers(refusal))
    except Exception:
        body, _ = unexpected_fault(f"seller API type={op.type if op else '?'}")
        return json_response(body, op.fault_status() if op is not None else 500)
    finally:
        if form is not None:
            await form.close()


def _secret_names(op: Operation[SellerCall]) -> frozenset[str]:
    return frozenset(name for param in op.params if param.secret for name in (param.name, *param.aliases))


def _actor(identity: SellerIdentity, raw: dict[str, str]) -> tuple[str, int]:
    """Who acted, as the audit log names them: a team member by username; the owner by account
    name and the prefix of the seller key used (keys are told apart by their prefixes)."""
    if identity.member_username is not None:
        return identity.member_username, identity.acting_account_id
    prefix = (raw.get("sellerkey") or "").strip()[:6]
    return f"{identity.owner} (seller key {prefix})", identity.account_id


async def _write_audit(
    services: Services, op: Operation[SellerCall], call: SellerCall, raw: dict[str, str]
) -> None:
    actor, account_id = _actor(call.identity, raw)
    note = call.audit
    target: str | None = None
    before: Any = None
    after: Any = None
    try:
        if note is not None:
            target, before, after = note.target, note.before, note.after
        else:  # the handler described nothing: keep what was asked, without secrets
            after = sellerlog.redact(call.args.as_dict(), _secret_names(op), max_value=AUDIT_MAX_VALUE)
        await audit.append(
            services.db,
            audit.Entry(
                app_id=call.app_id,
                account_id=account_id,
                actor=actor,
                action=op.type,
                target=target,
                before=before,
                after=after,
                ip=call.ip,
                created_at=services.clock.now(),
            ),
        )
    except Exception:
        # Enough to write the entry by hand; notes and redacted parameters hold no secrets.
        log.exception(
            "audit entry not written (the change itself succeeded): app %s, action %s, actor %s, "
            "ip %s, target %r, before %r, after %r",
            call.app_id,
            op.type,
            actor,
            call.ip,
            target,
            before,
            after,
        )


async def _write_seller_log(
    services: Services, identity: SellerIdentity, op: Operation[SellerCall], trace: _Trace, status: int
) -> None:
    try:
        await sellerlog.record(
            services.db,
            app_id=identity.app_id,
            ip=trace.ip,
            operation=op.type,
            params=sellerlog.redact(trace.raw, _secret_names(op)),
            status=status,
            now=services.clock.now(),
        )
    except Exception:
        log.exception(
            "seller log entry not written: app %s, type %s, status %s",
            identity.app_id,
            op.type,
            status,
        )
