"""`import-keyauth` from a mysqldump and from the live MariaDB, into SQLite and PostgreSQL: what
comes over, what KeyAuth's clients then see, running it twice, stopping it, the dry run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from licensegate.config import Settings
from licensegate.domain.keyauthimport import writer
from licensegate.domain.keyauthimport.dumpfile import DumpSource
from licensegate.domain.keyauthimport.mysqlread import MySqlSource
from licensegate.services import Services
from licensegate.store import keyauthimport as keyauth_store
from tests import keyauthdb
from tests.httpservers import serving
from tests.keyauth_clients import Ed25519Client13, Hmac12Client
from tests.keyauthdb import ALPHA, BETA, DAY, FREE_KEY, NOW, PAUSED_LEFT, USED_KEY, KeyAuthData
from tests.keyauthimport.conftest import FILE_BODY

pytestmark = pytest.mark.anyio
OWNER = "mover"


def env_of(services: Services) -> writer.Env:
    return writer.Env(
        db=services.db,
        box=services.secrets,
        passwords=services.passwords,
        settings=services.settings,
        content=services.files,
        now=services.clock.now(),
    )


async def import_dump(services: Services, dump: Path, **options: Any) -> dict[str, Any]:
    with DumpSource(dump) as source:
        reports = await writer.import_all(env_of(services), source, writer.Options(owner=OWNER, **options))
    return {r.name: r.as_json() for r in reports}


async def test_a_dump_comes_over_whole(services: Services, keyauth_dump: Path) -> None:
    reports = await import_dump(services, keyauth_dump, with_logs=True)
    alpha = reports[ALPHA.name]
    assert alpha["ownerid"] == ALPHA.ownerid
    assert len(alpha["public_key"]) == 64
    assert alpha["imported"] == {
        "applications": 1,
        "blacklist": 2,
        "buttons": 1,
        "chat_channels": 1,
        "chat_messages": 2,
        "chat_mutes": 1,
        "files": 1,
        "keys": 3,
        "logs": 2,
        "messages": alpha["imported"]["messages"],
        "owner_account": 1,
        "seller_keys": 1,
        "subscriptions": 2,
        "team_members": 2,
        "tokens": 1,
        "user_subscriptions": 5,
        "user_variables": 2,
        "users": 5,
        "variables": 2,
        "webhooks": 1,
        "whitelist": 1,
    }
    assert alpha["imported"]["messages"] >= 20
    assert alpha["skipped"] == {"files": 1, "keys": 1, "users": 2}
    warnings = "\n".join(alpha["warnings"])
    assert f"'{FREE_KEY.lower()}' (as '{FREE_KEY}')" in warnings
    assert "'Alice' (as 'alice')" in warnings
    assert "'carol'" in warnings
    assert "file '654321'" in warnings
    assert set(alpha["invitations"]) == {"res1", "man1"}
    assert reports[BETA.name]["imported"]["users"] == 1
    assert "owner_account" not in reports[BETA.name]["imported"]  # made once, with the first

    db = services.db
    app_id = await db.fetch_value("SELECT id FROM apps WHERE name = ?", ALPHA.name)
    keys = {r["key"]: r for r in await db.fetch_all("SELECT * FROM license_keys WHERE app_id = ?", app_id)}
    assert keys[USED_KEY]["status"] == "used"
    assert keys[USED_KEY]["used_by_user_id"] is not None
    assert keys[FREE_KEY]["note"] == keyauthdb.NOTE
    assert keys[FREE_KEY]["duration"] == 7 * DAY
    assert keys[keyauthdb.BANNED_KEY]["banned_reason"] == "chargeback"
    users = {r["username"]: r for r in await db.fetch_all("SELECT * FROM users WHERE app_id = ?", app_id)}
    assert users["alice"]["password_hash"].startswith("$2y$10$")
    assert users["alice"]["email_sha1"] == keyauthdb.email_sha1("alice@example.com")
    assert users["carol"]["password_hash"] is None
    assert users["bob"]["banned_reason"] == "cheating"
    assert users[USED_KEY]["created_by"] == "license"
    hwid = await db.fetch_one("SELECT hwid, appended FROM user_hwids WHERE user_id = ?", users["alice"]["id"])
    assert hwid is not None
    assert (hwid["hwid"], hwid["appended"]) == ("".join(keyauthdb.HWIDS["alice"]), 1)
    paused = await db.fetch_one(
        "SELECT expires_at, paused_at FROM user_subscriptions WHERE user_id = ?", users["dave"]["id"]
    )
    assert paused is not None
    assert paused["paused_at"] is not None
    assert paused["expires_at"] - paused["paused_at"] == PAUSED_LEFT
    app = await db.fetch_one("SELECT * FROM apps WHERE id = ?", app_id)
    assert app is not None
    assert (app["version"], app["hwid_reset_cooldown"], app["session_seconds"]) == ("2.1", 3 * DAY, 12 * 3600)
    assert app["case_insensitive_usernames"] == 1
    team = {
        r["username"]: r
        for r in await db.fetch_all(
            "SELECT a.username, a.role, t.* FROM accounts a JOIN team_members t ON t.account_id = a.id"
        )
    }
    assert team["res1"]["role"] == "reseller"
    assert (team["res1"]["balance_day"], team["res1"]["balance_week"], team["res1"]["balance_lifetime"]) == (
        10,
        5,
        1,
    )
    assert team["res1"]["key_levels"] == "1,2"
    assert team["man1"]["permissions"] == 0b10110011011
    assert users["dave"]["owner_account_id"] == team["res1"]["account_id"]  # made by the reseller
    assert users["alice"]["owner_account_id"] is None
    stored = await db.fetch_one("SELECT size, url FROM files WHERE app_id = ? AND file_id = '123456'", app_id)
    assert stored is not None
    assert stored["size"] == len(FILE_BODY)


async def test_keyauth_clients_keep_working(
    services: Services, client: httpx.AsyncClient, keyauth_dump: Path
) -> None:
    reports = await import_dump(services, keyauth_dump)
    lib = Hmac12Client(client, ALPHA.ownerid, ALPHA.name, ALPHA.secret)
    assert (await lib.init(ver="2.1"))["success"] is True
    # The License Login user signs in with its key and its own device.
    login = await lib.call("license", key=USED_KEY, hwid="S-1-5-21-LICENSE")
    assert login["success"] is True, login
    assert (await lib.call("var", varid="motd"))["message"] == "Welcome back, ünïcödé ✓"
    # A used key cannot make another user; an unused one can; a banned one cannot.
    other = Hmac12Client(client, ALPHA.ownerid, ALPHA.name, ALPHA.secret)
    await other.init(ver="2.1")
    again = await other.call(
        "register", username="newcomer", key=USED_KEY, hwid="S-1-5-21-NEW", **{"pass": "x1y2z3w4"}
    )
    assert again["success"] is False
    assert again["message"] == "Key Already Used."
    banned = await other.call("license", key=keyauthdb.BANNED_KEY, hwid="S-1-5-21-NEW")
    assert banned["success"] is False
    fresh = await other.call("license", key=FREE_KEY, hwid="S-1-5-21-FRESH")
    assert fresh["success"] is True, fresh
    assert [s["subscription"] for s in fresh["info"]["subscriptions"]] == ["Gold"]
    # A 1.3 program changes its URL and the public key the report printed.
    lib13 = Ed25519Client13(client, ALPHA.ownerid, ALPHA.name, reports[ALPHA.name]["public_key"])
    await lib13.init(ver="2.1")
    body = await lib13.json("license", key=USED_KEY, hwid="S-1-5-21-LICENSE")
    assert body["success"] is True, body


async def test_running_it_twice_adds_nothing(services: Services, keyauth_dump: Path) -> None:
    first = await import_dump(services, keyauth_dump)
    second = await import_dump(services, keyauth_dump)
    for name, report in second.items():
        assert report["imported"] == {}, name
        assert report["ownerid"] == first[name]["ownerid"]
        assert report["public_key"] == first[name]["public_key"]
    alpha = second[ALPHA.name]["skipped"]
    assert alpha["users"] == 7  # 5 there already, 2 duplicates
    assert alpha["keys"] == 4
    assert alpha["applications"] == 1


async def test_logs_twice_add_nothing(services: Services, keyauth_dump: Path) -> None:
    first = (await import_dump(services, keyauth_dump, with_logs=True))[ALPHA.name]
    second = (await import_dump(services, keyauth_dump, with_logs=True))[ALPHA.name]
    assert first["imported"]["logs"] == second["skipped"]["logs"] == 2
    assert "logs" not in second["imported"]
    assert await services.db.fetch_value("SELECT COUNT(*) FROM client_logs") == 2


async def test_the_live_server_gives_the_same(
    services: Services, keyauth_db: KeyAuthData, keyauth_dump: Path
) -> None:
    source = MySqlSource(keyauthdb.url(keyauth_db.database))
    live = await writer.import_all(env_of(services), source, writer.Options(owner=OWNER))
    again = await import_dump(services, keyauth_dump)
    assert live[0].imported["users"] == 5
    assert again[ALPHA.name]["imported"] == {}


async def test_dry_run_writes_nothing_and_says_the_same(services: Services, keyauth_dump: Path) -> None:
    dry = await import_dump(services, keyauth_dump, dry_run=True)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM apps") == 0
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts") == 0
    real = await import_dump(services, keyauth_dump)
    for name in real:
        assert dry[name]["imported"] == real[name]["imported"]
        assert dry[name]["skipped"] == real[name]["skipped"]


async def test_the_chunk_size_changes_nothing(
    services: Services, keyauth_dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are written a chunk at a time: duplicates and case variants split across chunks or
    met within one, grants and variables of users in other chunks, all counted and named the same."""
    small: list[dict[str, Any]] = []
    for size in (1, 2, 3):
        monkeypatch.setattr(keyauth_store, "CHUNK", size)
        small.append(await import_dump(services, keyauth_dump, with_logs=True, dry_run=True))
    monkeypatch.undo()
    whole = await import_dump(services, keyauth_dump, with_logs=True)
    for dry in small:
        for name, report in whole.items():
            for part in ("imported", "skipped", "warnings"):
                assert dry[name][part] == report[part], (name, part)


async def test_an_ownerid_of_another_account(services: Services, keyauth_dump: Path) -> None:
    await services.db.execute(
        "INSERT INTO accounts (username, role, ownerid, created_at) VALUES ('someone', 'seller', ?, 0)",
        ALPHA.ownerid,
    )
    with pytest.raises(writer.ImportRefused, match="--new-ownerid"):
        await import_dump(services, keyauth_dump)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM apps") == 0
    reports = await import_dump(services, keyauth_dump, new_ownerid=True)
    moved = reports[ALPHA.name]
    assert moved["ownerid"] != ALPHA.ownerid
    assert moved["keyauth_ownerid"] == ALPHA.ownerid
    assert any("ownerid" in w for w in moved["warnings"])


def _cli(settings: Settings, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "licensegate", "import-keyauth", "--database", settings.database_url, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={
            **os.environ,
            "LICENSEGATE_DATA_DIR": str(settings.data_dir),
            "LICENSEGATE_OUTBOUND_ALLOW": "127.0.0.1",
            "LICENSEGATE_ARGON2_TIME_COST": "1",
            "LICENSEGATE_ARGON2_MEMORY_KIB": "64",
        },
    )


async def test_the_command_prints_one_report(
    settings: Settings, services: Services, keyauth_dump: Path
) -> None:
    proc = _cli(settings, "--owner", OWNER, "--dump", str(keyauth_dump), "--app", BETA.name)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    report = orjson.loads(out)
    assert [a["name"] for a in report["applications"]] == [BETA.name]
    assert report["applications"][0]["imported"]["users"] == 1
    assert b"importing" in err


async def test_a_killed_import_leaves_whole_applications(
    settings: Settings, services: Services, keyauth_dump: Path
) -> None:
    """Killed at any point, every application is there whole or not at all; a second run
    finishes the job."""
    proc = _cli(settings, "--owner", OWNER, "--dump", str(keyauth_dump))
    assert proc.stderr is not None
    proc.stderr.readline()  # the first application has started
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    for row in await services.db.fetch_all("SELECT id FROM apps"):
        keys = await services.db.fetch_value("SELECT COUNT(*) FROM license_keys WHERE app_id = ?", row["id"])
        users = await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE app_id = ?", row["id"])
        assert (keys, users) in ((3, 5), (1, 1))
    finished = _cli(settings, "--owner", OWNER, "--dump", str(keyauth_dump))
    _out, err = finished.communicate(timeout=300)
    assert finished.returncode == 0, err.decode()
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 6
    assert await services.db.fetch_value("SELECT COUNT(*) FROM license_keys") == 4
    assert NOW > 0


async def test_imported_users_sign_in_with_their_keyauth_passwords(
    services: Services, client: httpx.AsyncClient, keyauth_dump: Path
) -> None:
    """bcrypt passwords and appended HWIDs work as on KeyAuth; a ban and a paused subscription
    keep refusing; a user without a password sets it by signing in."""
    reports = await import_dump(services, keyauth_dump)
    hwid_two = keyauthdb.HWIDS["alice"][1]
    lib = Hmac12Client(client, ALPHA.ownerid, ALPHA.name, ALPHA.secret)
    await lib.init(ver="2.1")
    login = await lib.call("login", username="alice", hwid=hwid_two, **{"pass": keyauthdb.PASSWORDS["alice"]})
    assert login["success"] is True, login
    assert [s["subscription"] for s in login["info"]["subscriptions"]] == ["Gold"]
    assert (await lib.call("getvar", var="plan"))["response"] == "pro"
    wrong = await lib.call("login", username="alice", hwid=hwid_two, **{"pass": "not-it"})
    assert wrong["success"] is False
    other_device = await lib.call(
        "login", username="alice", hwid="S-1-5-21-ELSE", **{"pass": keyauthdb.PASSWORDS["alice"]}
    )
    assert other_device["success"] is False
    banned = await lib.call(
        "login", username="bob", hwid="S-1-5-21-BOB", **{"pass": keyauthdb.PASSWORDS["bob"]}
    )
    assert banned["success"] is False
    paused = await lib.call(
        "login", username="dave", hwid=keyauthdb.HWIDS["dave"][0], **{"pass": keyauthdb.PASSWORDS["dave"]}
    )
    assert paused["success"] is False
    assert paused["message"] == "Your subscription is paused and can't be used right now"
    # KeyAuth compared usernames without case; so does the imported application.
    upper = await lib.call("login", username="ALICE", hwid=hwid_two, **{"pass": keyauthdb.PASSWORDS["alice"]})
    assert upper["success"] is True, upper
    # The 1.3 library, with the public key of the report.
    lib13 = Ed25519Client13(client, ALPHA.ownerid, ALPHA.name, reports[ALPHA.name]["public_key"])
    await lib13.init(ver="2.1")
    body = await lib13.json(
        "login", username="alice", hwid=keyauthdb.HWIDS["alice"][0], **{"pass": keyauthdb.PASSWORDS["alice"]}
    )
    assert body["success"] is True, body


async def test_the_command_reads_a_live_server_dry(
    settings: Settings, services: Services, keyauth_db: KeyAuthData
) -> None:
    proc = _cli(settings, "--owner", OWNER, "--mysql", keyauthdb.url(keyauth_db.database), "--dry-run")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    report = orjson.loads(out)
    assert report["dry_run"] is True
    assert {a["name"]: a["imported"]["users"] for a in report["applications"]} == {
        ALPHA.name: 5,
        BETA.name: 1,
    }
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 0
    refused = _cli(settings, "--owner", OWNER, "--mysql", "mysql://root@127.0.0.1:3306/")
    _out, err = refused.communicate(timeout=60)
    assert refused.returncode == 1
    assert (
        err.decode().strip()
        == "licensegate: the --mysql URL names no database (mysql://user:password@host:port/DATABASE)"
    )


async def test_an_import_into_an_application_with_an_endpoint_reports_it(
    services: Services, client: httpx.AsyncClient, keyauth_dump: Path
) -> None:
    """`import.finished` is written in the import's transaction, for an endpoint that wants it
    (a new application has none yet, so only a later import into it reports)."""
    first = await import_dump(services, keyauth_dump)
    found = await keyauth_store.find_app(services.db, first[ALPHA.name]["ownerid"], ALPHA.name)
    assert found is not None
    app_id: int = found["id"]
    with serving() as receiver:
        receiver.reply("/hook", b"ok")
        added = await client.get(
            "/api/seller/",
            params={
                "sellerkey": keyauthdb.ALPHA.sellerkey,
                "type": "addeventwebhook",
                "url": receiver.url("/hook"),
                "events": "import.finished",
            },
        )
        assert added.status_code == 200, added.text
        await import_dump(services, keyauth_dump, dry_run=True)  # rolled back: no event
        assert await finished_events(services, app_id) == []
        await import_dump(services, keyauth_dump)  # everything there already
        assert await finished_events(services, app_id) == [{"version": 1, "source": "keyauth", "counts": {}}]


async def finished_events(services: Services, app_id: int) -> list[dict[str, Any]]:
    rows = await services.db.fetch_all(
        "SELECT payload FROM events WHERE app_id = ? AND name = 'import.finished' ORDER BY id", app_id
    )
    return [orjson.loads(row["payload"]) for row in rows]
