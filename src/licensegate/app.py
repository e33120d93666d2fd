"""Builds the ASGI application: the client API, the seller API, health and reference routes."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from licensegate import eventworker, ids, metrics, readiness
from licensegate.addresses import client_ip
from licensegate.api import client, openapi, seller
from licensegate.api.envelope import failure_body, json_response
from licensegate.config import Settings
from licensegate.domain import deploymentkey, eventdelivery, heartbeats, logs, overview, passwordreset
from licensegate.domain import panel as panel_sessions
from licensegate.domain.errors import ErrorCode
from licensegate.services import Services
from licensegate.store import sessions as session_store
from licensegate.store import turns
from licensegate.store.database import DatabaseUnavailable
from licensegate.web import dashboard, panel
from licensegate.web.reset import reset_page

log = logging.getLogger("licensegate")
PURGE_INTERVAL = 300  # seconds between sweeps of expired client sessions and old logs
# A sweep deletes at most PURGE_BATCHES batches of SWEEP_BATCH sessions, and lets the requests
# waiting meanwhile in after each one: on SQLite every statement runs on the event loop, and a
# hundred batches of 1,000 back to back had held it for seconds at 1,000,000 sessions.
SWEEP_BATCH = 250
PURGE_BATCHES = 400
SWEEP_TURN = "sessions and logs sweep"  # its turn's name in `periodic_turns` (store/turns.py)
# The walk of every session for users without time left: a daily backstop behind each sweep's
# look at the grants that ran out since the last (migration 0065 dates its first turn).
WALK_TURN = "sessions walk"
WALK_INTERVAL = 86_400
# After each step of that walk, its worker rests this many times as long as the step took: a
# walk of every session (12 s of work at 1,200,000) uses at most a quarter of a core while it
# runs, the rest of that worker's share is left to requests.
SWEEP_REST = 3
OVERVIEW_SWEEP = 60  # seconds between looks for overview counts to refresh


async def _in_batches(delete: Callable[[], Awaitable[int]]) -> None:
    """`delete` again until it deletes nothing, PURGE_BATCHES times at most, the requests waiting
    meanwhile let in after each batch."""
    for _batch in range(PURGE_BATCHES):
        if not await delete():
            return
        await asyncio.sleep(0)


async def purge_expired_sessions(services: Services) -> None:
    """Delete expired sessions (client and customer-panel ones) and those of users whose time ran
    out, and client logs and tamper reports past their application's retention, now and then, in
    small batches, for as long as the worker runs. Of all the workers of all the nodes on one
    database, the one that takes the turn sweeps (store/turns.py); the others skip it."""
    while True:
        await asyncio.sleep(PURGE_INTERVAL)
        try:
            await _sweep(services)
        except DatabaseUnavailable as exc:
            log.warning("purging expired sessions or old logs: %s; will try again", exc)
        except Exception:
            log.exception("purging expired sessions or old logs failed; will try again")


async def _sweep(services: Services) -> None:
    """One sweep, if this worker takes its turn."""
    db, clock = services.db, services.clock
    if not await turns.take(db, SWEEP_TURN, clock.now(), PURGE_INTERVAL):
        return
    await _in_batches(lambda: session_store.purge_expired(db, clock.now(), SWEEP_BATCH))
    # A session outlives its user's last subscription by at most one sweep.
    reached = await _end_sessions_run_out(services)
    if await turns.take(db, WALK_TURN, clock.now(), WALK_INTERVAL):
        await _end_sessions_without_time(services)
        await turns.done(db, WALK_TURN, clock.now())
    await _in_batches(lambda: session_store.purge_ended(db, clock.now(), SWEEP_BATCH))
    await logs.purge_expired(db, clock.now())
    await panel_sessions.purge_expired(db, clock.now())
    await turns.done(db, SWEEP_TURN, clock.now(), reached=reached)


async def _end_sessions_run_out(services: Services) -> int:
    """End the sessions of users whose last grant ran out since the last sweep looked (reaching
    back one interval more, for a node whose clock ran behind; a day on the first sweep, the
    daily walk covers what is older). Every operation that takes time away ends the sessions
    itself, but for a key's deletion, which notes its users for this (`check_time_of`); the
    clock is what this catches. Returns the time it looked up to."""
    db, now = services.db, services.clock.now()
    last = await turns.reached(db, SWEEP_TURN)
    since = now - WALK_INTERVAL if last is None else min(last, now) - math.ceil(PURGE_INTERVAL)
    for sub_id in await session_store.subscription_ids(db):
        await session_store.end_run_out_between(db, sub_id, since, now)
    await _in_batches(lambda: session_store.end_noted(db, now))
    return now


async def _end_sessions_without_time(services: Services) -> None:
    """Every session looked at, a step at a time, its reads off the event loop (SQLite), with a
    rest after each step (`SWEEP_REST`)."""
    db, clock = services.db, services.clock
    async with db.reading_apart() as reader:
        after: str | None = ""
        while after is not None:
            started = time.monotonic()
            after = await session_store.end_without_time_after(db, clock.now(), after, reader=reader)
            await asyncio.sleep(SWEEP_REST * (time.monotonic() - started))


async def end_silent_sessions(services: Services) -> None:
    """End the logged-in sessions that missed their heartbeats (domain.heartbeats), every few
    seconds, in every worker: the DELETE is conditional, so workers and nodes never double up."""
    while True:
        await asyncio.sleep(services.settings.heartbeat_sweep_seconds)
        try:
            await heartbeats.end_silent(services.db, services.clock.now())
        except DatabaseUnavailable as exc:
            log.warning("ending sessions that missed their heartbeats: %s; will try again", exc)
        except Exception:
            log.exception("ending sessions that missed their heartbeats failed; will try again")


async def write_counts(services: Services) -> None:
    """Write the logins this worker counted for the overview, every few seconds. A flush under
    way when the worker stops (this task is cancelled) runs to its end: cancelled while its COMMIT
    was on the way, it would put back counts the database may have written, and the last flush
    (`Services.close`, which waits for it) would write them twice."""
    while True:
        await asyncio.sleep(services.settings.count_flush_seconds)
        try:
            await asyncio.shield(services.logins.flush(services.db))
        except DatabaseUnavailable as exc:
            log.warning("writing the overview's login counts: %s; kept for the next try", exc)
        except Exception:
            log.exception("writing the overview's login counts failed; kept for the next try")


async def refresh_overviews(services: Services) -> None:
    """Count again, now and then, the overview figures of large applications someone looks at
    (domain/overview.py: `refresh_due`)."""
    while True:
        await asyncio.sleep(OVERVIEW_SWEEP)
        settings = services.settings
        try:
            await overview.refresh_due(
                services.db,
                services.clock.now(),
                every=settings.overview_refresh_minutes * 60,
                inline_below=settings.overview_inline_rows,
            )
        except DatabaseUnavailable as exc:
            log.warning("refreshing the overview's counts: %s; will try again", exc)
        except Exception:
            log.exception("refreshing the overview's counts failed; will try again")


def settle_heap() -> None:
    """Put what start-up made (modules, the operations' declarations, open connections: about
    150,000 objects) out of the garbage collector's sight, once a worker is ready to serve. A full
    collection scans every object it tracks and stops the event loop meanwhile: over that heap it
    took 30-550 ms (quiet to heavily loaded machine), a request's whole latency budget many times
    over, whenever enough objects had outlived their requests to trigger one. Frozen objects are
    never scanned again (they would be kept alive anyway); what requests make is collected as before."""
    gc.collect()  # no garbage frozen with the rest
    gc.freeze()


_HEALTHY = b'{"status":"ok"}'


async def healthz(_request: Request) -> Response:
    """Answers without touching the database: the ceiling benchmarks measure against."""
    return Response(_HEALTHY, media_type="application/json")


async def readyz(request: Request) -> Response:
    """The database (a real query, briefly) and Redis when configured: 200, or 503 naming the
    check that failed (`readiness`)."""
    services: Services = request.app.state.services
    status, body = await readiness.report(services.db, services.limiter, services.settings.ready_timeout)
    return Response(
        orjson.dumps(body), status, media_type="application/json", headers={"Cache-Control": "no-store"}
    )


def readings(services: Services) -> list[metrics.Reading]:
    """The present state of this worker, for the metrics' gauges."""
    in_use, opened, most = services.db.pool_use()
    running, queued = services.passwords.load
    return [
        ("licensegate_db_connections", ("in_use",), in_use),
        ("licensegate_db_connections", ("open",), opened),
        ("licensegate_db_connections", ("max",), most),
        ("licensegate_password_checks", ("running",), running),
        ("licensegate_password_checks", ("queued",), queued),
        ("licensegate_ratelimit_calls_in_flight", (), getattr(services.limiter, "in_flight", 0)),
        ("licensegate_background_jobs_pending", (), services.background.pending + services.mailer.pending),
    ]


def outcomes(services: Services) -> list[metrics.Reading]:
    """How this worker's background jobs and e-mail went, the credits its clients spent and the
    calls named rate limits refused, for counters."""
    return [
        *(
            ("licensegate_background_jobs_total", (outcome,), count + services.mailer.outcomes[outcome])
            for outcome, count in services.background.outcomes.items()
        ),
        ("licensegate_credits_spent_total", (), services.credits_spent),
        *(
            ("licensegate_named_limit_refusals_total", (owner,), count)
            for owner, count in services.named_limit_refusals.items()
        ),
    ]


def make_snapshots(
    services: Services, counts: metrics.RequestMetrics, folder: Path | None
) -> metrics.Snapshots:
    return metrics.Snapshots(folder, counts, lambda: readings(services), lambda: outcomes(services))


async def metrics_page(request: Request) -> Response:
    """Prometheus metrics of every worker of this `serve`."""
    services: Services = request.app.state.services
    token = services.settings.metrics_token
    if token is not None:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return Response(
                "metrics need the token of LICENSEGATE_METRICS_TOKEN\n",
                status_code=401,
                media_type="text/plain",
                headers={"WWW-Authenticate": "Bearer"},
            )
    snapshots: metrics.Snapshots = request.app.state.snapshots
    text = metrics.exposition(await asyncio.to_thread(snapshots.gather))
    gauges: eventdelivery.QueueGauges = request.app.state.event_gauges
    text += await gauges.text(services.db, services.clock.now())
    return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")


async def openapi_document(request: Request) -> Response:
    return Response(openapi.document_json(), media_type="application/json")


# What the HTTP layer answers for a request no operation handles (listed in docs/api/errors.md).
NO_SUCH_PATH = ErrorCode(
    "not_found", "not_found", "There is nothing at this address.", "No route has this path."
)
METHOD_NOT_ALLOWED = ErrorCode(
    "method_not_allowed",
    "invalid",
    "This method is not allowed here.",
    "The route does not take this method.",
)
HTTP_ERROR = ErrorCode("http_error", "invalid", "{detail}", "Any other fault the HTTP layer answers.")
ROUTING_ERRORS = {404: NO_SUCH_PATH, 405: METHOD_NOT_ALLOWED}  # any other status: HTTP_ERROR


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    entry = ROUTING_ERRORS.get(exc.status_code)
    if entry is not None:
        body = failure_body(entry.message, entry.code)
    else:
        body = failure_body(str(exc.detail), HTTP_ERROR.code)
    if request.url.path.startswith("/api/") and not request.url.path.startswith("/api/seller"):
        return await client.unrouted(request, body, exc.status_code, exc.headers)
    return json_response(body, exc.status_code, exc.headers)


Endpoint = Callable[[Request], Awaitable[Response]]
# What FastPaths calls: an endpoint on the ASGI scope and `receive` (the client API's own), or a
# Starlette endpoint behind `_with_request`.
ScopeEndpoint = Callable[[Scope, Receive], Awaitable[Response]]


def _with_request(endpoint: Endpoint) -> ScopeEndpoint:
    def call(scope: Scope, receive: Receive) -> Awaitable[Response]:
        return endpoint(Request(scope, receive))

    return call


UPLOAD_BYTES_PER_SECOND = 64 * 1024  # the slowest upload a body deadline allows for


def _declared_length(scope: Scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else 0
    return 0


class BodyDeadline:
    """The `receive` of one request, with one deadline for its whole body, so a client that
    trickles a body (or stops sending one) cannot hold a connection and a task for long. The clock
    starts when the body is first asked for; past the deadline the request reads as disconnected,
    which the readers of bodies answer with 400 `incomplete_body` (the server then closes the
    connection, since the rest of the body was never read)."""

    __slots__ = ("_deadline", "_longest", "_receive", "_scope", "_seconds")

    def __init__(self, scope: Scope, receive: Receive, seconds: int, longest: int) -> None:
        self._scope = scope
        self._receive: Receive | None = receive
        self._seconds = seconds
        self._longest = longest  # bytes: a declared length beyond it earns no more time
        self._deadline: float | None = None

    async def __call__(self) -> Message:
        if self._deadline is None:
            allowance = min(_declared_length(self._scope), self._longest) / UPLOAD_BYTES_PER_SECOND
            self._deadline = asyncio.get_running_loop().time() + self._seconds + allowance
        if self._receive is None:
            return {"type": "http.disconnect"}
        try:
            async with asyncio.timeout_at(self._deadline):
                message = await self._receive()
        except TimeoutError:
            log.debug("request body not received in time (%s %s)", self._scope["method"], self._scope["path"])
            message = {"type": "http.disconnect"}
        if message["type"] == "http.disconnect":
            # Let go of the server's side at once: a refusal kept in a reference cycle (exception,
            # traceback, frames, this request) would otherwise keep the server from closing the
            # connection until the garbage collector happens to run.
            self._receive = None
        return message


class FastPaths:
    """Sends the hot routes straight to their endpoints, past Starlette's routing and middleware
    layers (about 8 microseconds a request); everything else goes through Starlette. Every
    request's body gets a deadline (`BodyDeadline`)."""

    def __init__(
        self,
        app: Starlette,
        routes: dict[str, tuple[frozenset[str], ScopeEndpoint]],
        settings: Settings,
        counts: metrics.RequestMetrics,
    ) -> None:
        self.app = app
        self.routes = routes
        self.body_timeout = settings.body_timeout
        self.longest_body = settings.max_upload_bytes
        self.counts = counts
        self.access_log = settings.access_log == "on"
        self.proxies = settings.trusted_proxies
        self.worker = os.getpid()  # built in each worker process (a system call per line otherwise)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = metrics.now()
        request_id = ""
        if self.access_log:
            request_id = ids.new_request_id()
            ids.current_request.set(request_id)  # what an unexpected fault's log line names
        status = 500  # unless an answer starts
        receive = BodyDeadline(scope, receive, self.body_timeout, self.longest_body)
        try:
            route = self.routes.get(scope["path"])
            if route is not None and scope["method"] in route[0]:
                scope["app"] = self.app  # what `request.app` reads
                response = await route[1](scope, receive)
                status = response.status_code  # the hot routes' answers: no `send` to watch
                await response(scope, receive, send)
            else:

                async def noting_status(message: Message) -> None:
                    nonlocal status
                    if message["type"] == "http.response.start":
                        status = message["status"]
                    await send(message)

                await self.app(scope, receive, noting_status)
        finally:
            self._note(scope, status, metrics.now() - started, request_id)

    def _note(self, scope: Scope, status: int, seconds: float, request_id: str) -> None:
        interface = metrics.interface_of(scope["path"])
        type_ = scope.get(metrics.TYPE_KEY, "")
        self.counts.observe(interface, type_, status, seconds)
        if self.access_log:
            line = metrics.access_line(
                request_id=request_id,
                interface=interface,
                type_=type_,
                method=scope["method"],
                path=scope["path"],
                status=status,
                seconds=seconds,
                client=client_ip(scope, self.proxies),
                worker=self.worker,
            )
            os.write(2, line)  # one write per line, so the workers' lines never interleave


def build_app(settings: Settings, services: Services | None = None) -> FastPaths:
    """With `services` given (tests), the caller owns their lifetime; otherwise each worker
    process opens its own on start-up and closes them on shutdown."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if services is not None:
            app.state.services = services
            yield
            return
        opened = await Services.open(settings)
        with contextlib.suppress(DatabaseUnavailable):  # `serve` checked it before starting workers
            await deploymentkey.check(opened.db, opened.secrets, opened.clock.now())
        app.state.services = opened
        folder = metrics.run_folder()
        snapshots = app.state.snapshots = make_snapshots(opened, counts, folder)
        # Loaded now, so that answers stay signed if the database stops answering later (from the
        # data folder's copy when the database is away now: the worker starts all the same).
        try:
            await opened.signers.deployment(opened.db, opened.clock.now())
        except Exception as exc:
            log.warning("the deployment's signing key is not loaded now (%s); will be at first need", exc)
        sweeper = asyncio.create_task(purge_expired_sessions(opened))
        silent = asyncio.create_task(end_silent_sessions(opened))
        login_counts = asyncio.create_task(write_counts(opened))
        overview_counts = asyncio.create_task(refresh_overviews(opened))
        event_deliveries = asyncio.create_task(eventworker.keep_delivering(opened))
        writer = asyncio.create_task(snapshots.keep_writing()) if folder is not None else None
        settle_heap()
        try:
            yield
        finally:
            sweeper.cancel()
            silent.cancel()
            login_counts.cancel()
            overview_counts.cancel()
            event_deliveries.cancel()
            if writer is not None:
                writer.cancel()  # it writes a last snapshot
                await asyncio.gather(writer, return_exceptions=True)
            await opened.close()

    # The hot routes: FastPaths sends them straight to their endpoints.
    hot = [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route("/readyz", readyz, methods=["GET", "HEAD"]),
        *(
            Route(path, client.endpoints[version], methods=sorted(dialect.methods))
            for version, dialect in client.DIALECTS.items()
            for path in dialect.paths
        ),
        Route("/api/seller/", seller.endpoint, methods=["GET", "POST"]),
        Route("/api/seller", seller.endpoint, methods=["GET", "POST"]),
    ]
    routes = [
        *hot,
        Route(passwordreset.PATH, reset_page, methods=["GET", "POST"]),
        Route("/openapi.json", openapi_document, methods=["GET"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        *dashboard.routes(),
        *panel.routes(),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    counts = metrics.RequestMetrics()
    app.state.request_metrics = counts
    app.state.event_gauges = eventdelivery.QueueGauges()  # per worker
    if services is not None:
        app.state.services = services
        app.state.snapshots = make_snapshots(services, counts, None)
    # The client API's endpoints read the ASGI scope themselves; the others get a Request.
    on_scope = {
        path: client.scope_endpoints[version] for version, d in client.DIALECTS.items() for path in d.paths
    }
    fast = {
        route.path: (
            frozenset(route.methods or ()),
            on_scope.get(route.path) or _with_request(route.endpoint),
        )
        for route in hot
    }
    return FastPaths(app, fast, settings, counts)


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s",
    )


def create_app() -> FastPaths:
    """The factory each server worker calls; settings come from the environment."""
    settings = Settings.from_env()
    configure_logging(settings.log_level)
    return build_app(settings)
