"""bench/floor.py: the floor's answers are what it claims to measure (a real signature, a real
session check), so its figures bound a real re-check."""

from __future__ import annotations

import httpx
import orjson
import pytest
from bench import floor

from licensegate.signing import new_seed, public_key_of, verify

pytestmark = pytest.mark.anyio


async def test_the_floor_signs_a_real_recheck_and_refuses_a_wrong_key() -> None:
    seed = new_seed()
    app = floor.create_app(seed)
    session, (key, hwid, _user) = next(iter(floor.floor_sessions().items()))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://floor") as http:
        assert (await http.get("/healthz")).status_code == 200
        fixed = await http.post("/fixed?type=license")
        assert "x-signature-ed25519" not in fixed.headers
        for path, success in (
            (f"/recheck?type=license&sessionid={session}&key={key}&hwid={hwid}", True),
            (f"/recheck?type=license&sessionid={session}&key=KEY-other&hwid={hwid}", False),
            ("/signed?type=license", True),
        ):
            answer = await http.post(path)
            signed = answer.headers["x-signature-timestamp"].encode() + answer.content
            assert verify(public_key_of(seed), answer.headers["x-signature-ed25519"], signed)
            assert orjson.loads(answer.content)["success"] is success
