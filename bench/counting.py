"""What counting for the overview costs a License Login, measured in one process (CPU only, no
network, SQLite).

Runs License Logins through the ASGI application (called directly, in process CPU time), in
alternating batches with the overview's counting as shipped and with it switched off (a tally
that counts nothing; no counter written when a key is redeemed and its user made): re-checks of a
known user, and first uses of fresh keys (which create the user and redeem the key). The fastest
batch of each kind is compared. The figures in docs/benchmarks.md come from here.

    .venv/bin/python bench/counting.py [--calls 200] [--rounds 30]
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import make_settings  # noqa: E402
from tests.databases import create_sqlite_template, sqlite_copy  # noqa: E402

from bench.signing import _discard, _receive, _scope, fastest, logged_in  # noqa: E402
from licensegate.app import build_app  # noqa: E402
from licensegate.domain.overview import LoginTally  # noqa: E402
from licensegate.services import Services  # noqa: E402
from licensegate.store import overview as counters  # noqa: E402


class NoTally(LoginTally):
    """Counts nothing: the same call without the overview's counting."""

    def count(self, app_id: int, now: int, outcome: str) -> None:
        return None


async def _no_bump(*_args: Any) -> None:
    return None


async def measure(calls: int, rounds: int) -> dict[str, list[float]]:
    folder = Path(tempfile.mkdtemp(prefix="lgcount"))
    url = sqlite_copy(create_sqlite_template(folder), folder / "bench.db")
    services = await Services.open(make_settings(url, folder / "data"))
    results: dict[str, list[float]] = {}
    real_tally, real_bump = services.logins, counters.bump
    try:
        transport = httpx.ASGITransport(app=build_app(services.settings, services))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            login, sellerkey = await logged_in(services, http)

            async def keys(amount: int) -> list[str]:
                made: list[str] = []
                while len(made) < amount:
                    batch = min(100, amount - len(made))  # the most one call makes
                    answer = await http.get(
                        "/api/seller/",
                        params={"sellerkey": sellerkey, "type": "add", "expiry": "30", "amount": str(batch)},
                    )
                    body = answer.json()
                    made += list(body["keys"]) if "keys" in body else [body["key"]]
                return made

            fresh = await keys(calls * rounds * 2)
            app = build_app(services.settings, services)
            for batch in range(rounds):
                # Which kind goes first alternates too, and each batch starts without garbage
                # left by the one before, so neither kind is favoured by its place.
                for counting in (True, False) if batch % 2 == 0 else (False, True):
                    gc.collect()
                    services.logins = real_tally if counting else NoTally()
                    counters.bump = real_bump if counting else _no_bump  # type: ignore[assignment]
                    label = "counting" if counting else "not counting"
                    scope = _scope("/api/1.0/", urlencode(login))
                    started = time.process_time()
                    for _ in range(calls):
                        await app(dict(scope), _receive, _discard)
                    spent = (time.process_time() - started) / calls * 1e6
                    results.setdefault(f"re-check {label}", []).append(spent)
                    first = [
                        _scope("/api/1.0/", urlencode({**login, "key": fresh.pop()})) for _ in range(calls)
                    ]
                    started = time.process_time()
                    for one in first:
                        await app(one, _receive, _discard)
                    spent = (time.process_time() - started) / calls * 1e6
                    results.setdefault(f"first use {label}", []).append(spent)
            await real_tally.flush(services.db)
            written = await services.db.fetch_value(
                "SELECT SUM(count) FROM daily_counts WHERE kind = 'login' AND outcome = 'success'"
            )
            assert written == 1 + 2 * calls * rounds, written  # the counted half, and the set-up login
    finally:
        services.logins, counters.bump = real_tally, real_bump
        await services.close()
    return results


def main() -> int:
    best = fastest(measure, __doc__, 30)
    for kind in ("re-check", "first use"):
        on, off = best[f"{kind} counting"], best[f"{kind} not counting"]
        print(
            f"License Login {kind}: {off:.1f} us without counting, {on:.1f} us with it: "
            f"{100 * (on - off) / off:+.1f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
