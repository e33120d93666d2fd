"""Reading a KeyAuth application through its seller API, against the loopback stand-in: every
list mapped to KeyAuth's records, the 520-row user cap worked around, 429s waited out, and a read
stopped half way resumed to the same result without asking a finished step again."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from licensegate.config import Settings
from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport.checkpoint import Checkpoint, CheckpointError
from licensegate.domain.keyauthimport.pacing import Pace, Pacer
from licensegate.domain.keyauthimport.sellerapi import SellerApiSource, default_checkpoint, read_seller_api
from licensegate.domain.keyauthimport.sellerread import LISTS, ReadStats, SellerApiError, SellerApiReader
from tests import keyauth_standin as ka

LOCAL = Settings(outbound_allow=("127.0.0.1",))
FAST = Pace(1000, 0)


async def no_wait(_seconds: float) -> None:
    pass


def read(
    standin: ka.Standin,
    path: Path,
    *,
    resume: bool = False,
    sleep: Any = no_wait,
    key: str | None = None,
    url: str | None = None,
) -> tuple[SellerApiSource, ReadStats]:
    seller_key = key or standin.app.sellerkey
    with ka.serving(standin) as served:
        reading = read_seller_api(
            LOCAL,
            seller_key,
            checkpoint=path,
            resume=resume,
            now=1_800_000_000,
            base_url=url or served,
            pace=FAST,
            sleep=sleep,
        )
        return asyncio.run(reading)


def everything(source: SellerApiSource) -> dict[str, list[Any]]:
    app = next(source.apps())
    found: dict[str, list[Any]] = {"apps": [app]}
    for kind, table in r.TABLES.items():
        found[table] = list(source.rows(kind, app.secret))
    found["warnings"] = source.warnings(app.secret)
    return found


@pytest.fixture
def app() -> ka.StandinApp:
    return ka.generate(users=40, keys=30)


def test_every_list_becomes_records(app: ka.StandinApp, tmp_path: Path) -> None:
    standin = ka.Standin(app, cap=25)
    source, stats = read(standin, tmp_path / "read.checkpoint")
    got = everything(source)
    [imported] = got["apps"]
    assert (imported.name, imported.ownerid, imported.secret, imported.sellerkey, imported.ver) == (
        app.name,
        app.ownerid,
        app.secret,
        app.sellerkey,
        app.version,
    )
    assert imported.columns["hwidcheck"] == 1
    assert imported.columns["keynotfound"] == "Invalid license key"
    assert imported.columns["cooldown"] == 604800
    assert imported.columns["download"] == app.settings["download"]
    assert source.read_at == 1_800_000_000

    assert [(s.name, s.level) for s in got["subscriptions"]] == [("default", "1"), ("premium", "2")]
    keys = {k.key: k for k in got["keys"]}
    assert len(keys) == len(app.keys)
    for row in app.keys:
        key = keys[row["key"]]
        assert (key.status, key.usedby, key.level, key.expires, key.banned, key.note) == (
            row["status"],
            row["usedby"],
            row["level"],
            int(row["expires"]),
            row["banned"],
            row["note"],
        )
        assert key.gendate == int(row["gendate"])
        assert key.usedon == row["usedon"]

    # Every user, not only fetchallusers' capped 25; the capped ones keep their hashes.
    users = {u.username: u for u in got["users"]}
    assert list(users) == [u["username"] for u in app.users]
    for index, row in enumerate(app.users):
        user = users[row["username"]]
        assert (user.hwid, user.ip, user.createdate) == (row["hwid"], row["ip"], int(row["createdate"]))
        if index < 25:
            assert (user.password, user.email, user.banned) == (row["password"], row["email"], row["banned"])
        else:  # userdata (2022) gives no hash and no ban: never "first login sets it"
            assert user.password == r.UNREADABLE_PASSWORD
            assert user.email is None

    # Subscriptions: userdata's active ones; every row (paused and expired too) of the users with
    # none active or a paused key, through usersub.
    now = standin.now()
    suspects = set(standin.suspects())
    expected = sorted(
        (s.user, s.subscription, s.expiry, s.paused)
        for s in app.subs
        if s.user in suspects or (not s.paused and s.expiry > now)
    )
    assert sorted((s.user, s.subscription, s.expiry, s.paused) for s in got["subs"]) == expected
    assert any(s.paused for s in got["subs"])  # paused ones kept, their remaining seconds as expiry

    assert {(v.user, v.name, v.data, v.readOnly) for v in got["uservars"]} == {
        (v["user"], v["name"], v["data"], False) for v in app.uservars
    }
    assert [(v.varid, v.msg, v.authed) for v in got["vars"]] == [
        ("motd", "Welcome back", True),
        ("latest", app.vars[1]["msg"], True),
    ]
    assert [(f.id, f.url) for f in got["files"]] == [(f["id"], f["url"]) for f in app.files]
    [hook] = got["webhooks"]
    assert (hook.webid, hook.full_url, hook.baselink) == (app.webhooks[0]["webid"], False, "example.com/...")
    assert {(b.type, b.hwid, b.ip) for b in got["bans"]} == {
        (b["type"], b["hwid"], b["ip"]) for b in app.bans
    }
    assert [(c.name, c.delay) for c in got["chats"]] == [("general", 5), ("support", 30)]
    assert [(m.user, m.time) for m in got["chatmutes"]] == [(m["user"], m["time"]) for m in app.mutes]
    assert [(b.text, b.value) for b in got["buttons"]] == [("Open loader", "open")]
    assert [(t.username, t.role, t.balance, t.keylevels, t.permissions) for t in got["accounts"]] == [
        ("reseller1", "Reseller", "5|0|2|0|0|1|0", "1|2", None),
        ("manager1", "Manager", None, None, 2047),
    ]
    assert [(x.logdate, x.logdata) for x in got["logs"]] == [
        (int(x["logdate"]), x["logdata"]) for x in app.logs
    ]
    assert got["whitelist"] == got["tokens"] == got["chatmsgs"] == []

    warnings = "\n".join(got["warnings"])
    assert "whitelist" in warnings
    assert "tokens" in warnings
    assert "chat messages" in warnings
    assert "the other 15 users were read one by one" in warnings
    assert "no password hash for 15" in warnings
    assert "its key is paused" not in warnings  # usersub gave them
    assert (
        f"{len(suspects)} users with no active subscription or a paused key were read with usersub"
        in warnings
    )
    assert f"Webhook {hook.webid}" in warnings
    assert "imported disabled" in warnings
    assert "2 global variables need a login" in warnings

    # One request per list and per user, nothing asked twice.
    assert standin.answered == standin.steps(LISTS)
    assert stats == ReadStats(requests=len(standin.answered), rate_limited=0, resumed_steps=0)


def test_newer_shapes(app: ka.StandinApp, tmp_path: Path) -> None:
    """`{username}` objects, nested getsettings, userdata with the hash and the ban."""
    standin = ka.Standin(app, era="newer", cap=10)
    source, _ = read(standin, tmp_path / "read.checkpoint")
    got = everything(source)
    [imported] = got["apps"]
    assert imported.columns["keybanned"] == "Your license is banned"
    assert imported.columns["hwidmismatch"] == app.settings["hwidmismatchmsg"]
    assert imported.paused is False
    users = {u.username: u for u in got["users"]}
    assert len(users) == len(app.users)
    for row in app.users:  # past the cap too: userdata now carries them
        assert (users[row["username"]].password, users[row["username"]].banned) == (
            row["password"],
            row["banned"],
        )
    warnings = "\n".join(got["warnings"])
    assert "no password hash" not in warnings
    assert "no e-mail hash" in warnings
    # This server has no usersub: asked once, then paused subscriptions are reported lost.
    assert [step for step in standin.answered if step.startswith("usersub:")] == [
        step for step in standin.steps(LISTS) if step.startswith("usersub:")
    ]
    assert len([step for step in standin.answered if step.startswith("usersub:")]) == 1
    assert "its key is paused" in warnings
    assert not any(s.paused for s in got["subs"])


def test_rate_limits_are_waited_out(app: ka.StandinApp, tmp_path: Path) -> None:
    """The stand-in refuses with 429 after every 15 answers until its Retry-After has passed."""
    standin = ka.Standin(ka.generate(users=12, keys=8), burst=15, retry_after=1)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(seconds)

    source, stats = read(standin, tmp_path / "read.checkpoint", sleep=sleep)
    assert standin.limited >= 1
    assert stats.rate_limited == standin.limited
    assert waits == [1.0] * standin.limited  # as Retry-After asked
    assert len(list(source.rows(r.User, source.secret))) == 12
    assert len(standin.answered) == len(set(standin.answered)) == len(standin.steps(LISTS))


def test_an_interrupted_read_resumes_to_the_same_result(app: ka.StandinApp, tmp_path: Path) -> None:
    whole, _ = read(ka.Standin(app), tmp_path / "whole.checkpoint")
    expected = everything(whole)

    standin = ka.Standin(app)
    standin.fail_after = len(LISTS) + 7  # KeyAuth fails hard in the middle of the users
    path = tmp_path / "stopped.checkpoint"
    with pytest.raises(SellerApiError, match="--resume"):
        read(standin, path)
    interrupted = standin.failed[0]
    assert set(standin.failed) == {interrupted}  # the failing step was tried again, nothing else

    standin.fail_after = None
    resumed, stats = read(standin, path, resume=True)
    assert stats.resumed_steps == len(LISTS) + 7
    assert everything(resumed) == expected
    # Every step answered once across both runs; only the interrupted one was asked again.
    assert standin.answered == standin.steps(LISTS)
    assert standin.answered[len(LISTS) + 7] == interrupted


def test_a_kill_mid_write_loses_only_that_step(app: ka.StandinApp, tmp_path: Path) -> None:
    standin = ka.Standin(app)
    standin.fail_after = 5
    path = tmp_path / "killed.checkpoint"
    with pytest.raises(SellerApiError):
        read(standin, path)
    with path.open("a") as out:
        out.write('{"step":"fetchallusers","reply":{"succ')  # the process died writing this line
    standin.fail_after = None
    resumed, _ = read(standin, path, resume=True)
    assert len(list(resumed.rows(r.User, resumed.secret))) == len(app.users)
    assert standin.answered.count("fetchallusers") == 1
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"  # it holds hashes and the app secret


def test_the_checkpoint_belongs_to_one_read(app: ka.StandinApp, tmp_path: Path) -> None:
    path = tmp_path / "read.checkpoint"
    Checkpoint.start(path, base_url="http://127.0.0.1:1/api/seller/", seller_key=app.sellerkey, read_at=1)
    with pytest.raises(CheckpointError, match="--resume"):
        Checkpoint.start(path, base_url="http://127.0.0.1:1/api/seller/", seller_key=app.sellerkey, read_at=1)
    with pytest.raises(CheckpointError, match="another read"):
        Checkpoint.resume(path, base_url="http://127.0.0.1:1/api/seller/", seller_key="f" * 32)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        Checkpoint.resume(tmp_path / "none", base_url="x", seller_key=app.sellerkey)
    assert app.sellerkey not in path.read_text()


def test_refusals_stop_the_read_with_keyauths_message(app: ka.StandinApp, tmp_path: Path) -> None:
    with pytest.raises(SellerApiError, match="No application with specified seller key found"):
        read(ka.Standin(app), tmp_path / "a", key="0" * 32)
    with pytest.raises(SellerApiError, match=r"not JSON .*Invalid seller key length"):
        read(ka.Standin(app), tmp_path / "b", key="short")


def test_the_guard_still_applies(app: ka.StandinApp, tmp_path: Path) -> None:
    """Without the operator's allowance the loopback stand-in is refused like any internal
    address."""
    path = tmp_path / "read.checkpoint"
    with ka.serving(ka.Standin(app)) as url:
        checkpoint = Checkpoint.start(path, base_url=url, seller_key=app.sellerkey, read_at=1)
        reader = SellerApiReader(Settings(), app.sellerkey, checkpoint, Pacer(FAST), base_url=url)
        with pytest.raises(SellerApiError, match="not allowed"):
            asyncio.run(reader.read())


def test_empty_lists_are_empty(tmp_path: Path) -> None:
    """KeyAuth answers an empty list with HTTP 406 and success false."""
    bare = dataclasses.replace(ka.generate(users=0, keys=0), subscriptions=[], logs=[])
    source, _ = read(ka.Standin(bare), tmp_path / "read.checkpoint")
    got: Iterator[Any] = iter(everything(source)["users"])
    assert list(got) == []
    assert list(source.rows(r.Key, source.secret)) == []


def test_the_default_checkpoint_does_not_name_the_key(app: ka.StandinApp, tmp_path: Path) -> None:
    path = default_checkpoint(app.sellerkey, tmp_path)
    assert path.parent == tmp_path
    assert app.sellerkey not in path.name
    assert path.name.startswith("keyauth-")
