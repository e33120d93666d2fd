"""KeyAuth's dashboard exports as records: keys cross-checked against usernames (a key that is a
username was redeemed by that user), every "default" subscription mapped onto the application's
subscriptions by the documented rule, paused rows told by their remaining seconds, and every loss
named in the warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport.exportfiles import ExportFileError, ExportFilesSource
from tests import keyauth_standin as ka

NOW = 1_800_000_000


def source_for(app: ka.StandinApp, folder: Path, subscriptions: list[r.Subscription]) -> ExportFilesSource:
    keys, users = ka.write_exports(app, folder)
    target = r.App(name=app.name, secret=app.secret, ownerid=app.ownerid, owner=None, sellerkey=None)
    return ExportFilesSource(target, subscriptions, keys=keys, users=users, read_at=NOW)


def test_keys_users_and_subscriptions(tmp_path: Path) -> None:
    app = ka.generate(users=40, keys=30, now=NOW)
    subscriptions = [r.Subscription(app.secret, "default", "1"), r.Subscription(app.secret, "premium", "2")]
    source = source_for(app, tmp_path, subscriptions)
    assert source.read_at == NOW
    assert [a.secret for a in source.apps()] == [app.secret]

    keys = {k.key: k for k in source.rows(r.Key, app.secret)}
    usernames = {u["username"] for u in app.users}
    for row in app.keys:
        key = keys[row["key"]]
        assert key.expires == int(row["expires"])
        assert key.level == row["level"]
        if row["key"] in usernames:  # a License Login's user: used by it
            assert (key.status, key.usedby) == ("Used", row["key"])
        else:  # the export lost the status
            assert (key.status, key.usedby) == (None, None)

    users = list(source.rows(r.User, app.secret))
    assert [(u.username, u.password, u.email, u.hwid, u.banned, u.ip) for u in users] == [
        (u["username"], u["password"], u["email"], u["hwid"], u["banned"], u["ip"]) for u in app.users
    ]
    assert all(u.createdate is None and u.lastlogin is None for u in users)

    # Every row comes back under its real subscription: License Login users by their key's level
    # (KeyAuth's rule), the rest onto "default"; paused rows by their remaining seconds.
    subs = sorted((s.user, s.subscription, s.expiry, s.paused) for s in source.rows(r.Sub, app.secret))
    licensed = {k["key"] for k in app.keys}
    truth = sorted(
        (s.user, s.subscription if s.user in licensed else "default", s.expiry, s.paused) for s in app.subs
    )
    assert subs == truth
    assert any(paused for *_, paused in subs)

    warnings = "\n".join(source.warnings(app.secret))
    assert "no key status: 15 keys that are also usernames" in warnings
    assert "the other 15 keys' status is unknown" in warnings
    assert "names every subscription 'default'" in warnings
    assert "which 25 users got by that rule: user0015, user0016" in warnings  # named
    assert "drops the paused flag" in warnings
    assert "creation, last login" in warnings


def test_one_subscription_takes_every_row(tmp_path: Path) -> None:
    app = ka.generate(users=12, keys=10, now=NOW)
    only = [r.Subscription(app.secret, "gold", "7")]
    source = source_for(app, tmp_path, only)
    assert {s.subscription for s in source.rows(r.Sub, app.secret)} == {"gold"}
    assert "'gold'" in "\n".join(source.warnings(app.secret))


def test_no_default_falls_back_to_the_lowest_level(tmp_path: Path) -> None:
    app = ka.generate(users=12, keys=4, now=NOW)
    subscriptions = [r.Subscription(app.secret, "vip", "3"), r.Subscription(app.secret, "basic", "1")]
    source = source_for(app, tmp_path, subscriptions)
    plain = [s for s in source.rows(r.Sub, app.secret) if s.user.startswith("user")]
    assert plain
    assert {s.subscription for s in plain} == {"basic"}


def test_files_that_are_not_keyauth_exports(tmp_path: Path) -> None:
    app = ka.generate(users=2, keys=2, now=NOW)
    target = r.App(name="x", secret=app.secret, ownerid="o", owner=None, sellerkey=None)
    keys, users = ka.write_exports(app, tmp_path)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"hello": 1}))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ExportFileError, match=r"KeyAuthUsers\.json"):
        ExportFilesSource(target, [], keys=keys, users=wrong)
    with pytest.raises(ExportFileError, match="not JSON"):
        ExportFilesSource(target, [], keys=broken, users=users)
    with pytest.raises(ExportFileError, match=r"KeyAuthKeys\.json"):
        ExportFilesSource(target, [], keys=users, users=None)
    with pytest.raises(ExportFileError, match="Give"):
        ExportFilesSource(target, [], keys=None, users=None)
