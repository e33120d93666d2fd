"""`/api/seller/`: read the parameters, find the operation by `type`, authenticate the seller key,
rate-limit, validate, run the handler and write the envelope."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from licensegate.api.addresses import client_ip
from licensegate.api.protocol import (
    STATUS_OF_KIND,
    Operation,
    content_type_of,
    failure_body,
    json_response,
    merge,
    read_form_body,
    read_multipart,
    read_query,
    refusal_headers,
    unexpected_fault,
)
from licensegate.api.seller.registry import SellerCall, registry
from licensegate.domain import sellerkeys
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.services import Services

UPLOAD_OVERHEAD = 64 * 1024  # multipart boundaries and text fields around an upload


def render_success(op: Operation[SellerCall], body: dict[str, Any], fmt: str | None) -> Response:
    if fmt == "text" and op.text is not None:
        return PlainTextResponse(op.text(body))
    envelope: dict[str, Any] = {"success": True}
    envelope.update(body)
    return json_response(envelope)


async def endpoint(request: Request) -> Response:
    services: Services = request.app.state.services
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
            ip=client_ip(request.scope, settings.trusted_proxies),
            request=request,
            uploads=uploads,
        )
        body = await op.handler(call)
        return render_success(op, body, raw.get("format"))
    except Refusal as refusal:
        status = op.status_for(refusal) if op is not None else STATUS_OF_KIND[refusal.kind]
        return json_response(failure_body(refusal.message, refusal.error), status, refusal_headers(refusal))
    except Exception:
        body, _ = unexpected_fault(f"seller API type={op.type if op else '?'}")
        return json_response(body, 500)
    finally:
        if form is not None:
            await form.close()
