"""Every client answer is JSON signed by a key the program can know, even when the service is at
fault: an application whose keys were sealed under another deployment key (made by `create-app`
run with another key file) is answered a signed `internal_error` on every dialect's path."""

from __future__ import annotations

import httpx
import pytest

from licensegate import keyring
from licensegate.domain.apps import create_application
from licensegate.secretbox import SecretBox
from licensegate.services import Services
from licensegate.signing import verify

pytestmark = pytest.mark.anyio


async def test_an_application_whose_keys_do_not_open_gets_signed_json_faults(
    services: Services, client: httpx.AsyncClient
) -> None:
    elsewhere = SecretBox(keyring.Keyring((keyring.new_key(),)))
    created = await create_application(
        services.db, elsewhere, owner="owner", name="app", now=services.clock.now()
    )
    deployment = (await services.signers.deployment(services.db, 0)).public_key
    for path in ("/api/1.0/", "/api/1.1/", "/api/1.2/", "/api/1.3/"):
        response = await client.post(
            path, params={"type": "init", "ver": "1.0", "ownerid": created.ownerid, "name": "app"}
        )
        assert response.status_code == 500, (path, response.text)
        assert response.headers["content-type"] == "application/json"
        stamp = response.headers["x-signature-timestamp"]
        assert verify(deployment, response.headers["x-signature-ed25519"], stamp.encode() + response.content)
        body = response.json()
        assert (body["success"], body["error"], body["ownerid"]) == (False, "internal_error", created.ownerid)
        assert body["request_id"]
    assert await services.db.fetch_value("SELECT COUNT(*) FROM sessions") == 0
