"""`licensegate import-keyauth --seller-key` against the loopback stand-in of KeyAuth's seller API,
and `--keys/--users` from the dashboard's export files, into SQLite and PostgreSQL: the command as
a seller runs it (a process of its own), then KeyAuth's own client libraries against the result.
A read stopped by KeyAuth failing resumes with --resume to the same report, asking nothing twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest

from licensegate.domain.keyauthimport.sellerread import LISTS
from licensegate.services import Services
from tests import keyauth_standin as ka
from tests.keyauth_clients import Ed25519Client13, Hmac12Client

pytestmark = pytest.mark.anyio
OWNER = "mover"
WITHOUT_LOGS = tuple(step for step in LISTS if step != "fetchalllogs")  # the lists without --with-logs


def cli_env(services: Services) -> dict[str, str]:
    return {
        **os.environ,
        "LICENSEGATE_DATA_DIR": str(services.settings.data_dir),
        "LICENSEGATE_OUTBOUND_ALLOW": "127.0.0.1",
        "LICENSEGATE_ARGON2_TIME_COST": "1",
        "LICENSEGATE_ARGON2_MEMORY_KIB": "64",
    }


def cli_command(services: Services) -> list[str]:
    command = [sys.executable, "-m", "licensegate", "import-keyauth", "--owner", OWNER]
    return [*command, "--database", services.settings.database_url]


def run_cli(services: Services, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*cli_command(services), *args],
        env=cli_env(services),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def seller_args(app: ka.StandinApp, url: str, checkpoint: Path) -> tuple[str, ...]:
    return ("--seller-key", app.sellerkey, "--from", url, "--pace", "1000/0", "--checkpoint", str(checkpoint))


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = orjson.loads(done.stdout)
    [app] = report["applications"]
    assert isinstance(app, dict)
    return app


@pytest.fixture
def standin_app() -> ka.StandinApp:
    return ka.generate(users=14, keys=10, real_passwords=True)


async def test_a_live_application_comes_over(
    services: Services, client: httpx.AsyncClient, standin_app: ka.StandinApp, tmp_path: Path
) -> None:
    app = standin_app
    standin = ka.Standin(app, cap=9, burst=12, retry_after=1)  # capped list; 429s every 12 answers
    with ka.serving(standin) as url:
        seller = ("--seller-key", app.sellerkey, "--from", url, "--pace", "1000/0")
        checked = report_of(run_cli(services, *seller, "--checkpoint", str(tmp_path / "a"), "--dry-run"))
        done = run_cli(services, *seller, "--checkpoint", str(tmp_path / "b"))
    imported = report_of(done)
    assert standin.limited >= 1  # KeyAuth's 429s were waited out
    assert "seller API: read in" in done.stderr
    assert imported["imported"] == checked["imported"]
    assert imported["imported"]["users"] == len(app.users)
    assert imported["imported"]["keys"] == len(app.keys)
    assert imported["ownerid"] == app.ownerid
    warnings = "\n".join(imported["warnings"])
    assert "the other 5 users were read one by one" in warnings
    assert "read with usersub" in warnings  # paused subscriptions: every row of those users

    # The application answers KeyAuth's 1.2 library with its old secret and 1.3 with the printed key.
    people = {u["username"]: u for u in app.users}
    active = {sub.user for sub in app.subs if not sub.paused and sub.expiry > standin.now()}
    used = next(
        k
        for k in app.keys
        if k["status"] == "Used" and k["key"] in active and people[k["key"]]["banned"] is None
    )
    hwid = people[used["key"]]["hwid"]
    lib = Hmac12Client(client, app.ownerid, app.name, app.secret)
    assert (await lib.init(ver=app.version))["success"] is True
    login = await lib.call("license", key=used["key"], hwid=hwid)
    assert login["success"] is True, login
    fresh = next(k for k in app.keys if k["status"] == "Not Used")
    other = Hmac12Client(client, app.ownerid, app.name, app.secret)
    await other.init(ver=app.version)
    again = await other.call(
        "register", username="newcomer", key=used["key"], hwid="S-1-NEW", **{"pass": "pw-new-1"}
    )
    assert again["success"] is False
    assert (await other.call("license", key=fresh["key"], hwid="S-1-FRESH"))["success"] is True
    lib13 = Ed25519Client13(client, app.ownerid, app.name, imported["public_key"])
    await lib13.init(ver=app.version)
    assert (await lib13.json("license", key=used["key"], hwid=hwid))["success"] is True
    # Webhooks came as short links: imported disabled, reported, and refused to clients.
    assert imported["imported"]["webhooks"] == len(app.webhooks) > 0
    assert "so it is imported disabled: enter its full URL again" in warnings
    hooks = await services.db.fetch_all("SELECT webid, enabled FROM webhooks ORDER BY webid")
    assert hooks == [{"webid": webid, "enabled": 0} for webid in sorted(w["webid"] for w in app.webhooks)]
    refused = await lib.call("webhook", webid=app.webhooks[0]["webid"])
    assert refused["success"] is False
    assert "full URL" in refused["message"]
    # The seller key came along: the seller API answers it.
    keys = (
        await client.get("/api/seller/", params={"sellerkey": app.sellerkey, "type": "fetchallkeys"})
    ).json()
    assert {k["key"] for k in keys["keys"]} == {k["key"] for k in app.keys}


async def test_a_stopped_read_resumes_to_the_same_result(
    services: Services, standin_app: ka.StandinApp, tmp_path: Path
) -> None:
    app = standin_app
    with ka.serving(ka.Standin(app)) as url:
        expected = report_of(run_cli(services, *seller_args(app, url, tmp_path / "whole"), "--dry-run"))
    standin = ka.Standin(app)
    standin.fail_after = len(LISTS) + 5  # the lists, then six users: KeyAuth fails hard
    with ka.serving(standin) as url:
        seller = seller_args(app, url, tmp_path / "stopped")
        stopped = run_cli(services, *seller)
        assert stopped.returncode != 0
        assert "--resume" in stopped.stderr
        again = run_cli(services, *seller)  # not without --resume: the checkpoint is kept
        assert again.returncode != 0
        assert "add --resume" in again.stderr
        standin.fail_after = None
        resumed = report_of(run_cli(services, *seller, "--resume"))
    assert resumed["imported"] == expected["imported"]

    def read(warnings: list[str]) -> list[str]:  # a file the dry run only checks is fetched for real
        return [text for text in warnings if not text.startswith("file '")]

    assert read(resumed["warnings"]) == read(expected["warnings"])
    interrupted = standin.failed[0]
    assert set(standin.failed) == {interrupted}
    assert standin.answered == standin.steps(WITHOUT_LOGS)


async def test_export_files_come_over(
    services: Services, client: httpx.AsyncClient, standin_app: ka.StandinApp, tmp_path: Path
) -> None:
    app = standin_app
    keys, users = ka.write_exports(app, tmp_path)
    identity = (
        "--name",
        app.name,
        "--ownerid",
        app.ownerid,
        "--secret",
        app.secret,
        "--app-version",
        app.version,
    )
    missing = run_cli(services, "--keys", str(keys), "--users", str(users))
    assert missing.returncode != 0
    assert "--name, --ownerid, --secret" in missing.stderr
    files = ("--keys", str(keys), "--users", str(users), *identity)
    imported = report_of(
        run_cli(services, *files, "--subscription", "default=1", "--subscription", "premium=2")
    )
    assert imported["imported"]["keys"] == len(app.keys)
    assert imported["imported"]["users"] == len(app.users)
    assert "no key status" in "\n".join(imported["warnings"])
    # A key a License Login used is used still: it logs its user in, and makes nobody else.
    now = ka.Standin(app).now()
    active = {sub.user for sub in app.subs if not sub.paused and sub.expiry > now}
    used = next(
        k for k in app.keys if k["status"] == "Used" and k["usedby"] == k["key"] and k["key"] in active
    )
    lib = Hmac12Client(client, app.ownerid, app.name, app.secret)
    await lib.init(ver=app.version)
    user = next(u for u in app.users if u["username"] == used["key"])
    login = await lib.call("license", key=used["key"], hwid=user["hwid"])
    assert login["success"] is (user["banned"] is None), login
    again = await lib.call(
        "register", username="someone", key=used["key"], hwid="S-1-X", **{"pass": "pw-x-123"}
    )
    assert again["success"] is False


async def test_a_killed_read_resumes(services: Services, standin_app: ka.StandinApp, tmp_path: Path) -> None:
    """The command killed while it waits for KeyAuth: --resume asks again only that step."""
    app = standin_app
    standin = ka.Standin(app)
    standin.hold_after = len(LISTS) - 1 + 3  # the lists and three users; the fourth is held
    with ka.serving(standin) as url:
        seller = seller_args(app, url, tmp_path / "killed")
        env = cli_env(services)
        command = [*cli_command(services), *seller]
        running = await anyio.open_process(command, env=env)
        try:
            # Until the held request has come (or the command ended, which it must not).
            with anyio.move_on_after(120):
                while not standin.held.is_set() and running.returncode is None:
                    await anyio.to_thread.run_sync(standin.held.wait, 0.5)
            assert standin.held.is_set()
            assert running.returncode is None
        finally:
            running.kill()
            await running.wait()
        standin.hold_after = None
        standin.release.set()
        resumed = report_of(run_cli(services, *seller, "--resume"))
    assert resumed["imported"]["users"] == len(app.users)
    repeated = {step for step in standin.answered if standin.answered.count(step) > 1}
    assert repeated <= {standin.answered[len(LISTS) - 1 + 3]}  # at most the one it was killed in
    assert sorted(set(standin.answered)) == sorted(standin.steps(WITHOUT_LOGS))
