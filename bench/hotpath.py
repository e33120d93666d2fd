"""Where a client call's microseconds go, measured in one process (CPU only, no network, SQLite).

Calls the ASGI application directly (so only the service's own work is timed, in process CPU
time) for `/healthz`, `init`, a License Login re-check on `/api/1.0/` and `/api/1.3/` (parameters
in the query string, as `bench/run.py` sends them, and on 1.3 also in a form body, as KeyAuth's
libraries do), and `check`,
each with the real Ed25519 signer and with a stand-in that signs nothing, in alternating batches;
the fastest batch of each kind is the figure (the one least disturbed by whatever else the machine
was doing). Then each call once more under cProfile, its time grouped by stage (the module that
spends it; a C function such as `sqlite3`'s `execute` or libsodium's signing counts for the module
that called it), printed as shares and as microseconds of the unprofiled figure. The profiler
inflates small Python functions more than C calls, so the split is a guide, the totals are not.
The figures in docs/benchmarks.md come from here.

    .venv/bin/python bench/hotpath.py [--calls 500] [--rounds 10] [--no-stages] [--profile CALL]
    .venv/bin/python bench/hotpath.py --users 1000000 --no-stages   # on a seeded database

`--users N` seeds N users straight in SQL first (bench/seed.py, as `bench/run.py` does) and has
the re-checks and checks ask for `--hot` of the seeded sessions in turn, drawn from the whole
seed, so that the figures say what the size of the database costs a call (the B-tree levels
and the pages 1,000 sessions spread over), apart from the HTTP stack and the other worker.

`--profile CALL` (one of the calls' names, e.g. "re-check 1.0") also prints that call's
functions under cProfile, by their own time (what the stages are made of).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import seed as seeding  # noqa: E402
from bench.signing import Unsigned, _discard, _receive, _scope, logged_in, open_services  # noqa: E402
from licensegate.app import FastPaths, build_app  # noqa: E402
from licensegate.services import Services  # noqa: E402

CALLS = ("healthz", "init", "re-check 1.0", "re-check 1.3", "re-check 1.3 (form body)", "check")

# A stage, by the path of the module that spends the time (first match wins).
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SQL (store/, sqlite3)", ("licensegate/store/", "sqlite3")),
    ("signing (libsodium and glue)", ("nacl/", "_sodium", "licensegate/signing.py", "licensegate_client/")),
    ("reading the request", ("licensegate/api/request.py", "licensegate/bodies.py", "starlette/requests")),
    ("rate limits", ("licensegate/ratelimit.py", "licensegate/addresses.py")),
    ("declarations (lookup, validation)", ("licensegate/operations/declarations.py",)),
    ("handlers (operations/client/)", ("licensegate/operations/",)),
    ("domain rules (domain/)", ("licensegate/domain/",)),
    ("envelope and answer", ("licensegate/api/envelope.py", "licensegate/api/client/answers", "orjson")),
    ("endpoint", ("licensegate/api/client/",)),
    ("app, metrics, access log", ("licensegate/app.py", "licensegate/metrics.py")),
    ("caches, clock, ids, services", ("licensegate/",)),
    ("sending (starlette)", ("starlette/",)),
    ("asyncio, contextlib", ("asyncio", "contextlib")),
)
OTHER = "other (Python runtime)"

Func = tuple[str, int, str]


def _stage_of(func: Func) -> str | None:
    path, _line, name = func
    where = path if path != "~" else name
    for stage, marks in STAGES:
        if any(mark in where for mark in marks):
            return stage
    return None


def stages(profile: cProfile.Profile) -> dict[str, float]:
    """Seconds of own time per stage; a C function's counts for the stage of its largest caller."""
    raw: dict[Func, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    spent: dict[str, float] = {}
    for func, (_cc, _nc, own, _cum, callers) in raw.items():
        stage = _stage_of(func)
        if func[0] == "~" and stage in (None, "asyncio, contextlib") and callers:
            caller = max(callers.items(), key=lambda item: item[1][3])[0]
            stage = _stage_of(caller) or stage
        stage = stage or OTHER
        spent[stage] = spent.get(stage, 0.0) + own
    return spent


def scopes(login: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The request of each call measured, as an ASGI scope (its body, if any, under `BODY`)."""
    app_params = {"ownerid": login["ownerid"], "name": login["name"]}
    healthz = _scope("/healthz", "")
    healthz["method"] = "GET"
    return {
        "healthz": healthz,
        "init": _scope("/api/1.0/", urlencode({**app_params, "type": "init"})),
        "re-check 1.0": _scope("/api/1.0/", urlencode(login)),
        "re-check 1.3": _scope("/api/1.3/", urlencode(login)),
        "re-check 1.3 (form body)": _form("/api/1.3/", urlencode(login)),
        "check": _scope(
            "/api/1.0/", urlencode({**app_params, "type": "check", "sessionid": login["sessionid"]})
        ),
    }


BODY = "bench.body"


def _form(path: str, body: str) -> dict[str, Any]:
    """A POST with its parameters in a form body, as KeyAuth's libraries send them."""
    scope = _scope(path, "")
    encoded = body.encode()
    scope["headers"] = [
        (b"host", b"bench"),
        (b"content-type", b"application/x-www-form-urlencoded"),
        (b"content-length", str(len(encoded)).encode()),
    ]
    scope[BODY] = encoded
    return scope


Requests = dict[str, list[dict[str, Any]]]  # each call's requests, sent in turn


async def _run(app: FastPaths, scopes: list[dict[str, Any]], calls: int) -> None:
    if scopes[0].get(BODY) is None:
        for i in range(calls):
            await app(dict(scopes[i % len(scopes)]), _receive, _discard)
        return
    receivers = [_receiver(scope[BODY]) for scope in scopes]
    for i in range(calls):
        await app(dict(scopes[i % len(scopes)]), receivers[i % len(scopes)], _discard)


def _receiver(body: bytes) -> Callable[[], Awaitable[dict[str, Any]]]:
    """An ASGI `receive` that gives the whole body at once."""
    message = {"type": "http.request", "body": body, "more_body": False}

    async def receive() -> dict[str, Any]:
        return message

    return receive


async def seeded_logins(
    services: Services, login: dict[str, str], users: int, hot: int
) -> list[dict[str, str]]:
    """`users` users seeded in the logged-in application (bench/seed.py); the License Login
    parameters of `hot` of their logged-in sessions, drawn from the whole seed."""
    url, data_dir = services.settings.database_url, services.settings.data_dir
    app_id = await asyncio.to_thread(seeding.app_id_of, url, login["ownerid"])
    seeded = await asyncio.to_thread(seeding.seed, url, data_dir, app_id, users)
    print(f"seeded {users:,} users in {seeded.seconds:.1f} s", file=sys.stderr)
    return [
        {**login, "sessionid": session, "key": key, "hwid": hwid}
        for session, key, hwid in seeding.hot_sample(seeded, hot)
    ]


def requests_of(logins: list[dict[str, str]]) -> Requests:
    """Each call's requests: the re-checks and checks over every login given, in turn."""
    many = [scopes(login) for login in logins]
    return {
        name: [each[name] for each in many] if name.startswith(("re-check", "check")) else [many[0][name]]
        for name in many[0]
    }


def _signing(services: Services, signed: bool) -> None:
    """The real signer, or the stand-in that signs nothing."""
    if signed:
        vars(services.signers).pop("signer", None)  # the class's own method again
    else:
        unsigned = Unsigned(b"\0" * 32)
        services.signers.signer = lambda sealed: unsigned  # type: ignore[method-assign]


async def measure(
    calls: int, rounds: int, with_stages: bool, profiled: str | None = None, users: int = 0, hot: int = 1000
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The fastest batch of each call (signed and unsigned), in microseconds per call; and the
    seconds per stage of each signed call under the profiler. `users`: seeded first, the
    re-checks and checks then asking for `hot` of their sessions in turn (0: one login's)."""
    services = await open_services("lghot")
    best: dict[str, float] = {}
    split: dict[str, dict[str, float]] = {}
    try:
        transport = httpx.ASGITransport(app=build_app(services.settings, services))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            login, _sellerkey = await logged_in(services, http)
        logins = await seeded_logins(services, login, users, hot) if users else [login]
        app = build_app(services.settings, services)
        requests = requests_of(logins)
        for scope in requests.values():
            await _run(app, scope, max(200, len(scope)))  # warm: caches filled, code paths taken once
        for _round in range(rounds):
            for signed in (True, False):
                _signing(services, signed)
                for name, scope in requests.items():
                    started = time.process_time()
                    await _run(app, scope, calls)
                    spent = (time.process_time() - started) / calls * 1e6
                    kind = name if signed else f"{name} unsigned"
                    best[kind] = min(best.get(kind, spent), spent)
        _signing(services, True)
        if with_stages:
            for name, scope in requests.items():
                profile = cProfile.Profile(time.process_time)  # CPU: what other load takes is not counted
                profile.enable()
                await _run(app, scope, calls)
                profile.disable()
                split[name] = stages(profile)
        if profiled is not None:
            profile = cProfile.Profile(time.process_time)
            profile.enable()
            await _run(app, requests[profiled], calls)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(45)
    finally:
        await services.close()
    return best, split


def report(best: dict[str, float], split: dict[str, dict[str, float]], out: Callable[[str], None]) -> None:
    out("| call | signed µs | unsigned µs | signing's share |")
    out("|---|---|---|---|")
    for name in CALLS:
        signed, unsigned = best[name], best[f"{name} unsigned"]
        share = 100 * (signed - unsigned) / signed if name != "healthz" else 0.0
        out(f"| {name} | {signed:.1f} | {unsigned:.1f} | {share:.0f}% |")
    if not split:
        return
    names = [name for name in CALLS if name != "healthz"]
    order = [stage for stage, _marks in STAGES] + [OTHER]
    out("")
    out("Per stage, µs of the signed figure (share under the profiler × the figure):")
    out("")
    out("| stage | " + " | ".join(names) + " |")
    out("|---|" + "---|" * len(names))
    for stage in order:
        cells = []
        for name in names:
            total = sum(split[name].values())
            cells.append(f"{best[name] * split[name].get(stage, 0.0) / total:.1f}")
        if any(cell != "0.0" for cell in cells):
            out(f"| {stage} | " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=10, help="batches of each kind")
    parser.add_argument("--no-stages", action="store_true", help="skip the profiled split")
    parser.add_argument("--profile", choices=CALLS, help="print this call's functions by own time")
    parser.add_argument("--users", type=int, default=0, help="users to seed first (0: none)")
    parser.add_argument(
        "--hot", type=int, default=1000, help="seeded sessions the re-checks and checks ask for"
    )
    args = parser.parse_args()
    best, split = asyncio.run(
        measure(args.calls, args.rounds, not args.no_stages, args.profile, args.users, args.hot)
    )
    report(best, split, print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
