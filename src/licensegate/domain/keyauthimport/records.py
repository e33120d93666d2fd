"""KeyAuth's data as KeyAuth keeps it: one record type per table of the open-source panel's MySQL
schema, field names as its columns (see docs/moving-from-keyauth.md). Every source produces these
records and only these, so the writer knows one shape whatever the data came from.

Values are KeyAuth's, not yet licensegate's: `Key.expires` is a duration in seconds, `Key.level`
and `Subscription.level` are strings (KeyAuth joins keys to subscriptions on the text), a paused
`Sub.expiry` is remaining seconds, `User.email` is the SHA-1 hex of the lower-cased address,
`User.password` a bcrypt hash (or None: the next login sets it), `User.hwid` every HWID appended
with no separator. A field a source cannot know is None, and the source says so in its warnings.
Every child record names its application by `app` (the application's secret, as KeyAuth does).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar


@dataclass(frozen=True, slots=True)
class App:
    """One `apps` row. `columns` holds every other column by its KeyAuth name (settings such as
    `hwidcheck`, `session`, `sessionUnit`, `cooldown`, `cooldownUnit`, `download`, `webdownload`,
    `webhook`, `format`, `minHwid`, `forceHwid`, `killOtherSessions`, `tokensystem`, and every
    custom message such as `keynotfound`), as the source gave it (text or int, None if unknown)."""

    name: str
    secret: str
    ownerid: str
    owner: str | None  # the KeyAuth account name that owns it
    sellerkey: str | None
    enabled: bool = True
    paused: bool = False
    ver: str | None = None
    columns: Mapping[str, str | int | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Subscription:
    """A `subscriptions` row: a subscription's definition."""

    app: str
    name: str
    level: str


@dataclass(frozen=True, slots=True)
class Key:
    """A `keys` row. `status` is `Not Used`, `Used` or `Banned`; `banned` the ban reason."""

    app: str
    key: str
    expires: int | None  # duration in seconds
    status: str | None
    level: str
    note: str | None = None
    genby: str | None = None
    gendate: int | None = None
    usedon: int | None = None
    usedby: str | None = None
    banned: str | None = None


@dataclass(frozen=True, slots=True)
class User:
    """A `users` row."""

    app: str
    username: str
    password: str | None  # bcrypt ($2y$/$2a$/$2b$), or None
    email: str | None = None  # SHA-1 hex of the lower-cased address
    hwid: str | None = None
    createdate: int | None = None
    lastlogin: int | None = None
    banned: str | None = None  # the ban reason; None = not banned
    ip: str | None = None
    cooldown: int | None = None  # unix time of the next allowed HWID reset
    owner: str | None = None  # the KeyAuth account that made the user (a reseller's name, or the seller's)


@dataclass(frozen=True, slots=True)
class Sub:
    """A `subs` row: one user's subscription. While `paused`, `expiry` is the remaining seconds
    at the source's `read_at`; otherwise an absolute unix time."""

    app: str
    user: str
    subscription: str
    expiry: int
    paused: bool = False
    key: str | None = None


@dataclass(frozen=True, slots=True)
class UserVar:
    app: str
    user: str
    name: str
    data: str
    readOnly: bool = False  # KeyAuth's column name


@dataclass(frozen=True, slots=True)
class Var:
    """A `vars` row: a global variable."""

    app: str
    varid: str
    msg: str
    authed: bool = True


@dataclass(frozen=True, slots=True)
class File:
    """A `files` row: KeyAuth keeps a URL, not the content."""

    app: str
    id: str
    url: str
    name: str | None = None
    size: str | None = None
    uploaddate: int | None = None
    authed: bool = True


@dataclass(frozen=True, slots=True)
class Webhook:
    """A `webhooks` row. `baselink` may be only a shortened form when the source cannot export
    the full URL (`full_url` False): such a webhook is imported disabled and reported."""

    app: str
    webid: str
    baselink: str
    useragent: str | None = None
    authed: bool = True
    full_url: bool = True


@dataclass(frozen=True, slots=True)
class Ban:
    """A `bans` row: a blacklist entry (`type` is `hwid` or `ip`)."""

    app: str
    type: str
    hwid: str | None = None
    ip: str | None = None


@dataclass(frozen=True, slots=True)
class Whitelisted:
    """A `whitelist` row."""

    app: str
    ip: str


@dataclass(frozen=True, slots=True)
class Token:
    """A `tokens` row (the token system): `type` is `user` or `license`."""

    app: str
    token: str
    assigned: str
    type: str
    banned: bool = False
    reason: str | None = None
    hash: str | None = None
    status: str | None = None


@dataclass(frozen=True, slots=True)
class Chat:
    app: str
    name: str
    delay: int


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """A `chatmsgs` row."""

    app: str
    channel: str
    author: str
    message: str
    timestamp: int


@dataclass(frozen=True, slots=True)
class ChatMute:
    """A `chatmutes` row: `time` is when the mute ends (unix)."""

    app: str
    user: str
    time: int


@dataclass(frozen=True, slots=True)
class Button:
    """A `buttons` row: a web loader button."""

    app: str
    text: str
    value: str


@dataclass(frozen=True, slots=True)
class Log:
    """A `logs` row (`logapp` in KeyAuth's table). Imported only with --with-logs."""

    app: str
    logdate: int
    logdata: str
    credential: str | None = None
    pcuser: str | None = None


@dataclass(frozen=True, slots=True)
class TeamMember:
    """An `accounts` row of role `Reseller` or `Manager`, joined to its application (KeyAuth
    names the application by name and owner; sources resolve it to the secret). KeyAuth's team
    passwords are not reused: the member sets one through a link."""

    app: str
    username: str
    role: str  # "Reseller" or "Manager"
    balance: str | None = None  # KeyAuth's pipe list, one bucket per duration
    keylevels: str | None = None  # "N/A" or "1|2|3"
    permissions: int | None = None  # KeyAuth's bit(64), as an integer
    email: str | None = None  # SHA-1 hex, when known
    banned: str | None = None


Record = (
    Subscription
    | Key
    | User
    | Sub
    | UserVar
    | Var
    | File
    | Webhook
    | Ban
    | Whitelisted
    | Token
    | Chat
    | ChatMessage
    | ChatMute
    | Button
    | Log
    | TeamMember
)
R = TypeVar("R", bound=Record)

# `User.password` of a user whose hash the source could not read (KeyAuth's seller API gives none
# past its 520-row user list on older servers). Not a bcrypt hash, so no password verifies against
# it; unlike None (KeyAuth's "the next login sets it") it lets nobody choose the password: the user
# signs in again after a reset.
UNREADABLE_PASSWORD = "*"  # noqa: S105 - a marker that matches no password

# KeyAuth's table for each record type (a dump or a live database is read by these names).
TABLES: dict[type[Record], str] = {
    Subscription: "subscriptions",
    Key: "keys",
    User: "users",
    Sub: "subs",
    UserVar: "uservars",
    Var: "vars",
    File: "files",
    Webhook: "webhooks",
    Ban: "bans",
    Whitelisted: "whitelist",
    Token: "tokens",
    Chat: "chats",
    ChatMessage: "chatmsgs",
    ChatMute: "chatmutes",
    Button: "buttons",
    Log: "logs",
    TeamMember: "accounts",
}


class Source(Protocol):
    """Where KeyAuth's data is read from. Rows are streamed: a source never holds a whole table
    (a dump of a million users is read in bounded memory), and may be asked for the same kind
    more than once."""

    @property
    def read_at(self) -> int:
        """Unix time the data was taken (a dump's own time): paused subscriptions' remaining
        seconds and "expired" are judged against it, not against today."""
        ...

    def apps(self) -> Iterator[App]:
        """Every application the source holds (already limited to `--app` where asked)."""
        ...

    def rows(self, kind: type[R], app: str) -> Iterator[R]:
        """The records of one kind belonging to the application whose secret is `app`."""
        ...

    def warnings(self, app: str) -> list[str]:
        """What this source cannot carry over for the application (e.g. the export files lose
        key status), to be printed in the report."""
        ...
