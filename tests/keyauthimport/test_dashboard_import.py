"""The dashboard's "Import from KeyAuth" with a database dump (a mysqldump of the real MariaDB
KeyAuth database), on SQLite and PostgreSQL: uploaded, read and checked in the background, nothing
written until confirmed, then the application there with an `importkeyauth` audit entry; a file
that is not a dump ends in the reader's message; another account cannot see the import."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from licensegate.services import Services
from tests.keyauthdb import ALPHA
from tests.web.pages import Dashboard, browser, make_owner, text_of

pytestmark = pytest.mark.anyio
PATH = "/dashboard/apps/import-keyauth"


async def upload_dump(dash: Dashboard, content: bytes, app: str = "") -> str:
    await dash.get(PATH)
    sent = await dash.http.post(
        PATH,
        data={"csrf": dash.csrf, "source": "dump", "app": app},
        files={"dump": ("keyauth.sql", content, "application/sql")},
        follow_redirects=False,
    )
    assert sent.status_code in (302, 303), sent.text[:500]
    return sent.headers["location"]


async def app_ids(services: Services, ownerid: str) -> list[int]:
    rows = await services.db.fetch_all("SELECT id FROM apps WHERE ownerid = ?", ownerid)
    return [row["id"] for row in rows]


async def test_a_dump_imported_from_the_dashboard(services: Services, keyauth_dump: Path) -> None:
    await make_owner(services, "mover")
    await make_owner(services, "other")
    async with browser(services) as dash:
        await dash.sign_in("mover")
        content = await anyio.Path(keyauth_dump).read_bytes()
        where = await upload_dump(dash, content, app=ALPHA.name)
        await services.background.drain()
        checked = text_of((await dash.get(where)).text)
        assert "What the import will do" in checked
        assert ALPHA.name in checked
        assert await app_ids(services, ALPHA.ownerid) == []  # a dry run: nothing written

        await dash.post(f"{where}/confirm")
        await services.background.drain()
        done = text_of((await dash.get(where)).text)
        assert "Imported" in done
        [app_id] = await app_ids(services, ALPHA.ownerid)
        audit = await services.db.fetch_all(
            "SELECT action, target FROM audit_log WHERE app_id = ? AND action = 'importkeyauth'", app_id
        )
        assert [(row["action"], row["target"]) for row in audit] == [("importkeyauth", ALPHA.name)]
        # Confirming again imports nothing more.
        again = await dash.post(f"{where}/confirm")
        assert again.status_code == 200

    async with browser(services) as stranger:
        await stranger.sign_in("other")
        assert (await stranger.get(where)).status_code == 404


async def test_a_file_that_is_not_a_dump(services: Services) -> None:
    await make_owner(services, "mover")
    async with browser(services) as dash:
        await dash.sign_in("mover")
        where = await upload_dump(dash, b"this is not SQL at all\n")
        await services.background.drain()
        page = text_of((await dash.get(where)).text)
        assert "The import stopped" in page
