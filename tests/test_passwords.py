"""The password threads are shared fairly between applications: waiting checks take turns per
application, the line is bounded and shared equally when full, and past the bound a login is
refused at once (429 `busy` with Retry-After) instead of waiting without end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from licensegate.passwords import Busy, FairPool, Passwords, is_bcrypt, verify_bcrypt
from licensegate.services import Services
from tests.helpers import Seller, client_of
from tests.imported import keyauth_hash

pytestmark = pytest.mark.anyio


class Gate:
    """Work that blocks its thread until the test lets it through, recording the order."""

    def __init__(self) -> None:
        self.done: list[str] = []
        self._open = threading.Semaphore(0)

    def work(self, name: str) -> str:
        self._open.acquire()
        self.done.append(name)
        return name

    def let_through(self, count: int = 1) -> None:
        for _ in range(count):
            self._open.release()


@pytest.fixture
def gate() -> Iterator[Gate]:
    opened = Gate()
    yield opened
    opened.let_through(100)  # never leave a thread blocked


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0.01)


async def test_waiting_work_takes_turns_between_applications(gate: Gate) -> None:
    pool = FairPool(threads=1, limit=100)
    try:
        flood = [asyncio.create_task(pool.run("app-b", gate.work, f"b{i}")) for i in range(10)]
        await _settle()
        alone = asyncio.create_task(pool.run("app-a", gate.work, "a"))
        await _settle()
        gate.let_through(11)
        await asyncio.gather(*flood, alone)
        # b0 was running; the one check of app A comes next, not after app B's whole burst.
        assert gate.done[:2] == ["b0", "a"]
        assert gate.done[2:] == [f"b{i}" for i in range(1, 10)]
    finally:
        pool.close()


async def test_a_full_line_is_refused_at_once_and_shared_equally(gate: Gate) -> None:
    pool = FairPool(threads=1, limit=4)
    try:
        running = asyncio.create_task(pool.run("app-b", gate.work, "running"))
        await _settle()
        # Alone, app B may fill the whole line; one more is refused at once, with a time to retry.
        waiting = [asyncio.create_task(pool.run("app-b", gate.work, f"b{i}")) for i in range(4)]
        await _settle()
        with pytest.raises(Busy) as refused:
            await pool.run("app-b", gate.work, "one too many")
        assert refused.value.retry_after >= 1
        assert refused.value.error == "busy"
        # App A takes the place of app B's newest check, until both hold an equal share.
        joining = [asyncio.create_task(pool.run("app-a", gate.work, f"a{i}")) for i in range(2)]
        await _settle()
        with pytest.raises(Busy):
            await pool.run("app-a", gate.work, "a2")
        assert pool.in_flight == 5
        gate.let_through(5)
        outcomes = await asyncio.gather(running, *waiting, *joining, return_exceptions=True)
        refused_b = [outcome for outcome in outcomes[1:5] if isinstance(outcome, Busy)]
        assert len(refused_b) == 2  # b2 and b3 gave way
        assert outcomes[5:] == ["a0", "a1"]
        assert sorted(gate.done) == sorted(["running", "b0", "b1", "a0", "a1"])
        assert pool.in_flight == 0
        assert await asyncio.wait_for(pool.run("app-z", str, "free again"), 10) == "free again"
    finally:
        pool.close()


async def test_a_cancelled_wait_gives_its_place_back(gate: Gate) -> None:
    pool = FairPool(threads=1, limit=10)
    try:
        running = asyncio.create_task(pool.run("a", gate.work, "running"))
        await _settle()
        given_up = asyncio.create_task(pool.run("a", gate.work, "given up"))
        after = asyncio.create_task(pool.run("b", gate.work, "after"))
        await _settle()
        given_up.cancel()
        gate.let_through(2)
        await asyncio.gather(running, after)
        assert gate.done == ["running", "after"]
        assert pool.in_flight == 0
    finally:
        pool.close()


async def test_a_login_is_refused_busy_when_the_line_is_full(
    services: Services, seller: Seller, gate: Gate
) -> None:
    app = client_of(seller)
    await app.init()
    await seller.ok("adduser", user="gus", sub="default", expiry=1, **{"pass": "pw"})
    busy = Passwords(1, 64, 1, threads=1, queue_limit=1)
    services.passwords = busy
    try:
        blocker = asyncio.create_task(busy._pool.run("x", gate.work, "blocker"))  # the one thread
        waiter = asyncio.create_task(busy._pool.run("x", gate.work, "waiter"))  # the one place
        await _settle()
        refused = await app.call("login", username="gus", **{"pass": "pw"})
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"] == "busy"
        assert int(refused.headers["Retry-After"]) >= 1
        gate.let_through(2)
        await asyncio.gather(blocker, waiter)
        await app.ok("login", username="gus", **{"pass": "pw"})
    finally:
        busy.close()


def test_a_keyauth_bcrypt_hash_is_checked_as_php_made_it() -> None:
    stored = keyauth_hash("pässword")
    assert stored.startswith("$2y$10$")
    assert is_bcrypt(stored)
    assert verify_bcrypt(stored, "pässword")
    assert not verify_bcrypt(stored, "password")
    # KeyAuth trimmed and stripped tags before hashing, and did the same to what it checked.
    assert verify_bcrypt(stored, " pässword<br>\t")
    # PHP's bcrypt reads 72 bytes: a longer password was cut there when hashed, and is here.
    long = keyauth_hash("x" * 72)
    assert verify_bcrypt(long, "x" * 80)
    assert not verify_bcrypt("$2y$10$not-a-hash", "x")
    assert not is_bcrypt("$argon2id$v=19$m=64,t=1,p=1$c2FsdA$aGFzaA")


async def test_a_bcrypt_check_runs_on_the_hashing_threads() -> None:
    passwords = Passwords(1, 64, 1, 1)
    try:
        stored = keyauth_hash("pw")
        on_loop = threading.get_ident()
        seen: list[int] = []
        original = passwords._verify

        def spy(stored_hash: str, password: str) -> bool:
            seen.append(threading.get_ident())
            return original(stored_hash, password)

        passwords._verify = spy  # type: ignore[method-assign]
        assert await passwords.verify(stored, "pw")
        assert not await passwords.verify(stored, "wrong")
        assert seen
        assert on_loop not in seen
    finally:
        passwords.close()
