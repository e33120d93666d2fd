"""Each application's secret and Ed25519 key pair: made with it, sealed at rest, shown and rotated
through the seller API (owner only, audited without the secret), provisioned for applications
made before keys existed, and re-sealed when the deployment key rotates."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from licensegate import keyring, signing
from licensegate.domain import appkeys
from licensegate.domain.sealed import reseal_all
from licensegate.secretbox import SecretBox, is_sealed
from licensegate.services import Services
from tests.helpers import Seller
from tests.test_cli import run

pytestmark = pytest.mark.anyio
HEX64 = re.compile(r"[0-9a-f]{64}")


async def stored(services: Services, app_id: int) -> dict[str, str]:
    row = await services.db.fetch_one("SELECT secret, signing_key, public_key FROM apps WHERE id = ?", app_id)
    assert row is not None
    return dict(row)


async def test_an_application_is_made_with_sealed_keys(seller: Seller, services: Services) -> None:
    keys = await seller.ok("getappkeys")
    assert HEX64.fullmatch(keys["public_key"])
    assert HEX64.fullmatch(keys["secret"])
    row = await stored(services, seller.app_id)
    assert is_sealed(row["secret"])
    assert is_sealed(row["signing_key"])
    assert keys["secret"] not in str(row)
    assert row["public_key"] == keys["public_key"]
    signer = services.signers.signer(row["signing_key"])
    assert signer.public_key == keys["public_key"]
    assert signing.verify(keys["public_key"], signer.sign(b"123body"), b"123body")
    assert not signing.verify(keys["public_key"], signer.sign(b"123body"), b"123bodY")


async def test_rotation_changes_each_key_and_is_audited_without_the_secret(
    seller: Seller, services: Services
) -> None:
    before = await seller.ok("getappkeys")
    rotated = await seller.ok("rotatesigningkey")
    assert rotated["public_key"] != before["public_key"]
    secret = (await seller.ok("rotatesecret"))["secret"]
    assert HEX64.fullmatch(secret)
    assert secret != before["secret"]
    after = await seller.ok("getappkeys")
    assert after == {**after, "public_key": rotated["public_key"], "secret": secret}
    row = await stored(services, seller.app_id)
    signer = services.signers.signer(row["signing_key"])
    assert signer.public_key == rotated["public_key"]
    audit = json.dumps(await services.db.fetch_all("SELECT * FROM audit_log WHERE app_id = ?", seller.app_id))
    assert "rotatesigningkey" in audit
    assert "rotatesecret" in audit
    assert secret not in audit
    assert before["secret"] not in audit


async def test_seller_log_and_team_keys_never_see_the_secret(seller: Seller, services: Services) -> None:
    await seller.ok("updatesettings", sellerlogs="1")
    secret = (await seller.ok("getappkeys"))["secret"]
    log = json.dumps(await services.db.fetch_all("SELECT * FROM seller_log WHERE app_id = ?", seller.app_id))
    assert "getappkeys" in log
    assert secret not in log
    limited = (await seller.ok("addsellerkey", permissions="licenses,users"))["sellerkey"]
    await seller.fails("getappkeys", 403, "permission_denied", sellerkey=limited)
    await seller.fails("rotatesecret", 403, "permission_denied", sellerkey=limited)


async def test_applications_made_before_keys_existed_get_them_once(
    seller: Seller, services: Services
) -> None:
    clear = "ab" * 32
    # Raw: the row as a version before signing keys stored it (a clear secret, no keys).
    await services.db.execute(
        "UPDATE apps SET secret = ?, signing_key = NULL, public_key = NULL WHERE id = ?", clear, seller.app_id
    )
    # Several workers reaching it at once: one provisions, the others use what it stored.
    sealed = await asyncio.gather(
        *(services.signers.sealed_keys(services.db, seller.app_id, None, clear) for _ in range(5))
    )
    row = await stored(services, seller.app_id)
    assert {services.signers.signer(s[0]).public_key for s in sealed} == {row["public_key"]}
    assert {services.signers.secret(s[1]) for s in sealed} == {clear}
    assert is_sealed(row["secret"])
    assert (await seller.ok("getappkeys"))["secret"] == clear  # the old secret is kept, now sealed
    assert await appkeys.provision_all(services.db, services.secrets) == 0


async def test_the_deployment_key_is_made_once_and_kept(services: Services) -> None:
    first = await services.signers.deployment(services.db, 1)
    again = await appkeys.deployment_public_key(services.db, services.secrets, 2)
    assert first.public_key == again
    assert HEX64.fullmatch(again)


async def test_reseal_moves_every_value_to_the_new_key(
    seller: Seller, services: Services, tmp_path: Path
) -> None:
    keys = await seller.ok("getappkeys")
    await appkeys.deployment_public_key(services.db, services.secrets, 1)
    old_ring = services.secrets.keyring
    new_box = SecretBox(keyring.Keyring((keyring.new_key(), *old_ring.keys)))
    changed = await reseal_all(services.db, new_box, 1)
    assert changed >= 3  # the secret, the signing key and the deployment's key
    row = await stored(services, seller.app_id)
    assert not new_box.needs_resealing(row["secret"])
    only_new = SecretBox(keyring.Keyring((new_box.keyring.current,)))
    assert (await appkeys.client_keys(services.db, only_new, seller.app_id)) == appkeys.ClientKeys(
        keys["public_key"], keys["secret"]
    )
    assert await reseal_all(services.db, new_box, 1) == 0


def test_cli_public_key_and_rotate_key(db_url: str, tmp_path: Path) -> None:
    created = json.loads(run(["create-app", "--owner", "ann", "--name", "Tool"], db_url, tmp_path).stdout)
    public = run(["public-key"], db_url, tmp_path)
    assert public.returncode == 0, public.stderr
    assert HEX64.fullmatch(public.stdout.strip())
    key_file = tmp_path / keyring.KEY_FILE_NAME
    before = key_file.read_text()
    rotated = run(["rotate-key"], db_url, tmp_path)
    assert rotated.returncode == 0, rotated.stderr
    assert "re-sealed" in rotated.stderr
    after = key_file.read_text()
    assert after != before
    assert len(after.split()) == 1  # the old key is gone once everything was re-sealed
    assert run(["public-key"], db_url, tmp_path).stdout == public.stdout  # keys survive rotation
    assert created["secret"] not in rotated.stderr + rotated.stdout


def test_cli_rotate_key_with_a_configured_key_explains_the_steps(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    done = run(["rotate-key"], url, tmp_path, LICENSEGATE_DEPLOYMENT_KEY="00" * 32)
    assert done.returncode == 1
    assert "LICENSEGATE_DEPLOYMENT_OLD_KEYS" in done.stderr
