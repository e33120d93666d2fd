"""`/api/seller/`: read the parameters, find the operation by `type`, authenticate the seller key,
hand the call to `operations.seller.invoke` and write the envelope."""

from __future__ import annotations

from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import Response

from licensegate.addresses import client_ip, counted_as
from licensegate.api.envelope import (
    failure_body,
    json_response,
    refusal_headers,
    refusal_of,
    seller_success,
    unexpected_fault,
)
from licensegate.api.request import (
    check_headers,
    merge,
    read_form_body_sized,
    read_multipart,
    read_query,
    transport_status,
)
from licensegate.bodies import content_type_of
from licensegate.domain import errorcodes, permissions, sellerkeys
from licensegate.domain.errors import Refusal
from licensegate.metrics import TYPE_KEY
from licensegate.operations.declarations import Operation, status_of
from licensegate.operations.seller import Caller, SellerCall, Upload, invoke, registry
from licensegate.services import Services
from licensegate.store.database import DatabaseUnavailable

UPLOAD_OVERHEAD = 64 * 1024  # multipart boundaries and text fields around an upload
KEY_PREFIX_SHOWN = 6  # the audit log tells the owner's seller keys apart by their first characters


async def _caller(request: Request, services: Services, sellerkey: str | None) -> Caller:
    """Who calls: the seller key's identity, the address, and the key's prefix for the audit log.
    An address that presented too many wrong keys is refused before its key is looked at."""
    settings = services.settings
    ip = client_ip(request.scope, settings.trusted_proxies)
    limit = sellerkeys.FailureLimit(
        services.limiter, settings.seller_key_failures, settings.seller_key_failure_window
    )
    identity = await sellerkeys.authenticate_from(
        services.db, sellerkey, services.clock.now(), counted_as(ip), limit, ip=ip
    )
    return Caller(
        identity,
        ip=ip,
        via=f"seller key {(sellerkey or '').strip()[:KEY_PREFIX_SHOWN]}",
    )


async def endpoint(request: Request) -> Response:
    services: Services = request.app.state.services
    settings = services.settings
    op: Operation[SellerCall] | None = None
    form: FormData | None = None
    uploads: dict[str, UploadFile] = {}
    try:
        check_headers(request, settings.max_header_bytes)
        query = read_query(request, settings.max_query_bytes)
        op = registry.get(query.get("type", ""))
        if op is not None:
            request.scope[TYPE_KEY] = op.type  # for the access log and the metrics
        multipart = request.method == "POST" and content_type_of(request) == "multipart/form-data"
        file_fields = op.uploads if op is not None and multipart else ()
        caller: Caller | None = None
        if file_fields and not query.get("sellerkey"):  # an upload's body is never read to find it
            raise errorcodes.MISSING_SELLER_KEY(
                "No seller key in the query string: an upload takes 'sellerkey' (and 'type') there "
                "(/api/seller/?sellerkey=...&type=upload); the multipart body carries the file."
            )
        if file_fields or "sellerkey" in query:
            # Authenticate before a body is read: an upload may be 50 MiB, spooled to disk, and
            # only a caller who may use the operation gets that far. The query's key wins over
            # one in the body anyway, so nothing the body says could change this answer.
            caller = await _caller(request, services, query.get("sellerkey"))
            if (
                op is not None
                and file_fields
                and not permissions.allows(caller.identity.permissions, op.area)
            ):
                await invoke(services, caller, op, query)  # refuses, noted as any refusal is
        size = 0  # of a form body
        if multipart:
            limit = settings.max_upload_bytes + UPLOAD_OVERHEAD if file_fields else settings.max_body_bytes
            fields, uploads, form = await read_multipart(
                request, limit, file_fields, query_names_operation=op is not None
            )
            raw = merge(query, fields)
        else:
            # The query usually names the operation; when only the body does, the body is read
            # under the largest limit and checked against its operation's once that is known.
            limit = (op or registry).body_limit(settings.max_body_bytes)
            fields, size = await read_form_body_sized(request, limit)
            raw = merge(query, fields)
        op = registry.lookup(raw)
        if size > op.body_limit(settings.max_body_bytes):
            raise errorcodes.REQUEST_TOO_LARGE(
                what="request body", max_bytes=op.body_limit(settings.max_body_bytes)
            )
        request.scope[TYPE_KEY] = op.type
        if caller is None:
            caller = await _caller(request, services, raw.get("sellerkey"))
        sent = {name: Upload(upload.filename, upload.file) for name, upload in uploads.items()}
        body = await invoke(services, caller, op, raw, uploads=sent)
        return seller_success(op, body, raw.get("format"))
    except (Refusal, DatabaseUnavailable) as caught:
        refusal = refusal_of(caught)
        status = transport_status(refusal) or status_of(op, refusal)
        body = failure_body(refusal.message, refusal.error, refusal.extra)
        return json_response(body, status, refusal_headers(refusal))
    except Exception:
        body, _ = unexpected_fault(f"seller API type={op.type if op else '?'}")
        return json_response(body, op.fault_status() if op is not None else 500)
    finally:
        if form is not None:
            await form.close()
