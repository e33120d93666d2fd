"""Oversized URLs and headers that reach the service are answered by it, in the path's dialect:
414 `uri_too_long` and 431 `headers_too_large`, client answers signed with the named
application's key (else the deployment's). Operations whose parameters are longer than the default
body limit allows read the larger body they declare, and no other operation does."""

from __future__ import annotations

import httpx
import pytest

from licensegate.domain import webhooks
from licensegate.domain.apps import CreatedApp
from licensegate.services import Services
from licensegate.signing import verify
from tests.helpers import SELLER_PATH, Seller

pytestmark = pytest.mark.anyio

CLIENT_PATHS = ("/api/1.0/", "/api/1.1/", "/api/1.2/", "/api/1.3/")


def signed_by(public_key: str, response: httpx.Response) -> bool:
    stamp = response.headers["x-signature-timestamp"]
    return verify(public_key, response.headers["x-signature-ed25519"], stamp.encode() + response.content)


async def test_a_long_query_string_is_a_signed_414_in_every_client_dialect(
    client: httpx.AsyncClient, created: CreatedApp
) -> None:
    padding = "a" * 20_000  # over the 16 KiB query limit, under the HTTP layer's 65,534 bytes
    for path in CLIENT_PATHS:
        response = await client.post(
            path, params={"type": "init", "ownerid": created.ownerid, "name": created.name, "x": padding}
        )
        assert response.status_code == 414, (path, response.text)
        body = response.json()
        assert (body["success"], body["error"], body["ownerid"]) == (False, "uri_too_long", created.ownerid)
        assert signed_by(created.public_key, response), path


async def test_an_unknown_application_gets_the_deployment_key(
    services: Services, client: httpx.AsyncClient
) -> None:
    deployment = (await services.signers.deployment(services.db, 0)).public_key
    response = await client.get("/api/1.3/", params={"type": "init", "x": "a" * 40_000})
    assert (response.status_code, response.json()["error"]) == (414, "uri_too_long")
    assert signed_by(deployment, response)


async def test_large_headers_are_a_signed_431_in_every_client_dialect(
    client: httpx.AsyncClient, created: CreatedApp
) -> None:
    for path in CLIENT_PATHS:
        response = await client.post(
            path,
            data={"type": "init", "ownerid": created.ownerid, "name": created.name},
            headers={"x-padding": "b" * 40_000},  # over the 32 KiB header limit
        )
        assert response.status_code == 431, (path, response.text)
        assert response.json()["error"] == "headers_too_large"
        assert signed_by(created.public_key, response), path


async def test_headers_under_the_limit_are_served(client: httpx.AsyncClient, created: CreatedApp) -> None:
    response = await client.post(
        "/api/1.0/",
        data={"type": "init", "ver": "1.0", "ownerid": created.ownerid, "name": created.name},
        headers={"x-padding": "b" * 30_000},
    )
    assert response.json()["success"] is True, response.text


async def test_the_seller_api_answers_414_and_431_as_json(seller: Seller, client: httpx.AsyncClient) -> None:
    long_url = await client.get(
        SELLER_PATH, params={"sellerkey": seller.key, "type": "addsub", "name": "x" * 20_000}
    )
    assert (long_url.status_code, long_url.json()["error"]) == (414, "uri_too_long")
    large_headers = await client.get(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "fetchallsubs"},
        headers={"x-padding": "b" * 40_000},
    )
    assert (large_headers.status_code, large_headers.json()["error"]) == (431, "headers_too_large")


async def test_webhook_bodies_at_their_maximum_length_are_read(
    seller: Seller, client: httpx.AsyncClient
) -> None:
    # Every character escaped: 3 bytes each, three times the default 64 KiB body limit allows.
    escaped = "%21" * webhooks.MAX_BODY
    content = f"type=testwebhook&webid=nosuchhook&body={escaped}".encode()
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key},
        content=content,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert response.json()["error"] != "request_too_large", response.text


async def test_other_operations_keep_the_default_body_limit(
    seller: Seller, client: httpx.AsyncClient
) -> None:
    content = ("type=addsub&level=1&name=x&pad=" + "a" * 70_000).encode()
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key},
        content=content,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert (response.status_code, response.json()["error"]) == (400, "request_too_large")
    assert "65536" in response.json()["message"]


async def test_the_client_endpoint_checks_a_body_against_its_operations_limit(
    client: httpx.AsyncClient, created: CreatedApp
) -> None:
    credentials = f"ownerid={created.ownerid}&name={created.name}&sessionid=nosuchsession"
    form = {"content-type": "application/x-www-form-urlencoded"}
    webhook = f"type=webhook&webid=x&{credentials}&body=" + "%21" * webhooks.MAX_BODY
    response = await client.post("/api/1.0/", content=webhook.encode(), headers=form)
    assert response.json()["error"] != "request_too_large", response.text
    assert signed_by(created.public_key, response)
    # The same size of body is refused to an operation with no larger limit, once it names it.
    init = f"type=init&ver=1.0&{credentials}&pad=" + "a" * 70_000
    response = await client.post("/api/1.0/", content=init.encode(), headers=form)
    assert (response.status_code, response.json()["error"]) == (400, "request_too_large")
    assert signed_by(created.public_key, response)
