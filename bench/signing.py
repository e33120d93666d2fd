"""What signing costs a License Login, measured in one process (CPU only, no network, SQLite).

Runs License Login re-checks through the ASGI application (called directly, so only the
service's own work is timed, in process CPU time), in turns with the real Ed25519 signer
and with a stand-in that signs nothing, on `/api/1.0/` and `/api/1.3/`, and prints microseconds per
call and the share signing takes. The figure in docs/benchmarks.md comes from here.

    .venv/bin/python bench/signing.py [--calls 200] [--rounds 40]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import make_settings  # noqa: E402
from tests.databases import create_sqlite_template, sqlite_copy  # noqa: E402

from licensegate import signing  # noqa: E402
from licensegate.app import build_app  # noqa: E402
from licensegate.domain.apps import create_application  # noqa: E402
from licensegate.services import Services  # noqa: E402

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


def _scope(path: str, query: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": [(b"host", b"bench")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _discard(message: MutableMapping[str, Any]) -> None:
    return None


class Unsigned(signing.Signer):
    """A signer that does no work: what the same call costs without a signature."""

    def sign(self, message: bytes) -> str:
        return "0" * 128


async def open_services(prefix: str) -> Services:
    """The services over a new migrated SQLite database, with no per-address or per-session
    limit (a benchmark's calls come from one address and one session)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    url = sqlite_copy(create_sqlite_template(folder), folder / "bench.db")
    unlimited = 10**9
    return await Services.open(
        make_settings(url, folder / "data", client_address_limit=unlimited, client_session_limit=unlimited)
    )


async def measure(calls: int, rounds: int) -> dict[str, list[float]]:
    services = await open_services("lgsign")
    results: dict[str, list[float]] = {}
    try:
        transport = httpx.ASGITransport(app=build_app(services.settings, services))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            login, _sellerkey = await logged_in(services, http)
            app = build_app(services.settings, services)
            real = services.signers.signer
            unsigned = Unsigned(b"\0" * 32)
            for _batch in range(rounds):
                for signed in (True, False):
                    services.signers.signer = real if signed else (lambda sealed: unsigned)  # type: ignore[method-assign]
                    for version in ("1.0", "1.3"):
                        scope = _scope(f"/api/{version}/", urlencode(login))
                        started = time.process_time()
                        for _ in range(calls):
                            await app(dict(scope), _receive, _discard)
                        spent = (time.process_time() - started) / calls * 1e6
                        results.setdefault(f"{version} {'signed' if signed else 'unsigned'}", []).append(
                            spent
                        )
            services.signers.signer = real  # type: ignore[method-assign]
    finally:
        await services.close()
    return results


async def logged_in(services: Services, http: httpx.AsyncClient) -> tuple[dict[str, str], str]:
    """An application without rate limits and a License Login that succeeded: the login's
    parameters (to repeat it) and the application's seller key."""
    created = await create_application(
        services.db, services.secrets, owner="o", name="b", now=services.clock.now()
    )
    await services.db.execute("UPDATE apps SET client_rate_limit = 1000000000, auth_rate_limit = 1000000000")
    base = {"ownerid": created.ownerid, "name": "b"}
    key = (
        await http.get("/api/seller/", params={"sellerkey": created.sellerkey, "type": "add", "expiry": "30"})
    ).json()["key"]
    session = (await http.post("/api/1.0/", params={**base, "type": "init"})).json()["sessionid"]
    login = {**base, "type": "license", "sessionid": session, "key": key, "hwid": HWID}
    assert (await http.post("/api/1.0/", params=login)).json()["success"]
    return login, created.sellerkey


def fastest(
    measure: Callable[[int, int], Coroutine[Any, Any, dict[str, list[float]]]], doc: str | None, rounds: int
) -> dict[str, float]:
    """Run `measure(calls, rounds)` with the command line's numbers; the fastest batch of each kind.

    Batches alternate, and the fastest batch of each kind is the one least disturbed by whatever
    else the machine was doing: the figure compared."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--calls", type=int, default=200, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=rounds, help="batches of each kind")
    args = parser.parse_args()
    results = asyncio.run(measure(args.calls, args.rounds))
    return {name: min(values) for name, values in results.items()}


def main() -> int:
    medians = fastest(measure, __doc__, 40)
    for version in ("1.0", "1.3"):
        signed, unsigned = medians[f"{version} signed"], medians[f"{version} unsigned"]
        print(
            f"/api/{version}/ License Login re-check: {signed:.0f} us signed, {unsigned:.0f} us unsigned: "
            f"signing is {100 * (signed - unsigned) / signed:.1f}% of the call"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
