"""Numbers are ASCII decimal with bounds (issue 10 item 15): huge, exotic or foreign-script numbers
get a clear 400 naming the parameter, never a 500 and never a surprising value."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import totp
from licensegate.domain.errors import Refusal
from licensegate.operations.declarations import Param
from tests.helpers import Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
# Arabic-Indic three, a fullwidth one, a superscript two, an underscore separator, an exponent,
# the float words, a huge exponent and a hex literal: each something int() or float() would take.
NOT_DECIMAL = ["٣", "１", "²", "1_0", "1e3", "1E3", "inf", "nan", "-1e308", "1e308", "0x10", "+-1"]


@pytest.mark.parametrize("raw", ["1_0", "٣", "１", "²", "1e3", "1.0", " 1", "0x10", "--1"])
def test_whole_numbers_are_ascii_digits_with_an_optional_sign(raw: str) -> None:
    param = Param("amount", "int")
    with pytest.raises(Refusal) as refused:
        param.parse(raw)
    assert refused.value.error == "invalid_number"
    assert param.parse("-12") == -12
    assert param.parse("+7") == 7


@pytest.mark.parametrize("raw", NOT_DECIMAL)
def test_decimals_are_ascii_digits_and_a_fraction_without_exponent(raw: str) -> None:
    param = Param("expiry", "float")
    with pytest.raises(Refusal) as refused:
        param.parse(raw)
    assert refused.value.error == "invalid_number"
    assert param.parse("1.5") == 1.5
    assert param.parse("-0.25") == -0.25
    assert param.parse(".5") == 0.5
    assert param.parse("2.") == 2.0


@pytest.mark.parametrize(
    ("type_", "params", "name"),
    [
        ("add", {}, "expiry"),
        ("addtime", {}, "time"),
        ("adduser", {"user": "eve", "sub": "default"}, "expiry"),
        ("extend", {"user": "eve", "sub": "default"}, "expiry"),
    ],
)
async def test_day_counts_in_hostile_syntax_are_400_naming_the_parameter(
    seller: Seller, type_: str, params: dict[str, str], name: str
) -> None:
    for raw in NOT_DECIMAL:
        body = await seller.fails(type_, 400, "invalid_number", **{**params, name: raw})
        assert body["param"] == name, (raw, body)
        assert "decimal" in body["message"]


async def test_huge_negative_days_are_refused_not_a_fault(seller: Seller) -> None:
    # Within the syntax: 18 digits. The old parser took -1e308 and overflowed on the way to seconds.
    await seller.fails("add", 400, "number_out_of_range", expiry="-999999999999999999")
    await seller.fails("adduser", 400, "invalid_expiry", user="eve", sub="default", expiry="-99999999")


async def test_foreign_digits_never_count_as_numbers(seller: Seller) -> None:
    body = await seller.fails("add", 400, "invalid_number", expiry="1", amount="٣")
    assert body["param"] == "amount"
    assert (await seller.ok("fetchallkeys"))["keys"] == []  # nothing was made
    await seller.fails("addsellerkey", 400, "invalid_permissions", permissions="٣")


async def test_a_two_factor_code_in_foreign_digits_is_simply_wrong(
    seller: Seller, clock: MovableClock
) -> None:
    app = client_of(seller)
    await app.init()
    key = (await seller.ok("add", expiry=30))["key"]
    await app.ok("register", username="kim", key=key, hwid=HWID, **{"pass": "pw"})
    first = await app.ok("2faenable")
    secret = first["2fa"]["secret_code"]
    await app.fails("2faenable", 403, "otp_invalid", code="٣٣٣٣٣٣")
    await app.ok("2faenable", code=totp.code_at(secret, totp.step_of(clock.now())))
    clock.advance(30)
    login = {"username": "kim", "hwid": HWID, "pass": "pw"}
    code = totp.code_at(secret, totp.step_of(clock.now()))
    foreign = "".join(chr(0x0660 + int(digit)) for digit in code)  # the same code in Arabic-Indic
    await app.fails("login", 403, "otp_invalid", code=foreign, **login)
    await app.fails("login", 403, "otp_invalid", code="１２３４５６", **login)
    await app.ok("login", code=code, **login)
    assert totp.matching_step(secret, foreign, clock.now()) is None
