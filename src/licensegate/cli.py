"""The `licensegate` command: serve, migrate, create-app, openapi, reference."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence

from licensegate.config import ENV_PREFIX, ConfigError, Settings, with_markdown_table


class CommandError(Exception):
    """A failure the user can fix; printed as one line on stderr."""


def _settings(database: str | None) -> Settings:
    if database:
        os.environ[ENV_PREFIX + "DATABASE_URL"] = database
    return Settings.from_env()


def cmd_migrate(args: argparse.Namespace) -> int:
    from licensegate.store import migrate

    settings = _settings(args.database)
    revision = migrate.upgrade(settings.database_url)
    print(f"database is at schema revision {revision}", file=sys.stderr)
    return 0


def cmd_create_app(args: argparse.Namespace) -> int:
    from licensegate.clock import SystemClock
    from licensegate.domain.apps import create_application
    from licensegate.store import migrate
    from licensegate.store.database import open_database

    settings = _settings(args.database)
    migrate.ensure_schema(settings.database_url)

    async def run() -> dict[str, str]:
        db = await open_database(settings.database_url, pool_size=1)
        try:
            created = await create_application(db, owner=args.owner, name=args.name, now=SystemClock().now())
        finally:
            await db.close()
        return {"ownerid": created.ownerid, "name": created.name, "sellerkey": created.sellerkey}

    print(json.dumps(asyncio.run(run())))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from granian.constants import Interfaces, Loops
    from granian.server import Server

    from licensegate.store import migrate

    for flag, name in ((args.host, "HOST"), (args.port, "PORT"), (args.workers, "WORKERS")):
        if flag is not None:
            os.environ[ENV_PREFIX + name] = str(flag)
    settings = _settings(args.database)  # validates everything before workers start
    migrate.ensure_schema(settings.database_url)
    print(
        f"licensegate serving on http://{settings.host}:{settings.port} "
        f"({settings.workers} worker(s), {settings.database_url.split(':', 1)[0]})",
        file=sys.stderr,
    )
    Server(
        "licensegate.app:create_app",
        address=settings.host,
        port=settings.port,
        interface=Interfaces.ASGI,
        workers=settings.workers,
        loop=Loops.uvloop,
        factory=True,
        log_level=settings.log_level,  # type: ignore[arg-type]
        log_access=False,
        backlog=2048,
    ).serve()
    return 0


def cmd_openapi(_args: argparse.Namespace) -> int:
    from licensegate.api import openapi

    print(json.dumps(openapi.document(), indent=2))
    return 0


def cmd_reference(args: argparse.Namespace) -> int:
    from pathlib import Path

    from licensegate.api import openapi

    out = Path(args.output)
    (out / "api").mkdir(parents=True, exist_ok=True)
    for iface in openapi.interfaces():
        (out / "api" / f"{iface.name}.md").write_text(openapi.markdown(iface))
    (out / "openapi.json").write_text(json.dumps(openapi.document(), indent=2) + "\n")
    operations = out / "operations.md"
    if operations.exists():  # the settings table inside the hand-written operations guide
        operations.write_text(with_markdown_table(operations.read_text()))
    print(f"wrote the API reference under {out}", file=sys.stderr)
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="licensegate", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    db_help = "database URL (default: SQLite file in ./data, or $LICENSEGATE_DATABASE_URL)"

    serve = sub.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.add_argument("--workers", type=int, help="worker processes (default 1)")
    serve.add_argument("--database", help=db_help)
    serve.set_defaults(run=cmd_serve)

    migrate = sub.add_parser("migrate", help="bring the database schema up to date")
    migrate.add_argument("--database", help=db_help)
    migrate.set_defaults(run=cmd_migrate)

    create = sub.add_parser("create-app", help="create an application (and its owner account)")
    create.add_argument("--owner", required=True, help="owner account name (created if missing)")
    create.add_argument("--name", required=True, help="application name")
    create.add_argument("--database", help=db_help)
    create.set_defaults(run=cmd_create_app)

    spec = sub.add_parser("openapi", help="print the OpenAPI document of both APIs")
    spec.set_defaults(run=cmd_openapi)

    reference = sub.add_parser(
        "reference",
        help="write docs/api/*.md, docs/openapi.json and the settings table of docs/operations.md",
    )
    reference.add_argument("--output", default="docs", help="documentation folder (default: docs)")
    reference.set_defaults(run=cmd_reference)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    from licensegate.domain.errors import Refusal
    from licensegate.store.database import DatabaseError

    args = parser().parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except (CommandError, ConfigError, DatabaseError) as exc:
        print(f"licensegate: {exc}", file=sys.stderr)
    except Refusal as exc:
        print(f"licensegate: {exc.message}", file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    return 1
