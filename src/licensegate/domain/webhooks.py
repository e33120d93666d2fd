"""Webhooks: a base URL the server calls on a client's behalf (the client API's Webhook), so the
URL and any secret in it stay on the server. The base URL is never shown again in full: seller
responses carry only `short_baselink` (scheme, host and path) and the audit log only its host.

The client API's Webhook calls a webhook's stored base URL and hands back the reply text. How
the outbound request is built from the client's values:

- `params` is a query-string fragment (`a=1&b=2`, with or without a leading `?` or `&`). It is
  split into pairs (percent-escapes and `+` decoded, as bytes), and each name and value is
  percent-encoded again and appended to the base URL's query. So nothing the client sends can
  change the scheme, host, port or path: `../../admin`, `@evil.com`, `#frag` or `%2F` all stay
  query values. The base URL's own query is kept as stored and its fragment is dropped.
  Unlike KeyAuth, which concatenated the raw text, a base URL ending in `&type=` is not
  completed by params `add`: it gains a parameter named `add`.
- A name the base URL's query already sets to a non-empty value cannot be sent again (400
  `param_fixed`): most services take the last of repeated names, so the client could otherwise
  replace what the developer fixed (a `type` next to a seller key, say). Names are compared as
  PHP reads them (`a.b`, `a b` and `a_b` are one name; `a[]` is `a`).
- A non-empty `body` makes the request a POST with that body (UTF-8) and `conttype` as its
  Content-Type, `application/x-www-form-urlencoded` when `conttype` is absent (what KeyAuth's
  curl call sent); a `conttype` with anything but printable ASCII is refused (400
  `invalid_content_type`). Without a body the request is a GET and `conttype` is ignored.
- The webhook's stored user agent; the time limit `settings.outbound_timeout` and the reply
  size limit `settings.outbound_max_bytes`; redirects and internal targets as `outbound`
  allows (internal addresses only when in `settings.outbound_allow`).

Any reply the target gives, whatever its status, is the call's result (KeyAuth passed every
reply through, and a seller API answering 4xx with a JSON error is still what the program wants
to read). A call that fails is refused with 403 and a code saying why, with a fixed message
that names neither the URL nor its host:

| outbound error | `error` |
|---|---|
| target not allowed, unusable stored URL | `webhook_refused` |
| no reply within the time limit | `webhook_timeout` |
| reply larger than the limit | `webhook_response_too_large` |
| name does not resolve, connection failed, too many redirects, undecodable reply | `webhook_failed` |

The server log records the webhook id, the application and the error code, never the URL.

Every call made to a webhook (a client's, or the dashboard's test) is noted in the application's
delivery log: when, which webhook, GET or POST, the target's HTTP status (none when no reply came),
how long it took, and why it failed; of a reply with a status of 400 or above, its first
`EXCERPT` characters. Never the URL, the client's values or a successful reply, and any part of
the base URL that could be a secret (its query values, long path segments, its password) is
blanked out of what is kept. The log keeps the `KEPT_DELIVERIES` most recent calls of each
application (older ones are deleted as new ones are noted, a few dozen at a time), and noting a
call never fails it.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, quote_from_bytes, unquote_to_bytes, urlsplit

from licensegate import ids, outbound
from licensegate.config import Settings
from licensegate.domain import errorcodes
from licensegate.domain.errors import ErrorCode
from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.secretbox import SecretBox, is_sealed
from licensegate.store import webhooks as store
from licensegate.store.database import Executor, UniqueViolation
from licensegate.store.webhooks import DeliveryRow as DeliveryRow
from licensegate.store.webhooks import WebhookRow as WebhookRow  # the rows it returns

log = logging.getLogger("licensegate.webhooks")

MAX_URL = 2048
MAX_USER_AGENT = 128
MAX_WEBID = 32
DEFAULT_USER_AGENT = "licensegate"
GENERATED_WEBID_LENGTH = 10
ID_ATTEMPTS = 10
_WEBID = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_WEBID}}}")


BASE_URL = "webhooks.base_url"  # the purpose a webhook's URL is sealed for (it may carry tokens)


def _opened(box: SecretBox, row: WebhookRow) -> WebhookRow:
    """The webhook's row with its URL in clear (sealed at rest; in clear if stored before URLs
    were sealed and not yet sealed by `licensegate migrate` or `serve`)."""
    url = row["base_url"]
    return {**row, "base_url": box.open(url, BASE_URL) if is_sealed(url) else url}


def new_webid() -> str:
    return "".join(secrets.choice(ids.ALNUM) for _ in range(GENERATED_WEBID_LENGTH))


def audit_view(row: WebhookRow) -> dict[str, Any]:
    """What the audit log keeps: the host only, never the URL (it may carry secrets)."""
    return {
        "webid": row["webid"],
        "host": _host(row["base_url"]),
        "useragent": row["user_agent"],
        "authed": 1 if row["authed"] else 0,
    }


def _host(url: str) -> str | None:
    try:
        return outbound.parse_url(url).host
    except outbound.OutboundError:
        return None


def check_user_agent(value: str) -> str:
    # It becomes a request header: no line breaks or other control characters.
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise errorcodes.INVALID_USER_AGENT()
    return value


async def check_base_url(settings: Settings, url: str) -> None:
    """Refuse a URL the outbound module would refuse: not http(s), an internal target (unless
    the operator allows it), or a host name that does not resolve."""
    if len(url) > MAX_URL:
        raise errorcodes.PARAMETER_TOO_LONG(f"The base URL must be at most {MAX_URL} characters.")
    try:
        await outbound.check(settings, url)
    except outbound.OutboundError as exc:
        raise errorcodes.by_code(exc.error)(f"This base URL cannot be used: {exc.message}") from exc


async def add(
    settings: Settings,
    db: Executor,
    box: SecretBox,
    app_id: int,
    *,
    base_url: str,
    user_agent: str | None,
    authed: bool,
    webid: str | None,
    now: int,
) -> WebhookRow:
    """Add a webhook under `webid` (given: it must be new; omitted: 10 random letters and digits)."""
    if webid is not None and not _WEBID.fullmatch(webid):
        raise errorcodes.INVALID_WEBID(maximum=MAX_WEBID)
    agent = check_user_agent(user_agent) if user_agent else DEFAULT_USER_AGENT
    await check_base_url(settings, base_url)
    for _ in range(1 if webid is not None else ID_ATTEMPTS):
        chosen = webid or new_webid()
        try:
            await store.insert(
                db,
                app_id=app_id,
                webid=chosen,
                base_url=box.seal(base_url, BASE_URL),
                user_agent=agent,
                authed=authed,
                now=now,
            )
        except UniqueViolation:
            continue
        row = await store.find(db, app_id, chosen)
        assert row is not None
        return _opened(box, row)
    if webid is not None:
        raise errorcodes.WEBHOOK_EXISTS(webid=webid)
    raise RuntimeError("no free webhook id after several attempts")


def require_enabled(row: WebhookRow) -> None:
    """A webhook imported from KeyAuth without its full URL is called by nobody (its stored URL
    is only a short link) until the seller enters the URL again."""
    if not row["enabled"]:
        raise errorcodes.WEBHOOK_DISABLED()


async def get(db: Executor, box: SecretBox, app_id: int, webid: str) -> WebhookRow:
    """The webhook, its URL opened."""
    row = await store.find(db, app_id, webid)
    if row is None:
        raise errorcodes.WEBHOOK_NOT_FOUND(webid=webid)
    return _opened(box, row)


def masked(url: str) -> str:
    """What the dashboard shows of a base URL until asked for all of it: its scheme, host and
    port, and a mark where the rest (path, query: where tokens sit) is hidden."""
    short = outbound.short_url(url)
    if not short:
        return "•••"
    origin = short.split("/", 3)
    shown = "/".join(origin[:3])
    return f"{shown}/•••" if url.rstrip("/") != shown else shown


async def edit(
    settings: Settings,
    db: Executor,
    box: SecretBox,
    app_id: int,
    webid: str,
    *,
    base_url: str | None,
    user_agent: str | None,
    authed: bool | None,
) -> tuple[WebhookRow, WebhookRow]:
    """Change a webhook's base URL, user agent or authed flag (None: keep it), each checked as
    `add` checks it; the webhook before and after."""
    if base_url is None and user_agent is None and authed is None:
        raise errorcodes.NOTHING_TO_CHANGE("Give at least one of 'baseurl', 'ua' and 'authed' to change.")
    before = await get(db, box, app_id, webid)
    if user_agent is not None:
        check_user_agent(user_agent)
    if base_url is not None:
        await check_base_url(settings, base_url)
    sealed = box.seal(base_url, BASE_URL) if base_url is not None else None
    if not await store.update(db, app_id, webid, base_url=sealed, user_agent=user_agent, authed=authed):
        raise errorcodes.WEBHOOK_NOT_FOUND(webid=webid)
    return before, await get(db, box, app_id, webid)


async def list_all(db: Executor, box: SecretBox, app_id: int) -> list[WebhookRow]:
    """The application's webhooks, oldest first, their URLs opened."""
    return [_opened(box, row) for row in await store.list_for_app(db, app_id)]


async def delete(db: Executor, box: SecretBox, app_id: int, webid: str) -> WebhookRow:
    before = await get(db, box, app_id, webid)
    if not await store.delete(db, app_id, webid):
        raise errorcodes.WEBHOOK_NOT_FOUND(webid=webid)
    return before


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)


# --- calling a webhook for a client -----------------------------------------------------------

MAX_PARAMS = 2048
MAX_BODY = 65536
# The form body of a call carrying a `body` at its maximum length, even percent-escaped in full
# (3 bytes a character), with the other parameters: above the default body limit.
MAX_CALL_BYTES = 256 * 1024
MAX_CONTENT_TYPE = 128
MAX_PAIRS = 100
DEFAULT_CONTENT_TYPE = "application/x-www-form-urlencoded"
SUCCESS_MESSAGE = "Webhook request successful"

Pair = tuple[bytes, bytes | None]  # a value of None: the name was sent without `=`


@dataclass(frozen=True, slots=True)
class WebhookRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None


@dataclass(frozen=True, slots=True)
class WebhookResult:
    status: int
    text: str

    @property
    def message(self) -> str:
        if 200 <= self.status < 300:
            return SUCCESS_MESSAGE
        return f"Webhook request completed; the target answered with HTTP status {self.status}."


# What the client is told of an outbound failure, by its code (any other: WEBHOOK_FAILED): fixed
# texts, so no host or URL can slip through.
_FAILURES: Mapping[str, ErrorCode] = {
    "timeout": errorcodes.WEBHOOK_TIMEOUT,
    "response_too_large": errorcodes.WEBHOOK_RESPONSE_TOO_LARGE,
}


# --- the query -------------------------------------------------------------------------------


def parse_pairs(text: str, limit: int = MAX_PAIRS) -> list[Pair]:
    """`a=1&b=2` (a leading `?` or `&` allowed) into decoded (name, value) pairs, kept as bytes so
    any escape survives re-encoding unchanged."""
    pairs: list[Pair] = []
    for part in text.lstrip("?&").split("&"):
        if not part:
            continue
        name, eq, value = part.partition("=")
        pairs.append((_decode(name), _decode(value) if eq else None))
        if len(pairs) > limit:
            raise errorcodes.TOO_MANY_PARAMS(maximum=limit)
    return pairs


def _decode(text: str) -> bytes:
    return unquote_to_bytes(text.replace("+", " "))


def _encode(pair: Pair) -> str:
    name, value = pair
    encoded = quote_from_bytes(name, safe="")
    return encoded if value is None else f"{encoded}={quote_from_bytes(value, safe='')}"


def _php_name(name: bytes) -> bytes:
    """The name as PHP stores it: up to its first `[`, with `.` and spaces as `_`."""
    return name.split(b"[", 1)[0].strip(b" ").replace(b".", b"_").replace(b" ", b"_")


def build_url(base_url: str, params: str | None) -> str:
    """The base URL with the client's params appended to its query (its fragment dropped).

    Only the text after the base URL's first `?` (and before its `#`) is touched: everything
    before it (scheme, credentials, host, port, path) is kept byte for byte."""
    head = base_url.partition("#")[0]
    prefix, _, query = head.partition("?")
    pairs = parse_pairs(params or "")
    fixed = {_php_name(name) for name, value in parse_pairs(query, limit=10_000) if value}
    for name, _value in pairs:
        if _php_name(name) in fixed:
            shown = name.decode("utf-8", errors="replace")[:64]
            raise errorcodes.PARAM_FIXED(name=shown)
    query = query.rstrip("&")
    added = "&".join(_encode(pair) for pair in pairs)
    if query and added:
        query = f"{query}&{added}"
    elif added:
        query = added
    return f"{prefix}?{query}" if query else prefix


# --- the request -----------------------------------------------------------------------------


def _header_value(value: str) -> str:
    """Printable ASCII as it is; anything else percent-encoded (a header is ASCII on the wire)."""
    return quote(value, safe="".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "%"))


def check_content_type(value: str) -> str:
    if not all(0x20 <= ord(ch) < 0x7F for ch in value):
        raise errorcodes.INVALID_CONTENT_TYPE()
    return value


def build_request(
    base_url: str, user_agent: str, *, params: str | None, body: str | None, content_type: str | None
) -> WebhookRequest:
    headers = {"User-Agent": _header_value(user_agent)}
    if content_type is not None:
        check_content_type(content_type)
    url = build_url(base_url, params)
    if body:
        headers["Content-Type"] = content_type or DEFAULT_CONTENT_TYPE
        return WebhookRequest("POST", url, headers, body.encode("utf-8"))
    return WebhookRequest("GET", url, headers, None)


# --- making the call, and the delivery log ----------------------------------------------------

KEPT_DELIVERIES = 1000  # the delivery log's entries kept per application
# One note in this many also deletes what fell out of the log: a note is then one insert (0.3 ms
# on PostgreSQL; the pruning read walks 1,000 index entries, 0.7 ms more), the log holds at most
# a few dozen entries beyond the limit, and (at random, not by turns) no application can escape it.
PRUNE_ONE_IN = 16
EXCERPT = 200  # characters kept of a failed reply
TEST_EXCERPT = 1000  # characters of the reply a test call shows (not kept)
CLIENT, TEST = "client", "test"  # who made a call


@dataclass(frozen=True, slots=True)
class Delivery:
    """How one call went: the reply (`result`), or the outbound failure (`failure`)."""

    duration_ms: int
    result: WebhookResult | None = None
    failure: outbound.OutboundError | None = None

    @property
    def status(self) -> int | None:
        return self.result.status if self.result is not None else None


async def deliver(
    settings: Settings,
    db: Executor,
    request: WebhookRequest,
    *,
    app_id: int,
    webid: str,
    base_url: str,
    source: str,
    now: int,
) -> Delivery:
    """Make the request through the guarded outbound module and note it in the delivery log."""
    started = time.perf_counter()
    try:
        reply = await outbound.request(
            settings,
            request.method,
            request.url,
            headers=request.headers,
            body=request.body,
            max_bytes=settings.outbound_max_bytes,
            timeout=settings.outbound_timeout,
        )
    except outbound.OutboundError as exc:
        delivery = Delivery(_elapsed(started), failure=exc)
    else:
        text = reply.content.decode("utf-8", errors="replace")
        delivery = Delivery(_elapsed(started), result=WebhookResult(reply.status, text))
    await _note(db, app_id, webid, source, request.method, base_url, delivery, now)
    return delivery


def _elapsed(started: float) -> int:
    return max(0, round((time.perf_counter() - started) * 1000))


async def _note(
    db: Executor,
    app_id: int,
    webid: str,
    source: str,
    method: str,
    base_url: str,
    delivery: Delivery,
    now: int,
) -> None:
    """One insert (and the pruning of what falls out of the log); a failure here is logged and
    never fails the call."""
    failure, result = delivery.failure, delivery.result
    excerpt = None
    if result is not None and result.status >= 400:
        excerpt = scrub(_printable(result.text[:EXCERPT]), base_url) or None
    try:
        await store.add_delivery(
            db,
            app_id,
            webid=webid,
            source=source,
            method=method,
            status=delivery.status,
            duration_ms=delivery.duration_ms,
            error_code=failure.error if failure is not None else None,
            error=scrub(failure.message, base_url)[:500] if failure is not None else None,
            excerpt=excerpt,
            now=now,
        )
        if secrets.randbelow(PRUNE_ONE_IN) == 0:
            await store.prune_deliveries(db, app_id, KEPT_DELIVERIES)
    except Exception:
        log.exception(
            "delivery of webhook %r of application %d not noted (the call went ahead)", webid, app_id
        )


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text).strip()


def secret_parts(url: str) -> list[str]:
    """The parts of a base URL that may be secrets: its query values (as written and decoded),
    its password, and path segments of 12 characters or more (Discord keeps a webhook's token
    there), longest first."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = {url, parts.query}
    found.update(value for _name, value in parse_qsl(parts.query, keep_blank_values=True))
    found.update(piece.partition("=")[2] for piece in parts.query.split("&"))
    found.update(segment for segment in parts.path.split("/") if len(segment) >= 12)
    if parts.password:
        found.add(parts.password)
    return sorted((item for item in found if len(item) >= 4), key=len, reverse=True)


def scrub(text: str, base_url: str) -> str:
    """`text` with every secret-looking part of `base_url` blanked out."""
    for part in secret_parts(base_url):
        text = text.replace(part, "•••")
    return text


async def send(
    settings: Settings, db: Executor, request: WebhookRequest, *, app_id: int, row: WebhookRow, now: int
) -> WebhookResult:
    """A client's call: made, noted, and failures turned into 403 refusals whose messages never
    name the URL or its host (outbound's own messages name the host)."""
    webid = row["webid"]
    delivery = await deliver(
        settings, db, request, app_id=app_id, webid=webid, base_url=row["base_url"], source=CLIENT, now=now
    )
    failure = delivery.failure
    if isinstance(failure, outbound.OutboundRefused):
        log.warning("webhook %r of application %d refused: %s", webid, app_id, failure.error)
        raise errorcodes.WEBHOOK_REFUSED() from None
    if failure is not None:
        log.warning("webhook %r of application %d failed: %s", webid, app_id, failure.error)
        raise _FAILURES.get(failure.error, errorcodes.WEBHOOK_FAILED)() from None
    assert delivery.result is not None
    return delivery.result


async def test(
    settings: Settings,
    db: Executor,
    box: SecretBox,
    app_id: int,
    webid: str,
    *,
    params: str | None,
    body: str | None,
    now: int,
) -> Delivery:
    """The seller's test: the call a client's Webhook call with these `params` and `body` would
    make (a GET of the base URL without them), made and noted like one."""
    row = await get(db, box, app_id, webid)
    require_enabled(row)
    request = build_request(row["base_url"], row["user_agent"], params=params, body=body, content_type=None)
    return await deliver(
        settings, db, request, app_id=app_id, webid=webid, base_url=row["base_url"], source=TEST, now=now
    )


async def browse_deliveries(
    db: Executor, app_id: int, *, webid: str | None, failed: bool, request: PageRequest
) -> Page:
    rows = await store.browse_deliveries(db, app_id, webid=webid, failed=failed, request=request)
    return finish([dict(row) for row in rows], request)


async def count_deliveries(db: Executor, app_id: int) -> int:
    return await store.count_deliveries(db, app_id)
