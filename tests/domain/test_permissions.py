"""Permission areas, and the identity of an account acting on an application without a seller key."""

from __future__ import annotations

from typing import get_args

import httpx
import pytest

from licensegate.domain import permissions
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import AREAS, Area
from licensegate.services import Services
from tests.helpers import Seller, create_seller

pytestmark = pytest.mark.anyio


def test_every_area_name_has_exactly_one_bit() -> None:
    assert list(AREAS) == list(get_args(Area))
    bits = list(AREAS.values())
    assert all(bit & (bit - 1) == 0 for bit in bits)  # one bit each
    assert len(set(bits)) == len(bits)


# --- the identity of an account acting without a seller key -----------------------------------


async def _account_id(services: Services, username: str) -> int:
    found: int = await services.db.fetch_value("SELECT id FROM accounts WHERE username = ?", username)
    return found


async def test_an_owner_signed_in_has_every_area_and_sees_everything(
    services: Services, seller: Seller
) -> None:
    for account_id in (None, await _account_id(services, "owner")):
        identity = await permissions.identity_of_account(services.db, seller.app_id, account_id)
        assert (identity.role, identity.permissions, identity.key_id) == ("owner", permissions.ALL, None)
        assert identity.scope == permissions.Scope(seller.app_id)


async def test_team_accounts_signed_in_keep_their_roles_limits(services: Services, seller: Seller) -> None:
    await seller.ok("addAccount", role="Manager", user="mia", perms="licenses,logs", **{"pass": "pw"})
    await seller.ok("addAccount", role="Reseller", user="rex", keylevels="1,2", **{"pass": "pw"})
    manager = await permissions.identity_of_account(
        services.db, seller.app_id, await _account_id(services, "mia")
    )
    assert (manager.role, permissions.names(manager.permissions)) == ("manager", ["licenses", "logs"])
    assert manager.scope.reseller is None
    rex = await _account_id(services, "rex")
    reseller = await permissions.identity_of_account(services.db, seller.app_id, rex)
    assert permissions.names(reseller.permissions) == ["licenses", "users"]
    assert reseller.scope == permissions.Scope(seller.app_id, permissions.Reseller(rex, "rex", ("1", "2")))
    assert reseller.scope.reseller_id == rex


async def test_accounts_without_a_part_in_the_application_are_refused(
    services: Services, seller: Seller, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="olga", name="other")
    await other.ok("addAccount", role="Manager", user="max", **{"pass": "pw"})
    await seller.ok("addAccount", role="Reseller", user="ria", **{"pass": "pw"})
    await seller.ok("editreseller", username="ria", disabled=1)
    cases = [
        (await _account_id(services, "olga"), "account_not_in_team"),
        (await _account_id(services, "max"), "account_not_in_team"),
        (10**9, "account_not_in_team"),
        (await _account_id(services, "ria"), "account_disabled"),
    ]
    for account_id, error in cases:
        with pytest.raises(Refusal) as refused:
            await permissions.identity_of_account(services.db, seller.app_id, account_id)
        assert refused.value.error == error
    with pytest.raises(Refusal) as missing:
        await permissions.identity_of_account(services.db, 10**9, None)
    assert missing.value.error == "app_not_found"
