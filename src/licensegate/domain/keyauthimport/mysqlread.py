"""A live MySQL or MariaDB server holding KeyAuth's database, as a `Source`.

Rows are streamed with an unbuffered (server-side) cursor, so a table of a million users is never
held whole; each read opens its own connection, since an unbuffered result must be read to its
end before the connection can ask anything else. `read_at` is the server's own NOW().
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from typing import Any

import pymysql
import pymysql.cursors

from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport import tables
from licensegate.domain.keyauthimport.tables import Value

CONNECT_TIMEOUT = 10


class MySqlError(Exception):
    """The server cannot be read; a message for a person (never the password)."""


def connection_args(url: str) -> dict[str, Any]:
    """`mysql://user:password@host:port/database` as PyMySQL's arguments."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("mysql", "mariadb", "mysql+pymysql") or not parts.hostname:
        raise MySqlError("--mysql takes a URL such as mysql://user:password@127.0.0.1:3306/keyauth")
    database = parts.path.lstrip("/")
    if not database:
        raise MySqlError("the --mysql URL names no database (mysql://user:password@host:port/DATABASE)")
    return {
        "host": parts.hostname,
        "port": parts.port or 3306,
        "user": urllib.parse.unquote(parts.username or "root"),
        "password": urllib.parse.unquote(parts.password or ""),
        "database": urllib.parse.unquote(database),
        "charset": "utf8mb4",
        "connect_timeout": CONNECT_TIMEOUT,
    }


class MySqlSource(tables.TableSource):
    """KeyAuth's database on a live server. `app_name` limits it to one application."""

    def __init__(self, url: str, app_name: str | None = None) -> None:
        self._args = connection_args(url)
        try:
            with self._connect() as conn, conn.cursor() as cur:
                cur.execute("SELECT UNIX_TIMESTAMP(NOW())")
                row = cur.fetchone()
                self._read_at = int(row[0]) if row else 0
        except pymysql.MySQLError as exc:
            raise MySqlError(
                f"cannot read {self._args['host']}:{self._args['port']}: {exc.args[-1]}"
            ) from None
        super().__init__((tables.app_from_row(row) for row in self._select("apps", "", ())), app_name)

    def _connect(self) -> pymysql.connections.Connection[Any]:
        return pymysql.connect(**self._args)

    @property
    def read_at(self) -> int:
        return self._read_at

    def _select(self, table: str, where: str, params: tuple[str, ...]) -> Iterator[dict[str, Value]]:
        conn = self._connect()
        try:
            with conn.cursor(pymysql.cursors.SSCursor) as cur:
                try:
                    cur.execute(f"SELECT * FROM `{table}`{where}", params)
                except pymysql.err.ProgrammingError as exc:
                    if exc.args and exc.args[0] == 1146:  # no such table: nothing of this kind
                        return
                    raise
                names = [d[0] for d in cur.description or ()]
                for values in cur:
                    yield dict(zip(names, values, strict=True))
        finally:
            conn.close()

    def _table_rows(self, kind: type[Any], app: r.App) -> Iterator[tables.Row]:
        # The server narrows by the application's column (its collation compares as KeyAuth
        # does); `belongs` then applies the rest of the rule (accounts: role and owner).
        column = tables.app_column(kind)
        value = app.name if kind is r.TeamMember else app.secret
        return self._select(tables.table(kind), f" WHERE `{column}` = %s ORDER BY 1", (value,))

    def warnings(self, app: str) -> list[str]:
        return []
