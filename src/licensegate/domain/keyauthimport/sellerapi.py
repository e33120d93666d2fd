"""A live KeyAuth application read through its seller API (`sellerread.py` fills the checkpoint),
as KeyAuth's records. What the seller API cannot give is named in `warnings`, per user where it
can be told (paused subscriptions: `userdata` lists active ones only)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from licensegate.config import Settings
from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport.checkpoint import Checkpoint, key_digest
from licensegate.domain.keyauthimport.pacing import DEFAULT_PACE, Pace, Pacer, Sleep, parse_pace
from licensegate.domain.keyauthimport.sellerread import (
    DEFAULT_URL,
    USERDATA,
    USERSUB,
    Progress,
    ReadStats,
    SellerApiReader,
    open_checkpoint,
    paused_key_users,
    replies,
    usernames_of,
    usersub_known,
)
from licensegate.domain.keyauthimport.values import flag, integer, named, text

CAP = 520  # KeyAuth's fetchallusers stops there

# getsettings (2022: flat; newer: `functions` and `messages`) -> KeyAuth's `apps` column.
SETTINGS_COLUMNS = {
    "hwid-lock": "hwidcheck",
    "version": "ver",
    "download": "download",
    "webdownload": "webdownload",
    "webhook": "webhook",
    "resellerstore": "resellerstore",
    "cooldown": "cooldown",
    "vpnblock": "vpnblock",
    "hash": "hash",
    "sellixsecret": "sellixsecret",
    "dayresellerproductid": "sellixdayproduct",
    "weekresellerproductid": "sellixweekproduct",
    "monthresellerproductid": "sellixmonthproduct",
    "liferesellerproductid": "sellixlifetimeproduct",
    "disabledmsg": "appdisabled",
    "usernametakenmsg": "usernametaken",
    "licenseinvalidmsg": "keynotfound",
    "keytakenmsg": "keyused",
    "nosubmsg": "nosublevel",
    "userinvalidmsg": "usernamenotfound",
    "passinvalidmsg": "passmismatch",
    "hwidmismatchmsg": "hwidmismatch",
    "noactivesubmsg": "noactivesubs",
    "blackedmsg": "hwidblacked",
    "pausedmsg": "pausedsub",
    "expiredmsg": "keyexpired",
}
# Newer `messages` also carry these under their column names.
MESSAGE_COLUMNS = frozenset(
    {
        "appdisabled",
        "usernametaken",
        "keynotfound",
        "keyused",
        "nosublevel",
        "usernamenotfound",
        "passmismatch",
        "hwidmismatch",
        "noactivesubs",
        "hwidblacked",
        "pausedsub",
        "vpnblocked",
        "keybanned",
        "userbanned",
        "sessionunauthed",
        "hashcheckfail",
        "loggedInMsg",
        "pausedApp",
        "unTooShort",
        "pwLeaked",
        "chatHitDelay",
    }
)
NOT_EXPORTED = (
    "KeyAuth's seller API has no way to read the IP whitelist, tokens, chat messages, sessions, the seller "
    "and audit logs or end users' 2FA: they are not imported. Nor these settings, which keep licensegate's "
    "defaults (check them on the Settings page): session length, minimum HWID length, force HWID, key "
    "format, kill other sessions, seller API IP whitelist, token system"
)


def balance_text(value: object) -> str | None:
    """fetchteam's balance: KeyAuth's pipe list, or an object by duration (getbalance's shape)."""
    if isinstance(value, dict):
        order = ("day", "week", "month", "three_month", "six_month", "lifetime", "year")
        return "|".join(str(integer(value.get(name)) or 0) for name in order)
    return text(value)


def permissions_of(value: object) -> int | None:
    """A manager's page bitmask: an integer, or KeyAuth's bit(64) written as 0s and 1s."""
    if isinstance(value, str) and value and set(value) <= {"0", "1"} and len(value) > 1:
        return int(value, 2)
    return integer(value)


class SellerApiSource:
    """The records of one application read into `checkpoint` (the read must be finished)."""

    def __init__(self, checkpoint: Checkpoint, seller_key: str) -> None:
        self.checkpoint = checkpoint
        self.seller_key = seller_key
        details = self._list("appdetails", "appdetails")
        self._details = details if isinstance(details, dict) else {}
        if not self._details.get("secret"):
            raise ValueError("KeyAuth's appdetails gave no application secret")

    @property
    def read_at(self) -> int:
        return self.checkpoint.read_at

    @property
    def secret(self) -> str:
        return str(self._details["secret"])

    def _reply(self, step: str) -> dict[str, Any]:
        return self.checkpoint.reply(step)

    def _list(self, step: str, field: str) -> Any:
        return self._reply(step).get(field)

    def _rows(self, step: str, field: str) -> list[dict[str, Any]]:
        rows = self._list(step, field)
        return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []

    # --- the application ---------------------------------------------------------------------

    def _settings(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(functions, messages) of either getsettings shape."""
        reply = self._reply("getsettings")
        functions = reply.get("functions")
        messages = reply.get("messages")
        if isinstance(functions, dict) or isinstance(messages, dict):
            return (
                functions if isinstance(functions, dict) else {},
                messages if isinstance(messages, dict) else {},
            )
        return reply, reply

    def apps(self) -> Iterator[r.App]:
        functions, messages = self._settings()
        columns: dict[str, str | int | None] = {}
        for source in (functions, messages):
            for name, value in source.items():
                column = SETTINGS_COLUMNS.get(name) or (name if name in MESSAGE_COLUMNS else None)
                if column is None or isinstance(value, (dict, list)):
                    continue
                columns[column] = int(value) if isinstance(value, bool) else value
        ver = text(self._details.get("version")) or text(functions.get("version"))
        yield r.App(
            name=str(self._details.get("name") or ""),
            secret=self.secret,
            ownerid=str(self._details.get("ownerid") or ""),
            owner=None,
            sellerkey=self.seller_key,
            enabled=flag(functions.get("enabled"), True),
            paused=flag(functions.get("paused"), False),
            ver=ver,
            columns=columns,
        )

    # --- the rows ----------------------------------------------------------------------------

    def rows(self, kind: type[r.R], app: str) -> Iterator[r.R]:
        if app != self.secret:
            return iter(())
        table = r.TABLES[cast(type[r.Record], kind)]
        reader = getattr(self, "_" + table, None)
        if reader is None:  # whitelist, tokens, chat messages: not in the seller API
            return iter(())
        return cast(Iterator[r.R], reader())

    def _subscriptions(self) -> Iterator[r.Subscription]:
        for row in self._rows("fetchallsubs", "subs"):
            yield r.Subscription(
                app=self.secret, name=str(row.get("name") or ""), level=str(row.get("level") or "")
            )

    def _keys(self) -> Iterator[r.Key]:
        for row in self._rows("fetchallkeys", "keys"):
            yield r.Key(
                app=self.secret,
                key=str(row.get("key") or ""),
                expires=integer(row.get("expires")),
                status=text(row.get("status")),
                level=str(row.get("level") or ""),
                note=text(row.get("note")),
                genby=text(row.get("genby")),
                gendate=integer(row.get("gendate")),
                usedon=integer(row.get("usedon")),
                usedby=text(row.get("usedby")),
                banned=text(row.get("banned")),
            )

    def _capped(self) -> dict[str, dict[str, Any]]:
        """fetchallusers' full rows (at most 520) by username."""
        return {str(row.get("username")): row for row in self._rows("fetchallusers", "users")}

    def _userdata(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(username, userdata reply) of every user that still existed when it was read."""
        for entry in replies(self.checkpoint, USERDATA):
            reply = entry["reply"]
            if reply.get("success") is True:
                yield str(entry["user"]), reply

    def _users(self) -> Iterator[r.User]:
        capped = self._capped()
        for name, data in self._userdata():
            row: Mapping[str, Any] = capped.get(name) or {}

            def pick(field: str, row: Mapping[str, Any] = row, data: dict[str, Any] = data) -> object:
                return row[field] if field in row else data.get(field)

            # None is KeyAuth's "the next login sets it"; a hash the API did not give is unreadable.
            readable = "password" in row or "password" in data
            yield r.User(
                app=self.secret,
                username=name,
                password=text(pick("password")) if readable else r.UNREADABLE_PASSWORD,
                email=text(row.get("email")),
                hwid=text(pick("hwid")),
                createdate=integer(pick("createdate")),
                lastlogin=integer(pick("lastlogin")),
                banned=text(pick("banned")),
                ip=text(pick("ip")),
                cooldown=integer(pick("cooldown")),
            )

    def _usersubs(self) -> dict[str, list[dict[str, Any]]]:
        """usersub's rows (every subscription, paused ones too) of the users it was asked for."""
        found: dict[str, list[dict[str, Any]]] = {}
        for entry in replies(self.checkpoint, USERSUB):
            reply = entry["reply"]
            if reply.get("success") is True:
                found[str(entry["user"])] = [row for row in reply.get("subs") or [] if isinstance(row, dict)]
            elif reply.get("success") is False and usersub_known(reply):
                found[str(entry["user"])] = []  # "No Subscriptions Found"
        return found

    def _subs(self) -> Iterator[r.Sub]:
        every = self._usersubs()
        for name, data in self._userdata():
            if name in every:
                for row in every[name]:
                    expiry = integer(row.get("expiry"))
                    if expiry is None:
                        continue
                    yield r.Sub(
                        app=self.secret,
                        user=name,
                        subscription=str(row.get("subscription") or ""),
                        expiry=expiry,  # remaining seconds while paused, as KeyAuth keeps it
                        paused=flag(row.get("paused"), False),
                        key=text(row.get("key")),
                    )
                continue
            for sub in data.get("subscriptions") or []:
                expiry = integer(sub.get("expiry")) if isinstance(sub, dict) else None
                if expiry is None:
                    continue
                yield r.Sub(
                    app=self.secret, user=name, subscription=str(sub.get("subscription") or ""), expiry=expiry
                )

    def _uservars(self) -> Iterator[r.UserVar]:
        for row in self._rows("fetchalluservars", "vars"):
            yield r.UserVar(
                app=self.secret,
                user=str(row.get("user") or ""),
                name=str(row.get("name") or ""),
                data=str(row.get("data") or ""),
                readOnly=flag(row.get("readOnly"), False),
            )

    def _vars(self) -> Iterator[r.Var]:
        for row in self._rows("fetchallvars", "vars"):
            yield r.Var(
                app=self.secret,
                varid=str(row.get("varid") or ""),
                msg=str(row.get("msg") or ""),
                authed=flag(row.get("authed"), True),
            )

    def _files(self) -> Iterator[r.File]:
        for row in self._rows("fetchallfiles", "files"):
            yield r.File(
                app=self.secret,
                id=str(row.get("id") or ""),
                url=str(row.get("url") or ""),
                name=text(row.get("name")),
                size=text(row.get("size")),
                authed=flag(row.get("authed"), True),
            )

    def _webhooks(self) -> Iterator[r.Webhook]:
        for row in self._rows("fetchallwebhooks", "webhooks"):
            full = text(row.get("baselink"))
            yield r.Webhook(
                app=self.secret,
                webid=str(row.get("webid") or ""),
                baselink=full or str(row.get("short_baselink") or ""),
                useragent=text(row.get("useragent")),
                authed=flag(row.get("authed"), True),
                full_url=full is not None,
            )

    def _bans(self) -> Iterator[r.Ban]:
        for row in self._rows("fetchallblacks", "blacklists"):
            yield r.Ban(
                app=self.secret,
                type=str(row.get("type") or ""),
                hwid=text(row.get("hwid")),
                ip=text(row.get("ip")),
            )

    def _chats(self) -> Iterator[r.Chat]:
        for row in self._rows("fetchallchats", "chats"):
            yield r.Chat(
                app=self.secret, name=str(row.get("name") or ""), delay=integer(row.get("delay")) or 0
            )

    def _chatmutes(self) -> Iterator[r.ChatMute]:
        for row in self._rows("fetchallmutes", "mutes"):
            yield r.ChatMute(
                app=self.secret, user=str(row.get("user") or ""), time=integer(row.get("time")) or 0
            )

    def _buttons(self) -> Iterator[r.Button]:
        for row in self._rows("fetchallbuttons", "buttons"):
            yield r.Button(
                app=self.secret, text=str(row.get("text") or ""), value=str(row.get("value") or "")
            )

    def _logs(self) -> Iterator[r.Log]:
        if "fetchalllogs" not in self.checkpoint.done:
            return
        for row in self._rows("fetchalllogs", "logs"):
            yield r.Log(
                app=self.secret,
                logdate=integer(row.get("logdate")) or 0,
                logdata=str(row.get("logdata") or ""),
                credential=text(row.get("credential")),
                pcuser=text(row.get("pcuser")),
            )

    def _accounts(self) -> Iterator[r.TeamMember]:
        for row in self._rows("fetchteam", "resellers"):
            yield r.TeamMember(
                app=self.secret,
                username=str(row.get("username") or ""),
                role="Reseller",
                balance=balance_text(row.get("balance")),
                keylevels=text(row.get("key_levels") if "key_levels" in row else row.get("keylevels")),
            )
        for row in self._rows("fetchteam", "managers"):
            yield r.TeamMember(
                app=self.secret,
                username=str(row.get("username") or ""),
                role="Manager",
                permissions=permissions_of(row.get("permissions")),
            )

    # --- what is lost ------------------------------------------------------------------------

    def warnings(self, app: str) -> list[str]:
        if app != self.secret:
            return []
        found: list[str] = [NOT_EXPORTED]
        found += self._user_warnings()
        found += self._list_warnings()
        return found

    def _user_warnings(self) -> list[str]:
        found: list[str] = []
        capped = self._capped()
        full_list = usernames_of(self._reply("fetchallusernames"))
        read = dict(self._userdata())
        gone = [name for name in full_list or capped if name not in read]
        if gone:
            found.append(f"{len(gone)} users were deleted on KeyAuth while they were read: {named(gone)}")
        if len(capped) >= CAP and not full_list:
            found.append(
                f"KeyAuth's user list stops at {CAP} rows and its full username list was not "
                f"available: users past the first {CAP} may be missing"
            )
        past = [name for name in read if name not in capped]
        if past:
            no_password = [name for name in past if "password" not in read[name]]
            no_ban = [name for name in past if "banned" not in read[name]]
            line = (
                f"KeyAuth's fetchallusers stops at {CAP} rows: the other {len(past)} users were read "
                "one by one (userdata), which gives no e-mail hash (Forgot password cannot find them)"
            )
            if no_password:
                line += (
                    f"; no password hash for {len(no_password)} of them, who cannot sign in until "
                    f"they are given a new password: {named(no_password)}"
                )
            if no_ban:
                line += f"; no ban state for {len(no_ban)} of them (imported as not banned): {named(no_ban)}"
            found.append(line)
        found += self._paused_warnings(read)
        return found

    def _paused_warnings(self, read: dict[str, dict[str, Any]]) -> list[str]:
        found: list[str] = []
        every = self._usersubs()
        if next(self.apps()).paused and not every:
            found.append(
                "The application is paused on KeyAuth: every subscription is paused, and the seller "
                "API does not give paused subscriptions, so none are imported. Unpause it on KeyAuth "
                "first, or import from a dump"
            )
        paused = sorted(paused_key_users(self._reply("fetchallkeys")) - set(every))
        for name in paused:
            found.append(
                f"User {name}: its key is paused, so its paused subscriptions are not in the seller "
                "API (userdata lists active ones only) and are not imported"
            )
        empty = [
            name
            for name, data in read.items()
            if not data.get("subscriptions") and name not in paused and name not in every
        ]
        if empty:
            found.append(
                f"{len(empty)} users have no active subscription in the seller API: their expired "
                "subscriptions and any paused ones (which the seller API does not give) are not "
                f"imported: {named(empty)}"
            )
        if every:
            found.append(
                f"{len(every)} users with no active subscription or a paused key were read with "
                "usersub, which gives every subscription row: their paused and expired "
                "subscriptions are imported as they are"
            )
        return found

    def _list_warnings(self) -> list[str]:
        found: list[str] = []
        variables = self._rows("fetchallvars", "vars")
        if variables and not any("authed" in row for row in variables):
            found.append(
                f"The seller API does not say which of the {len(variables)} global variables need a "
                "login: all are imported as needing one (KeyAuth's default); change those that "
                "should not on the Variables page"
            )
        uservars = self._rows("fetchalluservars", "vars")
        if uservars and not any("readOnly" in row for row in uservars):
            found.append(
                f"The seller API does not say which of the {len(uservars)} user variables are "
                "read-only: all are imported as writable"
            )
        files = self._rows("fetchallfiles", "files")
        if files and not any("authed" in row for row in files):
            found.append(
                f"The seller API gives only the id and URL of the {len(files)} files: they are "
                "imported as needing a login (KeyAuth's default)"
            )
        for row in self._rows("fetchallwebhooks", "webhooks"):
            if not text(row.get("baselink")):
                found.append(
                    f"Webhook {row.get('webid')}: the seller API gives only a shortened link "
                    f"({row.get('short_baselink')}), so it is imported disabled: enter its full URL again"
                )
        return found


def default_checkpoint(seller_key: str, folder: Path) -> Path:
    """Where a read of this seller key keeps its checkpoint unless told otherwise (the key itself
    is not in the name)."""
    return folder / f"keyauth-{key_digest(seller_key)[:12]}.checkpoint"


async def read_seller_api(
    settings: Settings,
    seller_key: str,
    *,
    checkpoint: Path,
    resume: bool,
    now: int,
    base_url: str = DEFAULT_URL,
    pace: Pace | None = None,
    with_logs: bool = True,
    progress: Progress | None = None,
    sleep: Sleep = asyncio.sleep,
) -> tuple[SellerApiSource, ReadStats]:
    """Read (or go on reading) an application into `checkpoint`, then its records. Raises
    CheckpointError or SellerApiError with a message for a person."""
    kept = open_checkpoint(checkpoint, base_url=base_url, seller_key=seller_key, resume=resume, now=now)
    pacer = Pacer(pace or parse_pace(DEFAULT_PACE), sleep=sleep)
    reader = SellerApiReader(
        settings, seller_key, kept, pacer, base_url=base_url, with_logs=with_logs, progress=progress
    )
    stats = await reader.read()
    return SellerApiSource(kept, seller_key), stats
