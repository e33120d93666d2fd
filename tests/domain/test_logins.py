"""The rules a login applies, as pure functions: which devices a user may log in from (and which
HWID binds), what a device must send, and which grants give access while pauses stop clocks."""

from __future__ import annotations

from typing import Any

import pytest

from licensegate.domain.apps import ClientApp
from licensegate.domain.errors import Refusal
from licensegate.domain.logins import account_of, check_hwid, hwid_to_bind, running_grants
from licensegate.domain.messages import Messages
from licensegate.store.logins import GrantRow

APP = ClientApp(
    id=1,
    ownerid="owner00001",
    name="app",
    owner="owner",
    version="1.0",
    download_link=None,
    enabled=True,
    paused=False,
    hwid_lock=True,
    force_hwid=False,
    min_hwid_length=0,
    max_hwids=2,
    session_seconds=3600,
    min_username_length=1,
    hash_check=False,
    tamper_action="log",
    client_rate_limit=100,
    client_rate_window=60,
    auth_rate_limit=10,
    auth_rate_window=60,
    chat_history=50,
    log_webhook_url=None,
    token_validation=False,
    case_insensitive_usernames=False,
    signing_key=None,
    secret="",
)


msg = Messages({})  # the default text of every client message


def refused(error: str, message: str) -> Any:
    return pytest.raises(Refusal, check=lambda exc: (exc.error, exc.message) == (error, message))


# --- which device may log in, and what binds ----------------------------------------------------


@pytest.mark.parametrize(
    ("held", "hwid", "bind"),
    [
        ([], "pc-1", "pc-1"),  # the first device binds
        (["pc-1"], "pc-1", None),  # a known device binds nothing
        (["pc-1"], "pc-2", "pc-2"),  # a second device takes the second place
        ([], None, None),  # nothing held, nothing sent: nothing to check
    ],
)
def test_a_locked_user_binds_new_devices_while_places_are_free(
    held: list[str], hwid: str | None, bind: str | None
) -> None:
    assert hwid_to_bind(APP, True, held, hwid, msg) == bind


def test_a_locked_user_with_every_place_taken_refuses_a_new_device() -> None:
    with refused("hwid_mismatch", msg("hwidmismatch")):
        hwid_to_bind(APP, True, ["pc-1", "pc-2"], "pc-3", msg)


def test_a_locked_user_holding_devices_refuses_a_call_without_hwid() -> None:
    with refused("hwid_mismatch", msg("hwidmismatch")):
        hwid_to_bind(APP, True, ["pc-1"], None, msg)


def test_an_application_allowing_no_device_says_so() -> None:
    with refused("hwid_mismatch", msg("hwidlimit")):
        hwid_to_bind(APP._replace(max_hwids=0), True, [], "pc-1", msg)


@pytest.mark.parametrize(("app_locks", "user_locked"), [(False, True), (True, False), (False, False)])
def test_without_both_locks_any_device_logs_in_and_nothing_binds(app_locks: bool, user_locked: bool) -> None:
    app = APP._replace(hwid_lock=app_locks, max_hwids=1)
    for hwid in ("pc-9", None):
        assert hwid_to_bind(app, user_locked, ["pc-1"], hwid, msg) is None


def test_a_device_must_send_an_hwid_when_the_application_forces_one() -> None:
    check_hwid(APP, None, msg)
    with refused("hwid_required", msg("hwidrequired")):
        check_hwid(APP._replace(force_hwid=True), None, msg)


def test_an_hwid_shorter_than_the_minimum_is_refused() -> None:
    app = APP._replace(min_hwid_length=8)
    check_hwid(app, "12345678", msg)
    with refused("hwid_too_short", msg("hwidtooshort", minimum=8)):
        check_hwid(app, "1234567", msg)


# --- which grants give access -------------------------------------------------------------------

NOW = 1_000_000


def grant(expires_at: int, paused_at: int | None = None, sub_paused_at: int | None = None) -> GrantRow:
    return {
        "subscription": "default",
        "grant_key": "KEY-1",
        "expires_at": expires_at,
        "paused_at": paused_at,
        "sub_paused_at": sub_paused_at,
    }


def test_a_running_grant_gives_access_with_its_time_left() -> None:
    entries, frozen = running_grants([grant(NOW + 90)], APP, NOW)
    assert entries == [{"subscription": "default", "key": "KEY-1", "expiry": str(NOW + 90), "timeleft": 90}]
    assert frozen is False


def test_an_expired_grant_gives_nothing() -> None:
    assert running_grants([grant(NOW), grant(NOW - 5)], APP, NOW) == ([], False)


@pytest.mark.parametrize(
    "paused",
    [
        grant(NOW + 90, paused_at=NOW - 10),  # the user's grant is paused
        grant(NOW + 90, sub_paused_at=NOW - 10),  # its subscription is paused
        grant(NOW - 5, paused_at=NOW - 10),  # paused before it ran out: the time left is kept
    ],
)
def test_a_paused_grant_with_time_left_is_frozen_not_running(paused: GrantRow) -> None:
    assert running_grants([paused], APP, NOW) == ([], True)


def test_a_grant_that_had_run_out_before_its_pause_is_not_frozen() -> None:
    assert running_grants([grant(NOW - 20, paused_at=NOW - 10)], APP, NOW) == ([], False)


def test_the_applications_pause_freezes_every_grant_with_time_left() -> None:
    paused_app = APP._replace(paused=True)
    assert running_grants([grant(NOW + 90)], paused_app, NOW) == ([], True)
    assert running_grants([grant(NOW - 1)], paused_app, NOW) == ([], False)


def test_running_and_frozen_grants_side_by_side() -> None:
    entries, frozen = running_grants([grant(NOW + 1, paused_at=NOW), grant(NOW + 60)], APP, NOW)
    assert [e["timeleft"] for e in entries] == [60]
    assert frozen is True


def test_an_appended_keyauth_hwid_string_admits_the_hwids_it_contains_and_takes_one_place() -> None:
    held, appended = ["pc-1pc-2"], ("pc-1pc-2",)
    app = APP._replace(max_hwids=2)
    for hwid in ("pc-1", "pc-2", "pc-1pc-2"):
        assert hwid_to_bind(app, True, held, hwid, msg, appended) is None
    assert hwid_to_bind(app, True, held, "pc-3", msg, appended) == "pc-3"  # the second place
    with refused("hwid_mismatch", msg("hwidmismatch")):
        hwid_to_bind(app._replace(max_hwids=1), True, held, "pc-3", msg, appended)
    with refused("hwid_mismatch", msg("hwidmismatch")):
        hwid_to_bind(app._replace(max_hwids=1), True, held, "pc-1", msg)  # not appended: matched exactly


def test_an_account_tells_appended_hwid_strings_from_the_others() -> None:
    row: dict[str, Any] = {"user_id": 1, "hwids": '["pc-9", ["pc-1pc-2"]]', "expires_at": None}
    account = account_of([row])  # type: ignore[list-item]
    assert account is not None
    assert (account.hwids, account.appended) == (["pc-9", "pc-1pc-2"], ("pc-1pc-2",))
    assert [account.holds(hwid) for hwid in ("pc-9", "pc-2", "pc-1pc-2", "pc-3", None)] == [
        True,
        True,
        True,
        False,
        False,
    ]
    row["hwids"] = '["pc-1pc-2"]'
    plain = account_of([row])  # type: ignore[list-item]
    assert plain is not None
    assert (plain.appended, plain.holds("pc-1")) == ((), False)
