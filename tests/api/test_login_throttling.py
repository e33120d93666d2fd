"""Sign-in throttling: per address across usernames and keys, per user across addresses (a
lock-out the user's own machine passes and the owner lifts), and wrong seller keys per address.
Each test runs with the in-process counters and with Redis."""

from __future__ import annotations

from pathlib import Path

import pytest

from licensegate.clock import MovableClock
from tests.api.test_client_rate_limits import Addresses, limited
from tests.helpers import SELLER_PATH, Client

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
PASSWORD = "correct horse battery"


@pytest.fixture(params=["memory", "redis"])
def limiter_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def creds(username: str, password: str, **more: str) -> dict[str, str]:
    return {"username": username, "pass": password, **more}


async def registered(addresses: Addresses, username: str = "alice") -> Client:
    """A user with a password and HWID, logged in once from 198.51.100.10 (their last address)."""
    key = (await addresses.seller.ok("add", expiry=30))["key"]
    program = addresses.client("198.51.100.10")
    await program.init()
    await program.ok("register", key=key, hwid=HWID, **creds(username, PASSWORD))
    return program


async def attempt(
    addresses: Addresses, ip: str, username: str, password: str, hwid: str = ""
) -> tuple[int, str]:
    program = addresses.client(ip)
    await program.init()
    params = creds(username, password) | ({"hwid": hwid} if hwid else {})
    response = await program.call("login", **params)
    return response.status_code, response.json()["error"] if response.status_code != 200 else "ok"


async def test_one_address_is_limited_across_usernames_and_keys(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    async with limited(db_url, tmp_path, limiter_backend, login_address_limit=5) as (_, addresses):
        program = addresses.client("198.51.100.66")
        await program.init()
        seen = [
            (await program.call("login", **creds(f"random-{n}", "guess"))).json()["error"] for n in range(3)
        ]
        seen += [(await program.call("license", key=f"RANDOM-KEY-{n}")).json()["error"] for n in range(2)]
        assert seen == ["invalid_credentials"] * 3 + ["key_not_found"] * 2
        refused = await program.call("license", key="RANDOM-KEY-9")
        assert (refused.status_code, refused.json()["error"]) == (
            403,
            "rate_limited",
        )  # 1.0 License Login: no 429
        refused = await program.call("login", **creds("random-9", "guess"))
        assert (refused.status_code, refused.json()["error"]) == (429, "rate_limited")
        assert int(refused.headers["Retry-After"]) > 0
        # Another address is not held back.
        assert await attempt(addresses, "198.51.100.67", "random-10", "guess") == (403, "invalid_credentials")


async def test_successful_sign_ins_behind_one_shared_address_are_not_limited(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    """Many users behind one address (a company, a carrier's NAT) keep signing in: only refused
    attempts count against the address."""
    async with limited(db_url, tmp_path, limiter_backend, login_address_limit=3) as (_, addresses):
        await registered(addresses)
        for _ in range(6):
            assert await attempt(addresses, "198.51.100.10", "alice", PASSWORD, HWID) == (200, "ok")
        for n in range(3):
            assert await attempt(addresses, "198.51.100.10", f"random-{n}", "guess") == (
                403,
                "invalid_credentials",
            )
        assert await attempt(addresses, "198.51.100.10", "alice", PASSWORD, HWID) == (429, "rate_limited")


async def test_wrong_passwords_from_many_addresses_lock_the_user_and_the_lock_doubles(
    db_url: str, tmp_path: Path, limiter_backend: str, clock: MovableClock
) -> None:
    async with limited(db_url, tmp_path, limiter_backend, clock) as (services, addresses):
        await registered(addresses)
        failures = services.settings.login_lock_failures
        for n in range(failures):  # each from its own address: per-address limits never trigger
            assert await attempt(addresses, f"203.0.113.{n + 1}", "alice", "wrong") == (
                403,
                "invalid_credentials",
            )
        program = addresses.client("203.0.113.200")
        await program.init()
        locked = await program.call("login", **creds("alice", PASSWORD))
        assert (locked.status_code, locked.json()["error"]) == (429, "rate_limited")
        assert 0 < int(locked.headers["Retry-After"]) <= services.settings.login_lock_seconds
        data = await addresses.seller.ok("userdata", user="alice")
        assert (data["failed_logins"], data["lockouts"]) == (0, 1)
        assert int(data["locked_until"]) == clock.now() + services.settings.login_lock_seconds

        clock.advance(services.settings.login_lock_seconds)  # the lock ends by itself
        for n in range(failures):
            await attempt(addresses, f"203.0.114.{n + 1}", "alice", "wrong")
        locked = await program.call("login", **creds("alice", PASSWORD))
        assert locked.status_code == 429
        assert int(locked.headers["Retry-After"]) == 2 * services.settings.login_lock_seconds

        clock.advance(2 * services.settings.login_lock_seconds)
        assert await attempt(addresses, "203.0.113.201", "alice", PASSWORD, HWID) == (200, "ok")
        data = await addresses.seller.ok("userdata", user="alice")
        assert (data["failed_logins"], data["locked_until"], data["lockouts"]) == (0, None, 0)


async def test_the_users_own_machine_and_the_owner_get_past_a_lock(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    async with limited(db_url, tmp_path, limiter_backend, login_lock_failures=3) as (_, addresses):
        await registered(addresses)
        for n in range(3):
            await attempt(addresses, f"203.0.113.{n + 1}", "alice", "wrong")
        assert await attempt(addresses, "203.0.113.50", "alice", PASSWORD) == (429, "rate_limited")
        # Their HWID (from anywhere), or their last login's address, is still checked.
        assert await attempt(addresses, "203.0.113.50", "alice", "wrong", HWID) == (
            403,
            "invalid_credentials",
        )
        # From the last login's address, without an HWID: past the lock (a right password clears
        # it), so the application's HWID lock answers next.
        assert await attempt(addresses, "198.51.100.10", "alice", PASSWORD) == (403, "hwid_mismatch")
        assert (await addresses.seller.ok("userdata", user="alice"))["locked_until"] is None
        for n in range(3):
            await attempt(addresses, f"203.0.113.{n + 1}", "alice", "wrong")
        assert await attempt(addresses, "203.0.113.50", "alice", PASSWORD) == (429, "rate_limited")
        assert await attempt(addresses, "203.0.113.51", "alice", PASSWORD, HWID) == (200, "ok")
        # The owner lifts a lock.
        for n in range(3):
            await attempt(addresses, f"203.0.113.{n + 1}", "alice", "wrong")
        assert (await addresses.seller.ok("userdata", user="alice"))["locked_until"] is not None
        await addresses.seller.ok("unlockuser", user="alice")
        assert (await addresses.seller.ok("userdata", user="alice"))["locked_until"] is None
        # Past the lock from anywhere now (the HWID lock answers for a machine not theirs).
        assert await attempt(addresses, "203.0.113.50", "alice", PASSWORD) == (403, "hwid_mismatch")
        await addresses.seller.fails("unlockuser", 404, "user_not_found", user="nobody")


async def test_an_unknown_username_is_refused_as_a_locked_one_is(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    async with limited(db_url, tmp_path, limiter_backend, login_lock_failures=3) as (_, addresses):
        for n in range(3):
            assert await attempt(addresses, f"203.0.113.{n + 1}", "ghost", "wrong") == (
                403,
                "invalid_credentials",
            )
        assert await attempt(addresses, "203.0.113.50", "ghost", "any") == (429, "rate_limited")


async def test_wrong_seller_keys_are_limited_per_address(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    async with limited(db_url, tmp_path, limiter_backend, seller_key_failures=3) as (_, addresses):
        guesser = addresses.http("198.51.100.66")
        right = addresses.seller.key
        wrong = [
            ("0" * 32, "unknown_seller_key"),
            ("not a key", "invalid_seller_key"),
            ("f" * 32, "unknown_seller_key"),
        ]
        for _ in range(5):  # a missing key is no guess, and is not counted
            missing = await guesser.get(SELLER_PATH, params={"type": "setseller"})
            assert missing.json()["error"] == "missing_seller_key"
        for key, error in wrong:
            answer = await guesser.get(SELLER_PATH, params={"sellerkey": key, "type": "setseller"})
            assert answer.json()["error"] == error
        # From here on even the right key is refused from this address until the window ends.
        refused = await guesser.get(SELLER_PATH, params={"sellerkey": right, "type": "setseller"})
        assert (refused.status_code, refused.json()["error"]) == (429, "rate_limited")
        assert int(refused.headers["Retry-After"]) > 0
        other = addresses.http("198.51.100.67")
        assert (
            await other.get(SELLER_PATH, params={"sellerkey": right, "type": "setseller"})
        ).status_code == 200
