"""Running a seller operation, whichever face asks (the seller API, the dashboard, the command
line): the one place that checks the caller may use it, holds the application to its seller
rate limit, validates the parameters, runs the handler, writes the audit entry of a change and,
when the application keeps one, the seller log entry of the call."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from licensegate.domain import audit, permissions, sellerlog, users
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.permissions import Scope
from licensegate.operations.declarations import Args, Operation, status_of
from licensegate.operations.seller.registry import Caller, SellerCall, Upload, registry
from licensegate.services import Services
from licensegate.store.database import DatabaseUnavailable, Executor

AUDIT_MAX_VALUE = 1024  # parameter values an audit entry keeps when the handler noted nothing

log = logging.getLogger("licensegate.operations.seller")


async def invoke(
    services: Services,
    caller: Caller,
    op: Operation[SellerCall] | str,
    params: Mapping[str, str],
    *,
    uploads: Mapping[str, Upload] | None = None,
    counted: bool = True,
) -> dict[str, Any]:
    """Run the seller operation `op` (or the one of that `type`) for `caller` with the text
    parameters `params` (as a form or query string would carry them; names an operation does
    not declare are ignored).

    Returns the handler's body: `message` and the operation's fields (no `success`). A refusal
    raises the domain's `Refusal`; `status_of(op, refusal)` is the status the seller API answers
    for it. What a reseller may see is not checked here: handlers hand `call.scope` to the
    domain, which shows a reseller only what it owns.

    `counted` False: the call is one step of a request already counted against the seller rate
    limit (a dashboard bulk action runs one operation per key after counting the request once)."""
    if isinstance(op, str):
        op = registry.lookup({"type": op})
    status = 200
    noted = caller.identity.seller_log
    try:
        return await _run(services, caller, op, params, uploads or {}, counted)
    except Refusal as refusal:
        status = status_of(op, refusal)
        raise
    except DatabaseUnavailable:
        # The database just failed to answer in time: a seller-log entry would wait as long again
        # before failing too (the outage itself is logged where the 503 is answered).
        noted = False
        raise
    except Exception:
        status = op.fault_status()
        raise
    finally:
        if noted:
            await _write_seller_log(services, caller, op, params, status)


async def _run(
    services: Services,
    caller: Caller,
    op: Operation[SellerCall],
    params: Mapping[str, str],
    uploads: Mapping[str, Upload],
    counted: bool,
) -> dict[str, Any]:
    identity = caller.identity
    permissions.require(identity, op.area, op.type)
    settings = services.settings
    if counted:
        retry_after = await services.limiter.hit(
            f"seller:{identity.app_id}", settings.seller_rate_limit, settings.seller_rate_window
        )
        if retry_after:
            raise RateLimited(retry_after, "Too many seller API requests for this application; slow down.")
    args = await _named_users(services.db, identity.scope, op, op.parse_args(params))
    call = SellerCall(services=services, caller=caller, args=args, uploads=uploads)
    body = await op.handler(call)
    if op.mutates:
        # The change has committed; a failure to note it must not turn it into an error.
        await _write_audit(services, op, call)
    return body


async def _named_users(db: Executor, scope: Scope, op: Operation[SellerCall], args: Args) -> Args:
    """Each end user a parameter names (`Param.names_user`) by the client API's rule for names
    (`kim`, `KIM` where the application ignores case, fullwidth `ｋｉｍ`) becomes their name as
    stored, so the handler, its refusals and the audit log all see that one spelling. A name
    naming no user of the caller's scope stays as given: the handler refuses it as before. An
    operation naming no user asks nothing more of the database."""
    for param in op.params:
        if param.names_user and param.name in args:
            args = args.with_text(param.name, await users.stored_name(db, scope, args.text(param.name)))
    return args


USER_PARAMS = ("user", "username", "currentUsername")


def _user_target(op: Operation[SellerCall], shown: dict[str, Any]) -> str | None:
    """An end user's operation (users and variables areas) targets `user:<name>`, so a user's page
    finds its audit trail by one index lookup; a name the logs shorten (a key used as a username)
    or none targets nothing."""
    if op.area not in ("users", "variables"):
        return None
    for name in USER_PARAMS:
        value = shown.get(name)
        if isinstance(value, str) and value and not value.endswith("…"):
            return f"user:{value}"
    return None


def _secret_names(op: Operation[SellerCall]) -> frozenset[str]:
    return frozenset(name for param in op.params if param.secret for name in (param.name, *param.aliases))


async def _write_audit(services: Services, op: Operation[SellerCall], call: SellerCall) -> None:
    caller = call.caller
    actor = caller.actor
    note = call.audit
    target: str | None = None
    before: Any = None
    after: Any = None
    try:
        if note is not None:
            target, before, after = note.target, note.before, note.after
        else:  # the handler described nothing: keep what was asked, without secrets
            after = sellerlog.redact(call.args.as_dict(), _secret_names(op), max_value=AUDIT_MAX_VALUE)
            target = _user_target(op, after)
        await audit.append(
            services.db,
            audit.Entry(
                app_id=call.app_id,
                account_id=caller.identity.acting_account_id,
                actor=actor,
                action=op.type,
                target=target,
                before=before,
                after=after,
                ip=caller.ip,
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
            caller.ip,
            target,
            before,
            after,
        )


async def _write_seller_log(
    services: Services, caller: Caller, op: Operation[SellerCall], params: Mapping[str, str], status: int
) -> None:
    app_id = caller.identity.app_id
    try:
        await sellerlog.record(
            services.db,
            app_id=app_id,
            ip=caller.ip,
            operation=op.type,
            params=sellerlog.redact(params, _secret_names(op)),
            status=status,
            now=services.clock.now(),
            key_id=caller.identity.key_id,
            key_name=caller.identity.key_name,
        )
    except Exception:
        log.exception("seller log entry not written: app %s, type %s, status %s", app_id, op.type, status)
