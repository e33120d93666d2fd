"""Client API — Chat: Fetch Messages (`chatfetch`, alias `chatget`: its exact shape and its only
statuses 200, 400, 403, 429, 500) and Send Message (`chatsend`: delays and mutes with a movable
clock, the length limit, pruning)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.domain import chat
from licensegate.services import Services
from tests.helpers import CLIENT_PATH, Client, Seller, client_of, create_seller

pytestmark = pytest.mark.anyio

START = 1_800_000_000  # the movable clock's starting time
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
FETCH_STATUSES = {200, 400, 403, 429, 500}
FETCH_KEYS = {"success", "code", "message", "messages", "nonce", "ownerid"}
MESSAGE_KEYS = {"author", "role", "message", "timestamp"}


@pytest.fixture
async def app(seller: Seller) -> Client:
    """A program whose session is logged in as `kim`, with a channel `general`."""
    client = client_of(seller)
    await client.init()
    await log_in(client, seller, "kim")
    await seller.ok("addchannel", name="general")
    return client


async def log_in(client: Client, seller: Seller, name: str) -> str:
    key: str = (await seller.ok("add", expiry=30))["key"]
    await client.ok("register", username=name, key=key, hwid=HWID, **{"pass": "pw"})
    return key


async def another_user(app: Client, seller: Seller, name: str) -> Client:
    other = app.fresh()
    await other.init()
    await log_in(other, seller, name)
    return other


class Statuses:
    """Collects the statuses of chatfetch calls, to compare with the declared set."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    async def fails(self, client: Client, status: int, error: str, /, **params: Any) -> dict[str, Any]:
        self.seen.add(status)
        return await client.fails("chatfetch", status, error, **params)


# --- Fetch Messages ----------------------------------------------------------------------------


async def test_chatfetch_answers_the_documented_shape_oldest_first(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await seller.ok("chatpost", channel="general", message="Welcome!")
    clock.advance(5)
    await app.ok("chatsend", channel="general", message="hi all")
    clock.advance(7)
    other = await another_user(app, seller, "zoe")
    await other.ok("chatsend", channel="general", message="  hello\nkim  ")
    body = await app.ok("chatfetch", channel="general")
    assert set(body) == FETCH_KEYS
    assert body["code"] == 68
    assert body["message"] == "Successfully retrieved chat messages"
    assert body["messages"] == [
        {"author": "owner", "role": "developer", "message": "Welcome!", "timestamp": START},
        {"author": "kim", "role": "user", "message": "hi all", "timestamp": START + 5},
        {"author": "zoe", "role": "user", "message": "  hello\nkim  ", "timestamp": START + 12},
    ]
    for entry in body["messages"]:
        assert set(entry) == MESSAGE_KEYS
        assert all(isinstance(entry[k], str) for k in ("author", "role", "message"))
        assert type(entry["timestamp"]) is int


async def test_chatfetch_of_an_empty_channel_is_an_empty_list(app: Client) -> None:
    body = await app.ok("chatfetch", channel="general")
    assert set(body) == FETCH_KEYS
    assert body["messages"] == []


async def test_chatfetch_needs_only_sessionid_and_ownerid(app: Client, seller: Seller) -> None:
    await seller.ok("chatpost", channel="general", message="hello")
    params = {"type": "chatfetch", "sessionid": app.sessionid, "ownerid": app.ownerid, "channel": "general"}
    response = await app.http.post(CLIENT_PATH, params=params)
    body = response.json()
    assert response.status_code == 200, body
    assert set(body) == FETCH_KEYS
    assert body["ownerid"] == app.ownerid
    assert [m["message"] for m in body["messages"]] == ["hello"]


async def test_chatget_is_the_same_operation(app: Client, seller: Seller) -> None:
    await seller.ok("chatpost", channel="general", message="hello")
    fetched = await app.ok("chatfetch", channel="general")
    got = await app.ok("chatget", channel="general")
    assert set(got) == FETCH_KEYS
    assert got["messages"] == fetched["messages"]
    await app.fails("chatget", 403, "channel_not_found", channel="nope")


async def test_chatfetch_refusals_are_400_or_403(
    app: Client, seller: Seller, services: Services, clock: MovableClock
) -> None:
    statuses = Statuses()
    body = await statuses.fails(app, 403, "channel_not_found", channel="nope")
    assert body["message"] == "No chat channel named 'nope' exists."
    await statuses.fails(app, 400, "missing_parameter")
    await statuses.fails(app, 400, "parameter_too_long", channel="c" * 51)
    # Credentials: the document lists no 401 for Fetch Messages.
    await statuses.fails(app.fresh(), 403, "missing_session", channel="general")
    await statuses.fails(Client(app.http, app.ownerid, app.name, "f" * 32), 403, "session_not_found")
    await statuses.fails(Client(app.http, "", app.name, app.sessionid), 403, "missing_ownerid")
    await statuses.fails(
        Client(app.http, app.ownerid, "no such app", app.sessionid), 403, "unknown_application"
    )
    other = client_of(await create_seller(services, app.http, owner="someone", name="other"))
    await other.init()
    borrowed = Client(app.http, app.ownerid, app.name, other.sessionid)
    await statuses.fails(borrowed, 403, "session_not_found", channel="general")
    # A session that is not logged in: the application's `sessionunauthed` message.
    anonymous = app.fresh()
    await anonymous.init()
    body = await statuses.fails(anonymous, 403, "session_not_validated", channel="general")
    assert body["message"] == "Session is not validated"
    clock.advance(21600)
    await statuses.fails(app, 403, "session_expired", channel="general")
    assert statuses.seen <= FETCH_STATUSES


async def test_chatfetch_shows_only_this_applications_channel(
    app: Client, seller: Seller, services: Services
) -> None:
    other_seller = await create_seller(services, app.http, owner="someone", name="other")
    await other_seller.ok("addchannel", name="general")
    await other_seller.ok("chatpost", channel="general", message="elsewhere")
    await seller.ok("chatpost", channel="general", message="here")
    assert [m["message"] for m in (await app.ok("chatfetch", channel="general"))["messages"]] == ["here"]
    await other_seller.ok("addchannel", name="theirs")
    await app.fails("chatfetch", 403, "channel_not_found", channel="theirs")


async def test_a_throttled_chatfetch_is_429_with_retry_after(
    app: Client, seller: Seller, services: Services
) -> None:
    # The fixture's own calls count too: the limit is reached within a few calls.
    await seller.ok("updatesettings", clientratelimit=5)
    for _ in range(5):
        response = await app.call("chatfetch", channel="general")
        if response.status_code != 200:
            break
    body = response.json()
    assert (response.status_code, body["error"]) == (429, "rate_limited")
    assert body["success"] is False
    app.check_envelope(body)
    assert int(response.headers["Retry-After"]) >= 1


async def test_an_unexpected_fault_in_chatfetch_is_500(app: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*args: object) -> list[dict[str, Any]]:
        raise RuntimeError("database on fire")

    monkeypatch.setattr(chat, "messages", broken)
    response = await app.call("chatfetch", channel="general")
    body = response.json()
    assert (response.status_code, body["error"], body["success"]) == (500, "internal_error", False)
    app.check_envelope(body)
    assert "database on fire" not in response.text


async def test_chatfetch_shows_a_shortened_history_at_once(
    app: Client, seller: Seller, services: Services
) -> None:
    for n in range(4):
        await seller.ok("chatpost", channel="general", message=f"m{n}")
    await seller.ok("updatesettings", chathistory=2)
    assert [m["message"] for m in (await app.ok("chatfetch", channel="general"))["messages"]] == ["m2", "m3"]


# --- Send Message ------------------------------------------------------------------------------


async def test_chatsend_posts_as_the_sessions_user(app: Client, seller: Seller) -> None:
    body = await app.ok("chatsend", channel="general", message="hello")
    assert set(body) == {"success", "code", "message", "nonce", "ownerid"}
    assert body["message"] == "Successfully sent chat message"
    assert [(m["author"], m["role"]) for m in (await app.ok("chatfetch", channel="general"))["messages"]] == [
        ("kim", "user")
    ]


async def test_the_author_is_the_username_even_after_a_license_login(
    app: Client, seller: Seller, services: Services
) -> None:
    other = app.fresh()
    await other.init()
    key = await log_in(other, seller, "zoe")
    # The key zoe registered with logs zoe in again: the session's credential is the key.
    again = app.fresh()
    await again.init()
    await again.ok("license", key=key, hwid=HWID)
    await again.ok("chatsend", channel="general", message="it's me")
    messages = await chat.messages(services.db, seller.app_id, "general")
    assert [m["author"] for m in messages] == ["zoe"]


async def test_the_delay_counts_from_the_users_last_message(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await seller.ok("addchannel", name="slow", delay=10)
    await app.ok("chatsend", channel="slow", message="one")
    clock.advance(9)
    response = await app.call("chatsend", channel="slow", message="two")
    body = response.json()
    assert (response.status_code, body["error"]) == (429, "chat_delay")
    assert body["message"] == "Chat slower, you've hit the delay limit"
    assert response.headers["Retry-After"] == "1"
    # Others are not held back, nor is this user in another channel or by the owner's posts.
    zoe = await another_user(app, seller, "zoe")
    await zoe.ok("chatsend", channel="slow", message="zoe here")
    await app.ok("chatsend", channel="general", message="elsewhere")
    await seller.ok("chatpost", channel="slow", message="owner")
    clock.advance(1)  # 10 seconds after "one": the refused attempt did not restart the wait
    await app.ok("chatsend", channel="slow", message="two")
    clock.advance(3)
    response = await app.call("chatsend", channel="slow", message="three")
    assert (response.status_code, response.headers["Retry-After"]) == (429, "7")


async def test_the_delay_message_is_the_applications_own(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await seller.ok("setmessage", name="chatHitDelay", text="Slow down!")
    await seller.ok("addchannel", name="slow", delay=60)
    await app.ok("chatsend", channel="slow", message="one")
    body = await app.fails("chatsend", 429, "chat_delay", channel="slow", message="two")
    assert body["message"] == "Slow down!"


async def test_a_mute_holds_until_its_end_time_and_no_longer(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await seller.ok("muteuser", user="kim", time=60)
    body = await app.fails("chatsend", 403, "user_muted", channel="general", message="hi")
    assert str(START + 60) in body["message"]
    clock.advance(59)
    await app.fails("chatsend", 403, "user_muted", channel="general", message="hi")
    zoe = await another_user(app, seller, "zoe")
    await zoe.ok("chatsend", channel="general", message="not muted")
    # Fetching is not affected by a mute.
    await app.ok("chatfetch", channel="general")
    clock.advance(1)
    await app.ok("chatsend", channel="general", message="free again")


async def test_an_unmuted_user_can_send_at_once(app: Client, seller: Seller) -> None:
    await seller.ok("muteuser", user="kim", time=3600)
    await app.fails("chatsend", 403, "user_muted", channel="general", message="hi")
    await seller.ok("unmuteuser", user="kim")
    await app.ok("chatsend", channel="general", message="hi")


async def test_chatsend_message_rules(app: Client, services: Services, seller: Seller) -> None:
    await app.ok("chatsend", channel="general", message="m" * 2000)
    await app.fails("chatsend", 400, "parameter_too_long", channel="general", message="m" * 2001)
    await app.fails("chatsend", 400, "empty_message", channel="general", message="   ")
    await app.fails("chatsend", 400, "missing_parameter", channel="general")
    await app.fails("chatsend", 400, "missing_parameter", message="hi")
    await app.fails("chatsend", 400, "parameter_too_long", channel="c" * 51, message="hi")
    await app.ok("chatsend", channel="general", message="  spaced\n")
    messages = await chat.messages(services.db, seller.app_id, "general")
    assert [m["message"] for m in messages] == ["m" * 2000, "  spaced\n"]


async def test_chatsend_to_an_unknown_channel_is_404(app: Client) -> None:
    body = await app.fails("chatsend", 404, "channel_not_found", channel="nope", message="hi")
    assert body["message"] == "No chat channel named 'nope' exists."


async def test_chatsend_needs_a_logged_in_session(app: Client) -> None:
    anonymous = app.fresh()
    await anonymous.fails("chatsend", 401, "missing_session", channel="general", message="hi")
    await anonymous.init()
    body = await anonymous.fails("chatsend", 403, "session_not_validated", channel="general", message="hi")
    assert body["message"] == "Session is not validated"
    ghost = Client(app.http, app.ownerid, app.name, "f" * 32)
    await ghost.fails("chatsend", 403, "session_not_found", channel="general", message="hi")


async def test_a_deleted_user_cannot_send(app: Client, seller: Seller) -> None:
    await seller.ok("deluser", user="kim")
    await app.fails("chatsend", 403, "session_not_found", channel="general", message="hi")


async def test_chatsend_keeps_the_newest_messages(app: Client, seller: Seller, services: Services) -> None:
    await seller.ok("updatesettings", chathistory=3)
    for n in range(5):
        await app.ok("chatsend", channel="general", message=f"m{n}")
    assert [m["message"] for m in (await app.ok("chatfetch", channel="general"))["messages"]] == [
        "m2",
        "m3",
        "m4",
    ]


async def test_two_quick_messages_cannot_both_slip_under_the_delay(
    app: Client, seller: Seller, services: Services
) -> None:
    import asyncio

    await seller.ok("addchannel", name="slow", delay=30)
    responses: list[httpx.Response] = await asyncio.gather(
        *(app.call("chatsend", channel="slow", message=f"m{n}") for n in range(5))
    )
    assert sorted(r.status_code for r in responses) == [200, 429, 429, 429, 429]
    assert len(await chat.messages(services.db, seller.app_id, "slow")) == 1
