"""Client API — Global Variable (`var`), Get User Variable (`getvar`) and Set User Variable
(`setvar`)."""

from __future__ import annotations

import httpx
import pytest

from licensegate.services import Services
from tests.helpers import Client, Seller, client_of, create_seller

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
ENVELOPE = {"success", "code", "message", "nonce", "ownerid"}


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def log_in(app: Client, seller: Seller, name: str = "kim") -> None:
    key = (await seller.ok("add", expiry=30))["key"]
    await app.ok("register", username=name, key=key, hwid=HWID, **{"pass": "pw"})


# --- var ------------------------------------------------------------------------------------------


async def test_var_answers_the_value_in_message_and_value(app: Client, seller: Seller) -> None:
    await seller.ok("addvar", name="motd", data="  Hello, world!  ", authed=0)
    body = await app.ok("var", varid="motd")
    assert set(body) == ENVELOPE | {"value"}
    assert body["message"] == body["value"] == "  Hello, world!  "


async def test_var_of_an_authed_variable_needs_a_logged_in_session(app: Client, seller: Seller) -> None:
    await seller.ok("addvar", name="secret", data="42", authed=1)
    body = await app.fails("var", 403, "session_not_validated", varid="secret")
    assert body["message"] == "Session is not validated"
    await log_in(app, seller)
    assert (await app.ok("var", varid="secret"))["value"] == "42"


async def test_var_refusal_uses_the_applications_own_sessionunauthed_message(
    app: Client, seller: Seller
) -> None:
    await seller.ok("addvar", name="secret", data="42")  # authed by default
    await seller.ok("setmessage", name="sessionunauthed", text="Log in first, please.")
    body = await app.fails("var", 403, "session_not_validated", varid="secret")
    assert body["message"] == "Log in first, please."


async def test_var_of_an_open_variable_works_logged_in_too(app: Client, seller: Seller) -> None:
    await seller.ok("addvar", name="open", data="v", authed=0)
    await log_in(app, seller)
    assert (await app.ok("var", varid="open"))["message"] == "v"


async def test_var_refuses_unknown_missing_and_too_long_names(app: Client, seller: Seller) -> None:
    await app.fails("var", 404, "variable_not_found", varid="nope")
    await app.fails("var", 400, "missing_parameter")
    await app.fails("var", 400, "parameter_too_long", varid="v" * 65)


async def test_var_does_not_read_another_applications_variable(
    app: Client, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other")
    await other.ok("addvar", name="theirs", data="x", authed=0)
    await app.fails("var", 404, "variable_not_found", varid="theirs")


# --- getvar / setvar --------------------------------------------------------------------------------


async def test_setvar_then_getvar_round_trips_the_data_as_sent(app: Client, seller: Seller) -> None:
    await log_in(app, seller)
    body = await app.ok("setvar", var="notes", data="  line one\nline two  ")
    assert set(body) == ENVELOPE
    assert body["message"] == "Successfully set variable"
    got = await app.ok("getvar", var="notes")
    assert set(got) == ENVELOPE | {"response"}
    assert got["message"] == "Successfully retrieved variable"
    assert got["response"] == "  line one\nline two  "
    stored = await seller.ok("getvar", user="kim", var="notes")
    assert (stored["response"], stored["readOnly"]) == ("  line one\nline two  ", 0)


async def test_setvar_replaces_an_existing_value(app: Client, seller: Seller) -> None:
    await log_in(app, seller)
    await app.ok("setvar", var="level", data="1")
    await app.ok("setvar", var="level", data="2")
    assert (await app.ok("getvar", var="level"))["response"] == "2"


async def test_getvar_and_setvar_need_a_logged_in_session(app: Client, seller: Seller) -> None:
    body = await app.fails("getvar", 403, "session_not_validated", var="x")
    assert body["message"] == "Session is not validated"
    await app.fails("setvar", 403, "session_not_validated", var="x", data="y")
    await app.fresh().fails("getvar", 401, "missing_session", var="x")


async def test_getvar_of_a_missing_variable_is_404(app: Client, seller: Seller) -> None:
    await log_in(app, seller)
    await app.fails("getvar", 404, "variable_not_found", var="never-set")


async def test_getvar_sees_only_the_sessions_own_user(app: Client, seller: Seller) -> None:
    await log_in(app, seller, name="kim")
    await app.ok("setvar", var="color", data="red")
    other = app.fresh()
    await other.init()
    await log_in(other, seller, name="lee")
    await other.fails("getvar", 404, "variable_not_found", var="color")
    await other.ok("setvar", var="color", data="blue")
    assert (await app.ok("getvar", var="color"))["response"] == "red"
    assert (await other.ok("getvar", var="color"))["response"] == "blue"


async def test_getvar_reads_a_variable_the_owner_set(app: Client, seller: Seller) -> None:
    await log_in(app, seller)
    await seller.ok("setvar", user="kim", var="plan", data="gold")
    assert (await app.ok("getvar", var="plan"))["response"] == "gold"


async def test_setvar_refuses_a_read_only_variable(app: Client, seller: Seller) -> None:
    await log_in(app, seller)
    await seller.ok("setvar", user="kim", var="credits", data="10", readOnly=1)
    body = await app.fails("setvar", 403, "variable_read_only", var="credits", data="9999")
    assert "read-only" in body["message"]
    assert (await app.ok("getvar", var="credits"))["response"] == "10"
    await seller.ok("setvar", user="kim", var="credits", data="11", readOnly=0)
    await app.ok("setvar", var="credits", data="12")
    assert (await app.ok("getvar", var="credits"))["response"] == "12"


async def test_setvar_leaves_the_read_only_flag_of_a_writable_variable_alone(
    app: Client, seller: Seller
) -> None:
    await log_in(app, seller)
    await app.ok("setvar", var="mine", data="a")
    await app.ok("setvar", var="mine", data="b")
    listed = await seller.ok("fetchalluservars", user="kim", var="mine")
    assert [(v["data"], v["readOnly"]) for v in listed["vars"]] == [("b", 0)]


async def test_setvar_validates_its_parameters(app: Client, seller: Seller) -> None:
    await log_in(app, seller)
    await app.fails("setvar", 400, "parameter_too_long", var="notes", data="x" * 501)
    await app.ok("setvar", var="notes", data="x" * 500)
    assert (await app.ok("getvar", var="notes"))["response"] == "x" * 500
    await app.fails("setvar", 400, "missing_parameter", var="notes")
    await app.fails("setvar", 400, "missing_parameter", data="d")
    await app.fails("setvar", 400, "parameter_too_long", var="v" * 65, data="d")
    await app.fails("getvar", 400, "missing_parameter")
    await app.fails("getvar", 400, "parameter_too_long", var="v" * 65)
