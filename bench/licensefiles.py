"""What a signed license file costs (issue 21), measured in one process (CPU only, no network,
SQLite): issuing one (Get License File) against a License Login re-check of the same user in the
same run, in alternating batches, and verifying one offline with `licensegate_client.client`. Prints
microseconds of process CPU per call and what that is per second of one core. The figures in
docs/benchmarks.md come from here.

    .venv/bin/python bench/licensefiles.py [--calls 200] [--rounds 20]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from bench.signing import _discard, _receive, _scope, fastest, logged_in, open_services  # noqa: E402
from licensegate.app import build_app  # noqa: E402
from licensegate_client import client as lg  # noqa: E402

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


async def measure(calls: int, rounds: int) -> dict[str, list[float]]:
    services = await open_services("lgfiles")
    results: dict[str, list[float]] = {}
    try:
        app = build_app(services.settings, services)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as http:
            login, sellerkey = await logged_in(services, http)
            seller = {"sellerkey": sellerkey}
            await http.get("/api/seller/", params={**seller, "type": "setlicensefiles", "cooldown": "0"})
            for name in ("export", "pro"):  # a file with entitlements, as a seller's would have
                await http.get("/api/seller/", params={**seller, "type": "addentitlement", "code": name})
                await http.get(
                    "/api/seller/",
                    params={**seller, "type": "attachentitlement", "code": name, "sub": "default"},
                )
            ask = {key: login[key] for key in ("ownerid", "name", "sessionid")} | {"type": "licensefile"}
            text = (await http.post("/api/1.0/", params=ask)).json()["file"]
            keys = (await http.get("/api/seller/", params={**seller, "type": "fetchlicensekeys"})).json()[
                "keys"
            ]
            trusted = {item["kid"]: item["public_key"] for item in keys}
            kinds = {"License Login re-check": login, "Get License File": ask}
            for _batch in range(rounds):
                for kind, params in kinds.items():
                    scope = _scope("/api/1.0/", urlencode(params))
                    started = time.process_time()
                    for _ in range(calls):
                        await app(dict(scope), _receive, _discard)
                    results.setdefault(kind, []).append((time.process_time() - started) / calls * 1e6)
                started = time.process_time()
                for _ in range(calls):
                    lg.verify_license_file(text, trusted, ownerid=login["ownerid"], name="b", hwid=HWID)
                results.setdefault("verify offline", []).append((time.process_time() - started) / calls * 1e6)
            issued = await services.db.fetch_value("SELECT COUNT(*) FROM license_files")
            assert issued > rounds * calls, issued  # every Get License File issued one
    finally:
        await services.close()
    return results


def main() -> int:
    fastest_batch = fastest(measure, __doc__, 20)
    for kind, micros in fastest_batch.items():
        print(f"{kind}: {micros:.0f} us of CPU per call, {1e6 / micros:,.0f} per second of one core")
    ratio = fastest_batch["Get License File"] / fastest_batch["License Login re-check"]
    print(f"issuing a file costs {ratio:.2f} License Login re-checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
