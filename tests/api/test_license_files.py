"""Signed license files (issue 21): issued to a logged-in session and by the seller, verified
offline by `licensegate_client.client` with the reasons a file is refused, the per-user cooldown (429),
encryption bound to the HWID, the audit log and timeline, key rotation, and a ban refusing the
next online check while the file still verifies (a file cannot be revoked)."""

from __future__ import annotations

import base64

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import timeline
from licensegate.domain.apps import create_application
from licensegate.services import Services
from licensegate_client import client as lg
from tests.api.test_client_license import HWID, OTHER_HWID, new_key
from tests.api.test_client_license import app as app  # the fixture: an initialised program
from tests.helpers import Client, Seller, client_of, user_id_of

pytestmark = pytest.mark.anyio


async def trust(seller: Seller) -> dict[str, str]:
    keys = (await seller.ok("fetchlicensekeys"))["keys"]
    return {item["kid"]: item["public_key"] for item in keys}


async def logged_in(app: Client, seller: Seller, days: float = 30) -> str:
    key = await new_key(seller, days=days)
    await app.ok("license", key=key, hwid=HWID)
    return key


def check(seller: Seller, text: str, trusted: dict[str, str], **options: object) -> lg.LicenseFile:
    settings: dict[str, object] = {"ownerid": seller.ownerid, "name": seller.name, "hwid": HWID, **options}
    return lg.verify_license_file(text, trusted, **settings)  # type: ignore[arg-type]


def reason(seller: Seller, text: str, trusted: dict[str, str], **options: object) -> str:
    with pytest.raises(lg.LicenseFileError) as caught:
        check(seller, text, trusted, **options)
    return caught.value.reason


async def test_a_file_issued_online_verifies_offline_with_what_the_user_holds(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await seller.ok("addentitlement", code="export", name="Export", metadata='{"seats": 5}')
    await seller.ok("attachentitlement", code="export", sub="default")
    key = await logged_in(app, seller, days=10)
    body = await app.ok("licensefile")
    text = body["file"]
    assert text.startswith("LICENSEGATE LICENSE FILE v1 ed25519 kid=")
    verified = check(seller, text, await trust(seller), now=clock.now())
    payload = verified.payload
    assert verified.serial == body["serial"]
    assert (payload["user"], payload["key"], payload["hwid"]) == (key, key, HWID)
    assert payload["app"] == {"ownerid": seller.ownerid, "name": seller.name}
    assert payload["subscriptions"] == [{"name": "default", "expiry": clock.now() + 10 * 86400}]
    assert payload["entitlements"] == [{"code": "export", "name": "Export", "metadata": {"seats": 5}}]
    assert verified.has("export")
    # Its expiry: the sooner of the default TTL (30 days) and the end of the subscription.
    assert payload["issued"] == clock.now()
    assert verified.expires == body["expires"] == clock.now() + 10 * 86400


async def test_each_kind_of_bad_file_is_refused_with_its_reason(
    app: Client, seller: Seller, services: Services, clock: MovableClock
) -> None:
    await logged_in(app, seller)
    text = (await app.ok("licensefile"))["file"]
    trusted = await trust(seller)
    now = clock.now()
    head, payload_b64, signature = text.splitlines()
    changed = base64.b64decode(payload_b64).replace(b'"default"', b'"premium"')
    tampered = f"{head}\n{base64.b64encode(changed).decode()}\n{signature}\n"
    assert reason(seller, tampered, trusted, now=now) == "tampered"
    assert reason(seller, text.replace("ed25519 kid=", "ed25519 kid=x", 1), trusted, now=now) == "unknown_key"
    assert reason(seller, text, trusted, now=now, hwid=OTHER_HWID) == "wrong_hwid"
    expires = check(seller, text, trusted, now=now).expires
    assert check(seller, text, trusted, now=expires + 299).serial  # within the tolerated skew
    assert reason(seller, text, trusted, now=expires + 301) == "expired"
    assert reason(seller, text, trusted, now=now - 301) == "not_yet_valid"
    assert reason(seller, text, {}, now=now) == "unknown_key"
    assert reason(seller, "not a license file", trusted, now=now) == "malformed"

    # Another application's file, verified by a program that trusts both applications' keys.
    other = await create_application(services.db, services.secrets, owner="other", name="other", now=now)
    other_seller = Seller(seller.http, other.sellerkey, other.ownerid, other.app_id, "other")
    both = trusted | await trust(other_seller)
    program = client_of(other_seller)
    await program.init()
    await program.ok("license", key=await new_key(other_seller), hwid=HWID)
    foreign = (await program.ok("licensefile"))["file"]
    assert reason(seller, foreign, both, now=now) == "wrong_application"


async def test_the_cooldown_answers_429_with_its_own_code(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    key = await logged_in(app, seller)
    await app.ok("licensefile")
    response = await app.call("licensefile")
    body = response.json()
    assert (response.status_code, body["error"]) == (429, "license_file_cooldown")
    assert response.headers["Retry-After"] == "3600"
    await seller.ok("setlicensefiles", cooldown=60, ttl=7200)
    clock.advance(61)
    later = await app.ok("licensefile")
    assert later["expires"] == clock.now() + 7200
    await seller.fails("setlicensefiles", 400, "number_out_of_range", ttl=3599)
    # The seller's own issuing waits no cooldown.
    await app.fails("licensefile", 429, "license_file_cooldown")
    assert (await seller.ok("issuelicensefile", user=key))["file"]


async def test_encryption_binds_the_file_to_the_key_and_the_machine(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    key = await logged_in(app, seller)
    text = (await app.ok("licensefile", encrypt=1))["file"]
    assert text.startswith("LICENSEGATE LICENSE FILE v1 aes-256-gcm+ed25519 kid=")
    assert key not in base64.b64decode(text.splitlines()[1]).decode("latin-1")
    trusted, now = await trust(seller), clock.now()
    assert check(seller, text, trusted, now=now, license_key=key).payload["key"] == key
    assert reason(seller, text, trusted, now=now, license_key=key, hwid=OTHER_HWID) == "cannot_decrypt"
    assert reason(seller, text, trusted, now=now, license_key="another-key") == "cannot_decrypt"
    assert reason(seller, text, trusted, now=now) == "cannot_decrypt"


async def test_seller_issues_for_a_user_or_a_key_and_every_file_is_audited(
    app: Client, seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await logged_in(app, seller)
    await app.ok("licensefile")
    by_key = await seller.ok("issuelicensefile", key=key)
    by_user = await seller.ok("issuelicensefile", user=key, hwid="machine-B-0000000000000001")
    trusted = await trust(seller)
    assert check(seller, by_key["file"], trusted, now=clock.now()).payload["hwid"] == HWID  # its bound HWID
    other = check(seller, by_user["file"], trusted, now=clock.now(), hwid="machine-B-0000000000000001")
    assert other.payload["user"] == key
    unused = await new_key(seller)
    await seller.fails("issuelicensefile", 400, "license_file_no_user", key=unused)
    await seller.fails("issuelicensefile", 404, "user_not_found", user="nobody")
    rows = await services.db.fetch_all(
        "SELECT actor, action, target FROM audit_log WHERE app_id = ? AND target = ? ORDER BY id",
        seller.app_id,
        f"user:{key}",
    )
    assert [(row["actor"].split(" ")[0], row["action"]) for row in rows] == [
        ("client", "licensefile"),
        ("owner", "issuelicensefile"),
        ("owner", "issuelicensefile"),
    ]
    issued = await services.db.fetch_value(
        "SELECT COUNT(*) FROM license_files WHERE app_id = ?", seller.app_id
    )
    assert issued == 3
    # ... and in the user's timeline on the dashboard, newest first.
    user_id = await user_id_of(services, seller.app_id, key)
    sources = timeline.Sources(seller.app_id, (key,), user_id, f"user:{key}")
    shown = (await timeline.page(services.db, sources, "")).entries
    assert [entry["text"] for entry in shown if entry["kind"] == "audit"][:3] == [
        "issuelicensefile",
        "issuelicensefile",
        "licensefile",
    ]


async def test_a_ban_refuses_the_next_online_check_though_the_file_still_verifies(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    key = await logged_in(app, seller)
    text = (await app.ok("licensefile"))["file"]
    await seller.ok("banuser", user=key, reason="chargeback")
    again = app.fresh()
    await again.init()
    await again.fails("license", 403, "user_banned", key=key, hwid=HWID)
    await seller.fails("issuelicensefile", 403, "user_banned", user=key)
    # Offline, the file stays valid until it expires: it cannot be revoked.
    assert check(seller, text, await trust(seller), now=clock.now()).payload["user"] == key


async def test_an_hwid_reset_or_a_pause_ends_the_session_the_file_came_from(
    app: Client, seller: Seller
) -> None:
    key = await logged_in(app, seller)
    await app.ok("licensefile")
    await seller.ok("resetuser", user=key)
    await app.fails("check", 403, "session_not_found")
    again = app.fresh()
    await again.init()
    await again.ok("license", key=key, hwid=OTHER_HWID)  # the next online check binds the new machine
    await seller.ok("pauseuser", username=key)
    await again.fails("check", 403, "session_not_found")


async def test_files_signed_before_a_key_rotation_verify_until_they_expire(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await logged_in(app, seller)
    old = (await app.ok("licensefile"))["file"]
    before = await trust(seller)
    await seller.ok("rotatesigningkey")
    keys = (await seller.ok("fetchlicensekeys"))["keys"]
    assert [item["retired_at"] is None for item in keys] == [True, False]
    assert keys[1]["kid"] == next(iter(before))
    new = (await seller.ok("issuelicensefile", user=(check(seller, old, before, now=clock.now()).user)))[
        "file"
    ]
    both = await trust(seller)
    for text in (old, new):
        assert check(seller, text, both, now=clock.now()).serial
    assert reason(seller, new, before, now=clock.now()) == "unknown_key"  # the program needs the new key
    assert lg.key_id(keys[0]["public_key"]) == keys[0]["kid"]


async def test_get_license_file_needs_a_logged_in_session(app: Client) -> None:
    await app.fails("licensefile", 403, "session_not_validated")
