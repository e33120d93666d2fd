"""Seller API — chat messages: `fetchchatmessages` (newest first, by channel, author and text,
paged by id) and `delchatmessage` (one message, audited); the developer's posts reach clients
reading the channel (`chatget`) marked with role `developer`, in the unchanged answer shape."""

from __future__ import annotations

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.api.test_client_chat import FETCH_KEYS, MESSAGE_KEYS, START, log_in
from tests.helpers import Seller, client_of, create_seller

pytestmark = pytest.mark.anyio


async def test_the_developers_post_reaches_clients_marked_as_the_developers(
    seller: Seller, clock: MovableClock
) -> None:
    client = client_of(seller)
    await client.init()
    await log_in(client, seller, "kim")
    await seller.ok("addchannel", name="general")
    await client.ok("chatsend", channel="general", message="is the server down?")
    clock.advance(3)
    await seller.ok("chatpost", channel="general", message="Back in five minutes", author="Support")
    body = await client.ok("chatget", channel="general")
    assert set(body) == FETCH_KEYS
    assert body["messages"] == [
        {"author": "kim", "role": "user", "message": "is the server down?", "timestamp": START},
        {"author": "Support", "role": "developer", "message": "Back in five minutes", "timestamp": START + 3},
    ]
    assert all(set(message) == MESSAGE_KEYS for message in body["messages"])


async def test_fetchchatmessages_filters_and_pages_newest_first(seller: Seller, clock: MovableClock) -> None:
    await seller.ok("addchannel", name="general")
    await seller.ok("addchannel", name="news")
    assert (await seller.ok("fetchchatmessages"))["messages"] == []
    for i in range(5):
        await seller.ok("chatpost", channel="general", message=f"General {i}")
        clock.advance(1)
    await seller.ok("chatpost", channel="news", message="100% NEW", author="Team")
    body = await seller.ok("fetchchatmessages", limit=3)
    assert [m["message"] for m in body["messages"]] == ["100% NEW", "General 4", "General 3"]
    assert body["more"] is True
    first = body["messages"][0]
    assert set(first) == {"id", "channel", "author", "role", "message", "timestamp"}
    assert (first["channel"], first["author"], first["role"]) == ("news", "Team", "developer")
    rest = await seller.ok("fetchchatmessages", limit=3, before=body["messages"][-1]["id"])
    assert [m["message"] for m in rest["messages"]] == ["General 2", "General 1", "General 0"]
    assert rest["more"] is False
    assert len((await seller.ok("fetchchatmessages", channel="general"))["messages"]) == 5
    assert [m["message"] for m in (await seller.ok("fetchchatmessages", author="Team"))["messages"]] == [
        "100% NEW"
    ]
    assert [m["message"] for m in (await seller.ok("fetchchatmessages", search="new"))["messages"]] == [
        "100% NEW"
    ]
    assert (await seller.ok("fetchchatmessages", search="0%"))["messages"][0]["message"] == "100% NEW"
    assert (await seller.ok("fetchchatmessages", search="_"))["messages"] == []
    await seller.fails("fetchchatmessages", 404, "channel_not_found", channel="nope")
    await seller.fails("fetchchatmessages", 400, "parameter_too_long", search="s" * 101)
    await seller.fails("fetchchatmessages", 400, "number_out_of_range", limit=201)
    await seller.fails("fetchchatmessages", 400, "invalid_number", before="x")


async def test_delchatmessage_deletes_one_message_of_this_application(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await seller.ok("addchannel", name="general")
    await seller.ok("chatpost", channel="general", message="keep")
    await seller.ok("chatpost", channel="general", message="drop me")
    listed = (await seller.ok("fetchchatmessages"))["messages"]
    doomed = listed[0]["id"]
    other = await create_seller(services, client, owner="other", name="other app")
    await other.fails("delchatmessage", 404, "chat_message_not_found", id=doomed)
    assert await seller.ok("delchatmessage", id=doomed) == {
        "success": True,
        "message": "Successfully deleted message!",
    }
    assert [m["message"] for m in (await seller.ok("fetchchatmessages"))["messages"]] == ["keep"]
    await seller.fails("delchatmessage", 404, "chat_message_not_found", id=doomed)
    await seller.fails("delchatmessage", 400, "missing_parameter")
    await seller.fails("delchatmessage", 400, "invalid_number", id="abc")
    await seller.fails("delchatmessage", 400, "number_out_of_range", id=0)
    logs = (await seller.ok("fetchauditlogs"))["logs"]
    entry = next(log for log in logs if log["action"] == "delchatmessage")
    assert (entry["target"], entry["before"], entry["after"]) == (
        "channel:general",
        {"id": doomed, "author": "owner", "message": "drop me"},
        None,
    )
