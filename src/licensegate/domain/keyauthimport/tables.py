"""KeyAuth's table rows (a dump's or a live server's, column name -> value) turned into records.

A value arrives as a MySQL client or a dump gives it: text, an integer, bytes (a `bit(64)` or a
`_binary` string) or None. KeyAuth keeps numbers in text columns (`keys.expires`, `subs.expiry`,
`gendate`), so every number is read from either form. Shared by the dump and the MySQL readers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, cast

from licensegate.domain.keyauthimport import records as r

Value = str | int | bytes | None
Row = Mapping[str, Value]

# The `apps` columns an App record names; every other one goes into `App.columns`.
_APP_FIELDS = frozenset({"id", "name", "secret", "ownerid", "owner", "sellerkey", "enabled", "paused", "ver"})
TEAM_ROLES = ("Reseller", "Manager")


def text(value: Value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def number(value: Value) -> int | None:
    """An integer from an int, a numeric text (KeyAuth's `varchar` times), or a bit field's bytes."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, bytes):
        return int.from_bytes(value, "big") if value else 0
    stripped = value.strip()
    if not stripped:
        return None
    try:
        return int(stripped)
    except ValueError:
        try:
            return int(float(stripped))
        except ValueError:
            return None


def flag(value: Value, default: bool) -> bool:
    n = number(value)
    return default if n is None else n != 0


def _str(row: Row, column: str) -> str:
    return text(row.get(column)) or ""


def _opt(row: Row, column: str) -> str | None:
    return text(row.get(column))


def app_from_row(row: Row) -> r.App:
    columns: dict[str, str | int | None] = {}
    for name, value in row.items():
        if name in _APP_FIELDS:
            continue
        columns[name] = value if isinstance(value, int) or value is None else text(value)
    return r.App(
        name=_str(row, "name"),
        secret=_str(row, "secret"),
        ownerid=_str(row, "ownerid"),
        owner=_opt(row, "owner"),
        sellerkey=_opt(row, "sellerkey") or None,
        enabled=flag(row.get("enabled"), True),
        paused=flag(row.get("paused"), False),
        ver=_opt(row, "ver"),
        columns=columns,
    )


def _subscription(row: Row, app: str) -> r.Subscription:
    return r.Subscription(app=app, name=_str(row, "name"), level=_str(row, "level"))


def _key(row: Row, app: str) -> r.Key:
    return r.Key(
        app=app,
        key=_str(row, "key"),
        expires=number(row.get("expires")),
        status=_opt(row, "status"),
        level=_str(row, "level"),
        note=_opt(row, "note"),
        genby=_opt(row, "genby"),
        gendate=number(row.get("gendate")),
        usedon=number(row.get("usedon")),
        usedby=_opt(row, "usedby"),
        banned=_opt(row, "banned"),
    )


def _user(row: Row, app: str) -> r.User:
    return r.User(
        app=app,
        username=_str(row, "username"),
        password=_opt(row, "password"),
        email=_opt(row, "email"),
        hwid=_opt(row, "hwid"),
        createdate=number(row.get("createdate")),
        lastlogin=number(row.get("lastlogin")),
        banned=_opt(row, "banned"),
        ip=_opt(row, "ip"),
        cooldown=number(row.get("cooldown")),
        owner=_opt(row, "owner"),
    )


def _sub(row: Row, app: str) -> r.Sub:
    return r.Sub(
        app=app,
        user=_str(row, "user"),
        subscription=_str(row, "subscription"),
        expiry=number(row.get("expiry")) or 0,
        paused=flag(row.get("paused"), False),
        key=_opt(row, "key"),
    )


def _uservar(row: Row, app: str) -> r.UserVar:
    return r.UserVar(
        app=app,
        user=_str(row, "user"),
        name=_str(row, "name"),
        data=_str(row, "data"),
        readOnly=flag(row.get("readOnly"), False),
    )


def _var(row: Row, app: str) -> r.Var:
    return r.Var(
        app=app, varid=_str(row, "varid"), msg=_str(row, "msg"), authed=flag(row.get("authed"), True)
    )


def _file(row: Row, app: str) -> r.File:
    return r.File(
        app=app,
        id=_str(row, "id"),
        url=_str(row, "url"),
        name=_opt(row, "name"),
        size=_opt(row, "size"),
        uploaddate=number(row.get("uploaddate")),
        authed=flag(row.get("authed"), True),
    )


def _webhook(row: Row, app: str) -> r.Webhook:
    return r.Webhook(
        app=app,
        webid=_str(row, "webid"),
        baselink=_str(row, "baselink"),
        useragent=_opt(row, "useragent"),
        authed=flag(row.get("authed"), True),
    )


def _ban(row: Row, app: str) -> r.Ban:
    return r.Ban(app=app, type=_str(row, "type"), hwid=_opt(row, "hwid"), ip=_opt(row, "ip"))


def _whitelisted(row: Row, app: str) -> r.Whitelisted:
    return r.Whitelisted(app=app, ip=_str(row, "ip"))


def _token(row: Row, app: str) -> r.Token:
    return r.Token(
        app=app,
        token=_str(row, "token"),
        assigned=_str(row, "assigned"),
        type=_str(row, "type"),
        banned=flag(row.get("banned"), False),
        reason=_opt(row, "reason"),
        hash=_opt(row, "hash"),
        status=_opt(row, "status"),
    )


def _chat(row: Row, app: str) -> r.Chat:
    return r.Chat(app=app, name=_str(row, "name"), delay=number(row.get("delay")) or 0)


def _chat_message(row: Row, app: str) -> r.ChatMessage:
    return r.ChatMessage(
        app=app,
        channel=_str(row, "channel"),
        author=_str(row, "author"),
        message=_str(row, "message"),
        timestamp=number(row.get("timestamp")) or 0,
    )


def _chat_mute(row: Row, app: str) -> r.ChatMute:
    return r.ChatMute(app=app, user=_str(row, "user"), time=number(row.get("time")) or 0)


def _button(row: Row, app: str) -> r.Button:
    return r.Button(app=app, text=_str(row, "text"), value=_str(row, "value"))


def _log(row: Row, app: str) -> r.Log:
    return r.Log(
        app=app,
        logdate=number(row.get("logdate")) or 0,
        logdata=_str(row, "logdata"),
        credential=_opt(row, "credential"),
        pcuser=_opt(row, "pcuser"),
    )


def _team_member(row: Row, app: str) -> r.TeamMember:
    return r.TeamMember(
        app=app,
        username=_str(row, "username"),
        role=_str(row, "role"),
        balance=_opt(row, "balance"),
        keylevels=_opt(row, "keylevels"),
        permissions=number(row.get("permissions")),
        email=_opt(row, "email"),
        banned=_opt(row, "banned"),
    )


BUILDERS: dict[type[Any], Callable[[Row, str], r.Record]] = {
    r.Subscription: _subscription,
    r.Key: _key,
    r.User: _user,
    r.Sub: _sub,
    r.UserVar: _uservar,
    r.Var: _var,
    r.File: _file,
    r.Webhook: _webhook,
    r.Ban: _ban,
    r.Whitelisted: _whitelisted,
    r.Token: _token,
    r.Chat: _chat,
    r.ChatMessage: _chat_message,
    r.ChatMute: _chat_mute,
    r.Button: _button,
    r.Log: _log,
    r.TeamMember: _team_member,
}


def build(kind: type[r.R], row: Row, app: str) -> r.R:
    """The record of `kind` for a row of its table, belonging to the application `app` (secret)."""
    return cast(r.R, BUILDERS[kind](row, app))


def table(kind: type[Any]) -> str:
    """KeyAuth's table that holds the records of `kind`."""
    return r.TABLES[kind]


def app_column(kind: type[Any]) -> str:
    """The column naming a row's application: its secret (`logapp` in `logs`); for `accounts`,
    the application's name (matched with the row's `owner`)."""
    return "logapp" if kind is r.Log else "app"


def belongs(kind: type[Any], row: Row, app: r.App) -> bool:
    """Whether a row of `kind`'s table belongs to `app` (compared as KeyAuth's collation does:
    case-insensitively, trailing spaces ignored)."""
    value = _fold(text(row.get(app_column(kind))))
    if kind is r.TeamMember:
        return (
            text(row.get("role")) in TEAM_ROLES
            and value == _fold(app.name)
            and _fold(text(row.get("owner"))) == _fold(app.owner)
        )
    return value == _fold(app.secret)


def _fold(value: str | None) -> str:
    return (value or "").rstrip(" ").casefold()


class TableSource:
    """What a source that reads KeyAuth's tables shares: the applications (limited to one by
    name where asked), and each kind's rows of one application from `_table_rows`."""

    def __init__(self, apps: Iterable[r.App], app_name: str | None) -> None:
        self._apps = [a for a in apps if app_name is None or a.name == app_name]
        self._by_secret = {a.secret: a for a in self._apps}

    def _table_rows(self, kind: type[Any], app: r.App) -> Iterator[Row]:
        """Rows of `kind`'s table; at least those of `app` (`rows` keeps only those)."""
        raise NotImplementedError

    def apps(self) -> Iterator[r.App]:
        return iter(self._apps)

    def rows(self, kind: type[r.R], app: str) -> Iterator[r.R]:
        owner = self._by_secret.get(app)
        if owner is None:
            return
        for row in self._table_rows(kind, owner):
            if belongs(kind, row, owner):
                yield build(kind, row, owner.secret)
