"""The `licensegate` command and its subcommands (`licensegate --help` lists them all)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from licensegate.config import ENV_PREFIX, ConfigError, Settings, with_markdown_table

if TYPE_CHECKING:
    from pathlib import Path

    from licensegate.domain.accounts import Account
    from licensegate.domain.keyauthimport.records import Source
    from licensegate.domain.keyauthimport.writer import Options as ImportOptions
    from licensegate.passwords import Passwords
    from licensegate.secretbox import SecretBox
    from licensegate.store.database import Database

T = TypeVar("T")


class CommandError(Exception):
    """A failure the user can fix; printed as one line on stderr."""


def _settings(database: str | None) -> Settings:
    if database:
        os.environ[ENV_PREFIX + "DATABASE_URL"] = database
    return Settings.from_env()


def _with_database(
    settings: Settings,
    work: Callable[[Database, SecretBox], Awaitable[T]],
    box: SecretBox | None = None,
    *,
    answer_timeout: float = 5.0,
) -> T:
    """Run `work` on the database and the deployment key (the key file is made if missing),
    once the database is found sealed under that key (`deploymentkey.check`).
    `answer_timeout`: how long PostgreSQL's answer to one statement is waited for."""
    from licensegate.clock import SystemClock
    from licensegate.domain import deploymentkey
    from licensegate.services import open_secretbox
    from licensegate.store.database import open_database

    opened = box or open_secretbox(settings)

    async def run() -> T:
        db = await open_database(settings.database_url, pool_size=1, answer_timeout=answer_timeout)
        try:
            await deploymentkey.check(db, opened, SystemClock().now())
            return await work(db, opened)
        finally:
            await db.close()

    return asyncio.run(run())


async def _nothing(_db: Database, _box: SecretBox) -> None:
    return None


def check_deployment_key(settings: Settings) -> None:
    """Refuse a database sealed under another deployment key (recording the key on one that
    records none yet)."""
    _with_database(settings, _nothing)


def _provision(settings: Settings) -> None:
    """Keys for applications made before they existed, and secrets stored in clear before they
    were sealed (after a migration)."""
    from licensegate.domain.appkeys import provision_all
    from licensegate.domain.sealed import seal_clear

    done = _with_database(settings, provision_all)
    if done:
        print(f"gave {done} application(s) their signing keys", file=sys.stderr)
    sealed = _with_database(settings, seal_clear)
    if sealed:
        print(f"sealed {sealed} secret(s) and session id(s) stored in clear", file=sys.stderr)


def cmd_migrate(args: argparse.Namespace) -> int:
    from licensegate.store import migrate

    settings = _settings(args.database)
    print(f"licensegate: {where(settings)}", file=sys.stderr)
    revision = migrate.upgrade(settings.database_url)
    _provision(settings)
    print(f"database is at schema revision {revision}", file=sys.stderr)
    return 0


def where(settings: Settings) -> str:
    """The absolute places a command uses, in one line for stderr."""
    from licensegate.domain import filestore
    from licensegate.store import migrate

    return (
        f"database {migrate.location(settings.database_url)}, "
        f"files in {filestore.location(settings.database_url, settings.data_dir, settings.files_dir)}"
    )


def create_app(settings: Settings, owner: str, name: str) -> dict[str, str]:
    """Create the owner account if missing and its application `name` (what `create-app` prints)."""
    from licensegate.clock import SystemClock
    from licensegate.domain.apps import create_application
    from licensegate.store import migrate

    migrate.require_schema(settings.database_url)

    async def run(db: Database, box: SecretBox) -> dict[str, str]:
        created = await create_application(db, box, owner=owner, name=name, now=SystemClock().now())
        return {
            "ownerid": created.ownerid,
            "name": created.name,
            "sellerkey": created.sellerkey,
            "public_key": created.public_key,
            "secret": created.secret,
        }

    return _with_database(settings, run)


def cmd_create_app(args: argparse.Namespace) -> int:
    settings = _settings(args.database)
    created = create_app(settings, args.owner, args.name)
    print(f"licensegate: created in {where(settings)}", file=sys.stderr)
    print(json.dumps(created))
    return 0


def _read_password(args: argparse.Namespace) -> str:
    """From standard input with --password-stdin (scripts), else asked twice on the terminal."""
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        import getpass

        if not sys.stdin.isatty():
            raise CommandError("no terminal to ask for the password on: pass it with --password-stdin")
        password = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != password:
            raise CommandError("the two passwords differ")
    if not password:
        raise CommandError("the password is empty")
    return password


def _with_passwords(settings: Settings, work: Callable[[Database, Passwords, int], Awaitable[T]]) -> T:
    """Run `work(db, passwords, now)` on a migrated database, hashing at the configured argon2 cost."""
    from licensegate.clock import SystemClock
    from licensegate.passwords import Passwords
    from licensegate.store import migrate

    migrate.require_schema(settings.database_url)

    async def run(db: Database, _box: SecretBox) -> T:
        passwords = Passwords(
            settings.argon2_time_cost, settings.argon2_memory_kib, settings.argon2_parallelism, 1
        )
        try:
            return await work(db, passwords, SystemClock().now())
        finally:
            passwords.close()

    return _with_database(settings, run)


def create_account(
    settings: Settings, username: str, password: str, email: str | None = None
) -> dict[str, str | None]:
    """Create an owner account that can sign in to the dashboard (what `create-account` prints)."""
    from licensegate.domain import accounts

    async def work(db: Database, passwords: Passwords, now: int) -> Account:
        return await accounts.create_owner(
            db, passwords, username=username, password=password, email=email, now=now
        )

    account = _with_passwords(settings, work)
    return {"username": account.username, "role": account.role, "ownerid": account.ownerid}


def cmd_create_account(args: argparse.Namespace) -> int:
    password = _read_password(args)
    print(json.dumps(create_account(_settings(args.database), args.username, password, args.email)))
    return 0


def cmd_set_password(args: argparse.Namespace) -> int:
    from licensegate.domain import accounts

    password = _read_password(args)

    async def work(db: Database, passwords: Passwords, _now: int) -> Account:
        return await accounts.set_password(db, passwords, args.username, password)

    account = _with_passwords(_settings(args.database), work)
    print(f"the password of {account.username} is set; its dashboard sessions have ended", file=sys.stderr)
    return 0


def _setup_link(settings: Settings) -> str | None:
    """When nobody can sign in to the dashboard yet: a one-time link to create the owner account."""
    from licensegate.clock import SystemClock
    from licensegate.domain import accounts, setuplinks

    async def work(db: Database, _box: SecretBox) -> str | None:
        if await accounts.any_can_sign_in(db):
            return None
        return await setuplinks.issue(db, SystemClock().now())

    token = _with_database(settings, work)
    return None if token is None else f"{settings.public_url}{setuplinks.PATH}?token={token}"


def cmd_public_key(args: argparse.Namespace) -> int:
    """The deployment's own public key: it signs answers that name no known application."""
    from licensegate.clock import SystemClock
    from licensegate.domain.appkeys import deployment_public_key
    from licensegate.store import migrate

    settings = _settings(args.database)
    migrate.require_schema(settings.database_url)

    async def run(db: Database, box: SecretBox) -> str:
        return await deployment_public_key(db, box, SystemClock().now())

    print(_with_database(settings, run))
    return 0


async def _resealing(db: Database, box: SecretBox) -> int:
    from licensegate.clock import SystemClock
    from licensegate.domain.sealed import reseal_all

    return await reseal_all(db, box, SystemClock().now())


def cmd_rotate_key(args: argparse.Namespace) -> int:
    """A new deployment key in the key file, every sealed value re-sealed under it, then the old
    key dropped from the file (kept with --keep-old)."""
    from licensegate import keyring
    from licensegate.secretbox import SecretBox
    from licensegate.store import migrate

    settings = _settings(args.database)
    if settings.deployment_key:
        raise CommandError(
            "the deployment key comes from LICENSEGATE_DEPLOYMENT_KEY: put a new key there "
            f"(for example {keyring.new_key().hex()}), the old one in "
            "LICENSEGATE_DEPLOYMENT_OLD_KEYS, restart, then run `licensegate reseal`"
        )
    migrate.require_schema(settings.database_url)
    old = keyring.load_or_create(settings.data_dir)
    assert old.path is not None
    rotated = keyring.Keyring((keyring.new_key(), *old.keys), old.path)
    keyring.replace_key_file(old.path, rotated.keys)
    changed = _with_database(settings, _resealing, SecretBox(rotated))
    if not args.keep_old:
        keyring.replace_key_file(old.path, (rotated.current,))
    print(
        f"new deployment key {rotated.current_id} in {old.path}; {changed} value(s) re-sealed"
        + ("; old keys kept" if args.keep_old else ""),
        file=sys.stderr,
    )
    return 0


def cmd_reseal(args: argparse.Namespace) -> int:
    """Re-seal every secret at rest under the current deployment key."""
    from licensegate.store import migrate

    settings = _settings(args.database)
    migrate.require_schema(settings.database_url)
    changed = _with_database(settings, _resealing)
    print(f"{changed} value(s) re-sealed", file=sys.stderr)
    return 0


def _pairs(texts: Sequence[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for text in texts:
        name, eq, value = text.partition("=")
        if not eq or not name:
            raise CommandError(f"parameters are name=value, not {text[:64]!r}")
        params[name] = value
    return params


def cmd_seller(args: argparse.Namespace) -> int:
    from licensegate.domain import apps, deploymentkey, permissions
    from licensegate.operations.seller import Caller, invoke
    from licensegate.services import Services
    from licensegate.store import migrate

    settings = _settings(args.database)
    params = _pairs(args.params)
    migrate.require_schema(settings.database_url)

    async def run() -> dict[str, object]:
        services = await Services.open(settings)
        try:
            await deploymentkey.check(services.db, services.secrets, services.clock.now())
            app = await apps.find_for_client(services.db, args.ownerid, args.name)
            identity = await permissions.identity_of_account(services.db, app.id, None)
            body = await invoke(services, Caller(identity, via="command line"), args.type, params)
        finally:
            await services.close()
        return {"success": True, **body}

    print(json.dumps(asyncio.run(run())))
    return 0


@contextlib.contextmanager
def _serving(settings: Settings) -> Iterator[None]:
    """Hold the database's serving lock while the service runs (`store.serving`)."""
    from licensegate.store import migrate, serving

    try:
        lock = serving.hold(settings.database_url, exclusive=False, timeout=settings.pg_timeout)
        lock.__enter__()
    except serving.InUse as exc:
        raise CommandError(
            f"`licensegate restore` is replacing the database {migrate.location(settings.database_url)} "
            "now: start the service once it is done"
        ) from exc
    except serving.Unreachable as exc:  # the database is not there yet: serve without the lock
        print(f"licensegate: not holding the database's serving lock ({exc})", file=sys.stderr)
        yield
        return
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def _prepare_serve(settings: Settings) -> None:
    """What `serve` makes sure of before its workers answer: the schema (an empty database is
    migrated, one behind refused) and applications' keys. Raises `DatabaseUnavailable` when the
    database cannot be used now (each try bounded by LICENSEGATE_PG_TIMEOUT to connect)."""
    from licensegate.store import migrate
    from licensegate.store.database import DatabaseUnavailable

    migrate.ensure_schema(settings.database_url, settings.pg_timeout)
    # A database that can be read but not written (a full disk) still serves reads: what this
    # would write waits for a start with room to write.
    try:
        _provision(settings)  # also makes the deployment key file before workers race for it
    except DatabaseUnavailable as exc:
        print(f"licensegate: application keys not provisioned now: {exc}", file=sys.stderr)


def _announce_dashboard(settings: Settings) -> None:
    """The dashboard's address, or the link that creates its owner account while nobody can sign in."""
    from licensegate.store.database import DatabaseUnavailable

    try:
        link = _setup_link(settings)
    except DatabaseUnavailable as exc:
        print(f"licensegate: no dashboard setup link now: {exc}", file=sys.stderr)
        link = None
    if link is not None:
        print(
            "\nNobody can sign in to the dashboard yet. Open this link within an hour to create the\n"
            f"owner account (it works once):\n\n    {link}\n",
            file=sys.stderr,
            flush=True,
        )
    else:
        print(f"dashboard: {settings.public_url}/dashboard/", file=sys.stderr)


def prepare_in_background() -> int:
    """`serve`'s start-up work, tried again until the database can be used (`startup`): run by
    `serve` in a process of its own, with `serve`'s environment."""
    from licensegate import startup

    settings = Settings.from_env()

    def attempt() -> None:
        _prepare_serve(settings)
        _announce_dashboard(settings)

    return startup.keep_trying(attempt, os.getppid())


def cmd_serve(args: argparse.Namespace) -> int:
    import shutil
    import subprocess
    import tempfile

    from licensegate import metrics, server, startup
    from licensegate.store.database import DatabaseUnavailable

    for flag, name in ((args.host, "HOST"), (args.port, "PORT"), (args.workers, "WORKERS")):
        if flag is not None:
            os.environ[ENV_PREFIX + name] = str(flag)
    if not os.environ.get(ENV_PREFIX + "PUBLIC_URL", "").strip():
        # Links the service prints or e-mails point at where it listens, unless told otherwise.
        host = os.environ.get(ENV_PREFIX + "HOST", "").strip() or "127.0.0.1"
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104 - compared, not bound
        port = os.environ.get(ENV_PREFIX + "PORT", "").strip() or "8000"
        os.environ[ENV_PREFIX + "PUBLIC_URL"] = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    settings = _settings(args.database)  # validates everything before workers start
    later: subprocess.Popen[bytes] | None = None
    with _serving(settings):  # `restore` refuses a database a service holds
        try:
            _prepare_serve(settings)
        except DatabaseUnavailable as exc:
            print(
                f"licensegate: the database cannot be used now ({exc}); serving anyway: requests "
                "that need it are answered 503 until it is back, and the schema is checked again in "
                "the background",
                file=sys.stderr,
                flush=True,
            )
            # Its own process (see `startup`), started before Granian forks any worker.
            later = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "import sys; from licensegate import cli; sys.exit(cli.prepare_in_background())",
                ]
            )
        print(
            f"licensegate serving on http://{settings.host}:{settings.port} ({settings.workers} worker(s)); "
            f"{where(settings)}",
            file=sys.stderr,
        )
        if later is None:
            _announce_dashboard(settings)
        # The workers' metrics meet in a private folder of this run (made 0700), removed at the end.
        folder = tempfile.mkdtemp(prefix="licensegate-metrics-")
        os.environ[metrics.FOLDER_VARIABLE] = folder
        try:
            server.run(settings)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            if later is not None and later.poll() is None:
                later.terminate()
                later.wait(10)
    return 1 if later is not None and later.returncode == startup.REFUSED else 0


MANIFEST = "manifest.json"
BACKUP_FORMAT = 1


def _copy_tree(source: Path, target: Path) -> int:
    """Copy the files under `source` that `target` lacks (content-addressed: a file of the same
    name is the same file); return how many files `source` holds."""
    import shutil

    from licensegate import private

    count = 0
    for path in sorted(source.rglob("*")):
        if not path.is_file() or path.name.startswith("."):  # dot files: uploads not yet in place
            continue
        count += 1
        destination = target / path.relative_to(source)
        if not destination.exists():
            private.folder(destination.parent)
            shutil.copy2(path, destination)
    return count


def cmd_backup(args: argparse.Namespace) -> int:
    """A consistent copy of the database, the uploaded files and the deployment key in a new
    folder, while the service runs."""
    from datetime import UTC, datetime
    from pathlib import Path

    from licensegate import __version__, keyring, private
    from licensegate.domain import filestore
    from licensegate.store import backup, migrate

    settings = _settings(args.database)
    migrate.require_schema(settings.database_url)
    check_deployment_key(settings)  # a backup whose key cannot open its database restores nothing usable
    target = Path(args.path)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise CommandError(f"{target.resolve()} exists and is not an empty folder: name a new one")
    private.folder(target)
    revision = migrate.current_revision(settings.database_url)
    tables = backup.export(settings.database_url, target)
    # After the database: every file the copy names was in place before the copy was taken.
    # A folder of files (a configured shared one, or the data folder's); on PostgreSQL without a
    # folder the files are tables of the database, exported above (older versions' files may still
    # lie in the data folder: copied too).
    files_root = settings.files_dir or filestore.root(settings.data_dir)
    files = _copy_tree(files_root, target / "files") if files_root.is_dir() else 0
    key_file = settings.data_dir / keyring.KEY_FILE_NAME
    if settings.deployment_key:
        key = "not included: it comes from LICENSEGATE_DEPLOYMENT_KEY"
    elif args.without_key:
        key = "not included (--without-key)"
    elif key_file.is_file():
        with private.create(target / keyring.KEY_FILE_NAME) as out:
            out.write(key_file.read_bytes())
        key = "included"
    else:
        key = "none: the service has not made one yet"
    manifest = {
        "format": BACKUP_FORMAT,
        "licensegate": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "dialect": "sqlite" if settings.database_url.startswith("sqlite") else "postgresql",
        "revision": revision,
        "tables": tables,
        "files": files,
        "deployment_key": key,
    }
    with private.create(target / MANIFEST) as out:
        out.write(json.dumps(manifest, indent=2).encode() + b"\n")
    rows = sum(table["rows"] for table in tables)
    print(
        f"licensegate: backed up {where(settings)} into {target.resolve()}: {rows} rows in "
        f"{len(tables)} tables, {files} files; deployment key {key}",
        file=sys.stderr,
    )
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Bring a backup back into an empty database (or any, with --force), with its files and key."""
    from pathlib import Path

    from licensegate.store import migrate, serving
    from licensegate.store.database import dialect_of

    settings = _settings(args.database)
    source = Path(args.path)
    try:
        manifest = json.loads((source / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise CommandError(
            f"{source.resolve()} is not a licensegate backup (no readable {MANIFEST})"
        ) from exc
    if manifest.get("format") != BACKUP_FORMAT:
        raise CommandError(f"{source.resolve()} is a backup of another format ({manifest.get('format')!r})")
    url = settings.database_url
    if manifest["dialect"] != dialect_of(url):
        raise CommandError(
            f"the backup holds a {manifest['dialect']} database and the target is {migrate.location(url)}"
        )
    if manifest["revision"] != migrate.head_revision():
        raise CommandError(
            f"the backup is at schema revision {manifest['revision']} and this version's is "
            f"{migrate.head_revision()}: restore it with the version that made it "
            f"(licensegate {manifest['licensegate']}), then upgrade"
        )
    try:
        with serving.hold(url, exclusive=True, timeout=settings.pg_timeout):
            return _restore(args, settings, source, manifest)
    except serving.InUse as exc:
        raise CommandError(
            f"the database {migrate.location(url)} is in use by a running licensegate service "
            f"({exc}): stop it first (for example `systemctl stop licensegate`, `docker stop` its "
            "container, or end its `licensegate serve` process), then run restore again"
        ) from exc


def _restore(args: argparse.Namespace, settings: Settings, source: Path, manifest: dict[str, Any]) -> int:
    from licensegate import keyring, private
    from licensegate.domain import filestore
    from licensegate.store import backup, migrate

    url = settings.database_url
    if not args.force and backup.rows_in(url) > 0:
        raise CommandError(
            f"the database {migrate.location(url)} is not empty: restore into a new database, or "
            "pass --force to replace its content"
        )
    key_file = settings.data_dir / keyring.KEY_FILE_NAME
    saved_key = source / keyring.KEY_FILE_NAME
    differs = saved_key.is_file() and key_file.is_file() and key_file.read_bytes() != saved_key.read_bytes()
    if differs and not settings.deployment_key and not args.force:
        raise CommandError(
            f"{key_file.resolve()} holds another deployment key than the backup's: move it aside, "
            "or pass --force to replace it"
        )
    migrate.upgrade(url)  # an empty database gets the schema the backup was made with
    backup.load(url, source, manifest["tables"])
    files = (
        _copy_tree(source / "files", settings.files_dir or filestore.root(settings.data_dir))
        if (source / "files").is_dir()
        else 0
    )
    if saved_key.is_file() and not settings.deployment_key:
        private.folder(settings.data_dir)
        keyring.replace_key_file(key_file, keyring.read_key_file(saved_key).keys)
    elif saved_key.is_file():
        print(
            f"licensegate: the backup's deployment key is in {saved_key.resolve()}; this service takes its "
            "key from LICENSEGATE_DEPLOYMENT_KEY, which must be that key (or list it in "
            "LICENSEGATE_DEPLOYMENT_OLD_KEYS)",
            file=sys.stderr,
        )
    rows = sum(table["rows"] for table in manifest["tables"])
    check_deployment_key(settings)  # the restored data and the key in effect must agree
    print(
        f"licensegate: restored {rows} rows in {len(manifest['tables'])} tables and {files} files "
        f"from {source.resolve()} into {where(settings)}",
        file=sys.stderr,
    )
    return 0


def keyauth_source(args: argparse.Namespace, settings: Settings) -> Source:
    """The source `import-keyauth` reads, from its arguments (a seller-API read happens here,
    before anything is written)."""
    from pathlib import Path

    from licensegate.domain.keyauthimport.checkpoint import CheckpointError
    from licensegate.domain.keyauthimport.dumpfile import DumpError, DumpSource
    from licensegate.domain.keyauthimport.exportfiles import ExportFileError
    from licensegate.domain.keyauthimport.mysqlread import MySqlError, MySqlSource
    from licensegate.domain.keyauthimport.sellerread import SellerApiError

    given = [name for name in ("dump", "mysql", "seller_key") if getattr(args, name)]
    if args.keys or args.users:
        given.append("keys")
    if len(given) != 1:
        raise CommandError(
            "name one source: --dump FILE.sql, --mysql URL, --seller-key KEY or --keys/--users"
        )
    try:
        if args.dump:
            path = Path(args.dump)
            if not path.is_file():
                raise CommandError(f"no such dump file: {path}")
            return DumpSource(path, args.app)
        if args.mysql:
            return MySqlSource(args.mysql, args.app)
        if args.seller_key:
            return _seller_api_source(args, settings)
        return _export_files_source(args)
    except (DumpError, MySqlError, ExportFileError, SellerApiError, CheckpointError) as exc:
        raise CommandError(str(exc)) from None


def _seller_api_source(args: argparse.Namespace, settings: Settings) -> Source:
    """Read the application through KeyAuth's seller API into the checkpoint (resumed with
    --resume); progress on stderr."""
    import asyncio
    from pathlib import Path

    from licensegate.clock import SystemClock
    from licensegate.domain.keyauthimport.pacing import parse_pace
    from licensegate.domain.keyauthimport.sellerapi import default_checkpoint, read_seller_api

    try:
        pace = parse_pace(args.pace)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    checkpoint = Path(args.checkpoint) if args.checkpoint else default_checkpoint(args.seller_key, Path.cwd())
    progress = ReadProgress(sys.stderr)
    reading = read_seller_api(
        settings,
        args.seller_key,
        checkpoint=checkpoint,
        resume=args.resume,
        now=SystemClock().now(),
        base_url=args.from_url,
        pace=pace,
        with_logs=args.with_logs,
        progress=progress,
    )
    source, stats = asyncio.run(reading)
    progress.end(
        f"read in {stats.requests} requests ({stats.rate_limited} waits after 429); checkpoint {checkpoint}"
    )
    return source


class ReadProgress:
    """A seller-API read's progress on stderr: a bar redrawn in place on a terminal, a line every
    100 steps elsewhere."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.terminal = out.isatty()

    async def __call__(self, done: int, total: int | None, step: str) -> None:
        if self.terminal:
            if total:
                filled = 30 * done // total
                bar = "#" * filled + "." * (30 - filled)
                self.out.write(f"\r[{bar}] {done}/{total} {step.split(':', 1)[0]:<18}")
            else:
                self.out.write(f"\r{done} lists read ({step})".ljust(60))
            self.out.flush()
        elif total is None or done % 100 == 0 or done == total:
            print(
                f"seller API: {done}{f'/{total}' if total else ''} steps ({step.split(':', 1)[0]})",
                file=self.out,
            )

    def end(self, text: str) -> None:
        print(("\n" if self.terminal else "") + f"seller API: {text}", file=self.out, flush=True)


def _export_files_source(args: argparse.Namespace) -> Source:
    from pathlib import Path

    from licensegate.domain.keyauthimport import records
    from licensegate.domain.keyauthimport.exportfiles import ExportFilesSource

    missing = [f"--{name}" for name in ("name", "ownerid", "secret") if not getattr(args, name)]
    if missing:
        raise CommandError(
            f"the export files do not name their application: give {', '.join(missing)} (KeyAuth's dashboard "
            "shows them on the application's page)"
        )
    subscriptions: list[records.Subscription] = []
    for text in args.subscription or ["default=1"]:
        name, equals, level = text.partition("=")
        if not equals or not name.strip() or not level.strip():
            raise CommandError(f"--subscription is NAME=LEVEL, not {text!r}")
        subscriptions.append(records.Subscription(args.secret, name.strip(), level.strip()))
    app = records.App(
        name=args.name,
        secret=args.secret,
        ownerid=args.ownerid,
        owner=None,
        sellerkey=None,
        ver=args.app_version,
    )
    for path in (args.keys, args.users):
        if path and not Path(path).is_file():
            raise CommandError(f"no such file: {path}")
    return ExportFilesSource(
        app,
        subscriptions,
        keys=Path(args.keys) if args.keys else None,
        users=Path(args.users) if args.users else None,
    )


def import_keyauth(settings: Settings, source: Source, options: ImportOptions) -> dict[str, object]:
    """Import `source` into the owner account; the report `import-keyauth` prints."""
    from licensegate.clock import SystemClock
    from licensegate.domain.filestore import open_file_store
    from licensegate.domain.keyauthimport import writer
    from licensegate.passwords import Passwords
    from licensegate.store import migrate

    migrate.require_schema(settings.database_url)

    async def work(db: Database, box: SecretBox) -> dict[str, object]:
        clock = SystemClock()
        passwords = Passwords(
            settings.argon2_time_cost, settings.argon2_memory_kib, settings.argon2_parallelism, 1
        )
        env = writer.Env(
            db=db,
            box=box,
            passwords=passwords,
            settings=settings,
            content=open_file_store(db, clock, settings.data_dir, settings.files_dir),
            now=clock.now(),
        )
        try:
            reports = await writer.import_all(env, source, options, writer.print_progress)
        except writer.ImportRefused as exc:
            raise CommandError(str(exc)) from None
        finally:
            passwords.close()
        return writer.report_json(reports, options.dry_run)

    # Not a request: a statement of a large import (a commit, linking every used key to its user)
    # may take as long as the server lets it.
    return _with_database(settings, work, answer_timeout=float(settings.pg_statement_timeout))


def cmd_import_keyauth(args: argparse.Namespace) -> int:
    from licensegate.domain.keyauthimport.writer import Options

    settings = _settings(args.database)
    source = keyauth_source(args, settings)
    options = Options(
        owner=args.owner, new_ownerid=args.new_ownerid, with_logs=args.with_logs, dry_run=args.dry_run
    )
    try:
        report = import_keyauth(settings, source, options)
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
    print(json.dumps(report, ensure_ascii=False))
    return 0


def cmd_openapi(_args: argparse.Namespace) -> int:
    from licensegate.api import openapi

    print(json.dumps(openapi.document(), indent=2))
    return 0


def cmd_reference(args: argparse.Namespace) -> int:
    from pathlib import Path

    from licensegate import app
    from licensegate.api import errorreference, openapi

    out = Path(args.output)
    (out / "api").mkdir(parents=True, exist_ok=True)
    for iface in openapi.interfaces():
        (out / "api" / f"{iface.name}.md").write_text(openapi.markdown(iface))
    (out / "api" / "errors.md").write_text(errorreference.markdown(app.ROUTING_ERRORS, app.HTTP_ERROR))
    (out / "openapi.json").write_text(json.dumps(openapi.document(), indent=2) + "\n")
    operations = out / "operations.md"
    if operations.exists():  # the settings table inside the hand-written operations guide
        operations.write_text(with_markdown_table(operations.read_text()))
    print(f"wrote the API reference under {out}", file=sys.stderr)
    return 0


def parser() -> argparse.ArgumentParser:
    from licensegate import __version__

    top = argparse.ArgumentParser(prog="licensegate")
    top.add_argument("--version", action="version", version=f"licensegate {__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    db_help = (
        "database URL (default: $LICENSEGATE_DATABASE_URL, else licensegate.db in $LICENSEGATE_DATA_DIR, "
        "else in ./data under the current folder)"
    )

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

    account = sub.add_parser(
        "create-account", help="create an owner account that can sign in to the dashboard"
    )
    account.add_argument("--username", required=True, help="the account's name (unique)")
    account.add_argument("--email", help="its e-mail address")
    account.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    account.add_argument("--database", help=db_help)
    account.set_defaults(run=cmd_create_account)

    reset = sub.add_parser(
        "set-password", help="set the dashboard password of any account (ends its sessions)"
    )
    reset.add_argument("--username", required=True, help="the account's name")
    reset.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    reset.add_argument("--database", help=db_help)
    reset.set_defaults(run=cmd_set_password)

    public = sub.add_parser("public-key", help="print the deployment's own Ed25519 public key")
    public.add_argument("--database", help=db_help)
    public.set_defaults(run=cmd_public_key)

    rotate = sub.add_parser("rotate-key", help="rotate the deployment key and re-seal every secret")
    rotate.add_argument("--keep-old", action="store_true", help="keep the old key in the key file")
    rotate.add_argument("--database", help=db_help)
    rotate.set_defaults(run=cmd_rotate_key)

    reseal = sub.add_parser("reseal", help="re-seal every secret under the current deployment key")
    reseal.add_argument("--database", help=db_help)
    reseal.set_defaults(run=cmd_reseal)

    seller = sub.add_parser(
        "seller",
        help="run a seller operation as the application's owner (as the seller API would)",
        description="Runs one seller operation as the application's owner, with the same checks, "
        "audit entry and answer as the seller API: licensegate seller add expiry=30 amount=5 "
        "--ownerid <ownerid> --name <name>",
    )
    seller.add_argument("type", help="the operation's type, as in docs/api/seller.md")
    seller.add_argument("params", nargs="*", metavar="name=value", help="the operation's parameters")
    seller.add_argument("--ownerid", required=True, help="the application's ownerid")
    seller.add_argument("--name", required=True, help="the application's name")
    seller.add_argument("--database", help=db_help)
    seller.set_defaults(run=cmd_seller)

    save = sub.add_parser(
        "backup",
        help="copy the database, uploaded files and deployment key into a new folder, while the service runs",
    )
    save.add_argument("path", help="a folder that does not exist yet (or is empty)")
    save.add_argument(
        "--without-key", action="store_true", help="leave the deployment key out (keep it elsewhere)"
    )
    save.add_argument("--database", help=db_help)
    save.set_defaults(run=cmd_backup)

    restore = sub.add_parser(
        "restore", help="bring a backup back into an empty database (stop the service first)"
    )
    restore.add_argument("path", help="the folder `licensegate backup` made")
    restore.add_argument(
        "--force",
        action="store_true",
        help="replace the content of a database that is not empty, and a deployment key file that differs",
    )
    restore.add_argument("--database", help=db_help)
    restore.set_defaults(run=cmd_restore)

    keyauth = sub.add_parser(
        "import-keyauth",
        help="move applications from KeyAuth (a mysqldump, a live MySQL/MariaDB server, a seller key or "
        "the export files)",
        description="Import KeyAuth applications with their keys, users, subscriptions and the rest, "
        "keeping ownerid, secret and seller key. Prints one JSON report on stdout; progress on stderr.",
    )
    keyauth.add_argument("--owner", required=True, help="the owner account to import into (made if missing)")
    keyauth_from = keyauth.add_mutually_exclusive_group()
    keyauth_from.add_argument(
        "--dump", metavar="FILE.sql", help="a mysqldump of the KeyAuth panel's database"
    )
    keyauth_from.add_argument("--mysql", metavar="URL", help="mysql://user:password@host:port/database")
    keyauth_from.add_argument(
        "--seller-key", metavar="KEY", help="a live application on KeyAuth, read through its seller API"
    )
    seller_api = keyauth.add_argument_group("reading with --seller-key")
    seller_api.add_argument(
        "--from",
        dest="from_url",
        metavar="URL",
        default="https://keyauth.win/api/seller/",
        help="the seller API's address (default: KeyAuth's own)",
    )
    seller_api.add_argument(
        "--pace",
        default="30/30",
        help="at most N requests in S seconds, as N/S (default 30/30, KeyAuth's limit)",
    )
    seller_api.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="where the read keeps every answer (default keyauth-<key hash>.checkpoint here)",
    )
    seller_api.add_argument(
        "--resume", action="store_true", help="go on with the read kept in the checkpoint"
    )
    exports = keyauth.add_argument_group("reading the dashboard's export files")
    exports.add_argument("--keys", metavar="KeyAuthKeys.json", help="the licenses export")
    exports.add_argument("--users", metavar="KeyAuthUsers.json", help="the users export")
    exports.add_argument("--name", help="the application's name (the files do not say)")
    exports.add_argument("--ownerid", help="the application's ownerid")
    exports.add_argument("--secret", help="the application's secret")
    exports.add_argument(
        "--app-version", help="the application's version, which programs send (KeyAuth's Settings page)"
    )
    exports.add_argument(
        "--subscription",
        action="append",
        metavar="NAME=LEVEL",
        help="one of the application's subscriptions (repeat; default default=1)",
    )
    keyauth.add_argument("--app", metavar="NAME", help="import only the application of this name")
    keyauth.add_argument(
        "--new-ownerid",
        action="store_true",
        help="when the ownerid is another account's, give the application this owner's ownerid",
    )
    keyauth.add_argument("--with-logs", action="store_true", help="import the client logs too")
    keyauth.add_argument(
        "--dry-run", action="store_true", help="read everything, write nothing, print the report"
    )
    keyauth.add_argument("--database", help=db_help)
    keyauth.set_defaults(run=cmd_import_keyauth)

    spec = sub.add_parser("openapi", help="print the OpenAPI document of both APIs")
    spec.set_defaults(run=cmd_openapi)

    reference = sub.add_parser(
        "reference",
        help="write docs/api/*.md (operations, error codes), docs/openapi.json and the settings table "
        "of docs/operations.md",
    )
    reference.add_argument("--output", default="docs", help="documentation folder (default: docs)")
    reference.set_defaults(run=cmd_reference)
    # The summary names every subcommand, from the parser itself, so it cannot leave one out.
    top.description = f"The `licensegate` command: {', '.join(sub.choices)}."
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
