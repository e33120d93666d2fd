"""docs/offline.md's verification examples, run as written against a license file a real
`licensegate serve` issued (SQLite and PostgreSQL): the Python one with `cryptography`, the
JavaScript one with Node's `node:crypto`. Each accepts the genuine file and refuses a tampered
one, another machine's and one the program's trust store does not know."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from licensegate_client import client as lg
from tests.live import LiveServer, seller_call

pytestmark = pytest.mark.server
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
DOC = Path(__file__).parents[2] / "docs" / "offline.md"


def example(language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)
    assert found, language
    return found.group(1)


async def issued_file(server: LiveServer, created: dict[str, str], key: str) -> str:
    async with lg.Client(
        server.url, ownerid=created["ownerid"], name="app", public_key=created["public_key"]
    ) as program:
        assert (await program.init()).success
        assert (await program.license(key, hwid=HWID)).success
        answer = await program.license_file()
        assert answer.success, answer.body
        text: str = answer["file"]
        return text


def test_the_python_and_javascript_examples_verify_a_file_issued_online(
    live_server: LiveServer, tmp_path: Path
) -> None:
    created = live_server.create_app("offline-docs", "app")
    key = seller_call(live_server, created["sellerkey"], "add", expiry="3").json()["key"]
    text = asyncio.run(issued_file(live_server, created, key))
    keys = seller_call(live_server, created["sellerkey"], "fetchlicensekeys").json()["keys"]
    trust = tmp_path / "trust.json"
    trust.write_text(json.dumps({item["kid"]: item["public_key"] for item in keys}))
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    genuine = tmp_path / "genuine.lic"
    genuine.write_text(text)
    head, body, signature = text.splitlines()
    changed = base64.b64decode(body).replace(HWID.encode(), b"S-1-5-21-0000000000-2222222222-3333333333-1001")
    tampered = tmp_path / "tampered.lic"
    tampered.write_text(f"{head}\n{base64.b64encode(changed).decode()}\n{signature}\n")
    (tmp_path / "verify.py").write_text(example("python"))
    (tmp_path / "verify.mjs").write_text(example("javascript"))
    node = shutil.which("node")
    assert node, "Node 20 runs the JavaScript example"
    programs = ([sys.executable, str(tmp_path / "verify.py")], [node, str(tmp_path / "verify.mjs")])
    for program in programs:

        def run(path: Path, trusted: Path = trust, hwid: str = HWID, program: list[str] = program) -> str:
            done = subprocess.run(
                [*program, str(path), str(trusted), created["ownerid"], "app", hwid],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert not done.stderr, done.stderr
            return done.stdout.strip()

        payload = json.loads(run(genuine))
        assert (payload["user"], payload["key"], payload["hwid"]) == (key, key, HWID)
        assert payload["subscriptions"][0]["name"] == "default"
        assert run(tampered) == "refused: tampered"
        assert run(genuine, hwid="another-machine-000000000001") == "refused: wrong_hwid"
        assert run(genuine, trusted=empty) == "refused: unknown_key"
