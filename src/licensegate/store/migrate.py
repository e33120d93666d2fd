"""Schema migrations for SQLite and PostgreSQL from one source (Alembic over `store.schema`).

Used by the command line and by `serve` before workers start; never on the request path.
"""

from __future__ import annotations

import math
from pathlib import Path
from urllib.parse import urlsplit

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from licensegate import private
from licensegate.store.database import DatabaseError, DatabaseUnavailable, dialect_of, sqlite_path

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def sqlalchemy_url(url: str) -> str:
    dialect = dialect_of(url)
    if dialect == "sqlite":
        path = Path(sqlite_path(url))
        private.touch(path)
        return f"sqlite:///{path}"
    rest = url.split("://", 1)[1]
    return f"postgresql+psycopg://{rest}"


def _engine(url: str, connect_timeout: float | None = None) -> sa.Engine:
    """`connect_timeout`: seconds PostgreSQL may take to accept a connection (libpq's, whole
    seconds, at least 2); unbounded when None."""
    arguments: dict[str, object] = {}
    if connect_timeout is not None and dialect_of(url) == "postgresql":
        arguments["connect_timeout"] = max(2, math.ceil(connect_timeout))
    try:
        engine = sa.create_engine(sqlalchemy_url(url), poolclass=sa.pool.NullPool, connect_args=arguments)
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise DatabaseError(f"bad database URL: {exc}") from exc
    if engine.dialect.name == "sqlite":

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: object, _record: object) -> None:
            cur = dbapi_conn.cursor()  # type: ignore[attr-defined]
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

    return engine


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


# PostgreSQL's error classes of a server that cannot serve now: connection exceptions,
# insufficient resources (too many connections), operator intervention (shutting down, starting).
_PASSING_SQLSTATES = ("08", "53", "57P")
_SQLITE_LOCKED = frozenset({5, 6})  # busy, locked: another program holds the file now


def _passing(error: BaseException | None) -> bool:
    """Whether a driver's error is an outage that passes (down, frozen, locked), not a refusal
    (a wrong password, a missing database, a broken file)."""
    if error is None:
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _SQLITE_LOCKED
    sqlstate = getattr(error, "sqlstate", None)
    if not isinstance(sqlstate, str):
        # No answer from a server at all (refused, timed out, cut off); psycopg's errors only.
        return type(error).__module__.startswith("psycopg")
    return sqlstate.startswith(_PASSING_SQLSTATES)


def _run(url: str, action: str, connect_timeout: float | None = None) -> str | None:
    engine = _engine(url, connect_timeout)
    try:
        with engine.begin() as conn:
            if action == "current":
                return MigrationContext.configure(conn).get_current_revision()
            cfg = _config()
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
            return head_revision()
    except sa.exc.OperationalError as exc:
        first_line = str(exc.orig or exc).strip().splitlines()[0]
        if _passing(exc.orig):
            raise DatabaseUnavailable(f"cannot reach the database: {first_line}") from exc
        raise DatabaseError(f"cannot reach the database: {first_line}") from exc
    except sa.exc.DBAPIError as exc:
        first_line = str(exc.orig or exc).strip().splitlines()[0]
        raise DatabaseError(f"database error: {first_line}") from exc
    finally:
        engine.dispose()


def current_revision(url: str, connect_timeout: float | None = None) -> str | None:
    try:
        return _run(url, "current", connect_timeout)
    except DatabaseUnavailable:
        raise  # locked now: the file alone could miss what the holder is writing
    except DatabaseError:
        if dialect_of(url) != "sqlite":
            raise
        return _read_only_revision(sqlite_path(url))


def _read_only_revision(path: str) -> str | None:
    """The revision of a SQLite database that cannot be opened for writing (a full disk): read
    from the file alone, so that the service can still start and serve reads."""
    from licensegate.store.sqlite import connect_or_read_only

    conn, _ = connect_or_read_only(path)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'").fetchone():
            return None
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        return str(row["version_num"]) if row else None
    finally:
        conn.close()


def upgrade(url: str) -> str:
    """Bring the database to the newest schema; return the revision it is at."""
    revision = _run(url, "upgrade")
    assert revision is not None
    return revision


def location(url: str) -> str:
    """Where a database is, for people: a SQLite file's absolute path, or a PostgreSQL URL
    without its password."""
    if dialect_of(url) == "sqlite":
        return f"{Path(sqlite_path(url)).resolve()} (SQLite)"
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    return f"{parts._replace(netloc=netloc).geturl()} (PostgreSQL)"


def ensure_schema(url: str, connect_timeout: float | None = None) -> None:
    """Migrate an empty database (`serve`); refuse to run on one that is behind (that needs
    `migrate`). Raises `DatabaseUnavailable` when the database cannot be used now (down, not
    accepting a connection within `connect_timeout`, locked), `DatabaseError` when it refuses."""
    current = current_revision(url, connect_timeout)
    if current is None:
        upgrade(url)
        return
    _refuse_behind(current)


def require_schema(url: str) -> None:
    """For every command but `serve` and `migrate`: the database must exist and be at this
    version's schema; a command never creates one (a SQLite path that names no file would
    otherwise become a second, empty database beside the one the service uses)."""
    if dialect_of(url) == "sqlite" and not Path(sqlite_path(url)).exists():
        path = Path(sqlite_path(url)).resolve()
        raise DatabaseError(
            f"no database at {path}: `licensegate migrate` or `licensegate serve` creates it; "
            "to use an existing one, set LICENSEGATE_DATABASE_URL or LICENSEGATE_DATA_DIR "
            "(or pass --database) as the service has them"
        )
    current = current_revision(url)
    if current is None:
        raise DatabaseError(
            f"the database {location(url)} has no licensegate tables yet: run `licensegate migrate` first"
        )
    _refuse_behind(current)


def _refuse_behind(current: str) -> None:
    if current != head_revision():
        raise DatabaseError(
            f"the database schema is at revision {current}, this version needs "
            f"{head_revision()}: run `licensegate migrate` first"
        )
