"""KeyAuth's dashboard exports (`KeyAuthKeys.json`, `KeyAuthUsers.json`) as KeyAuth's records.

The files do not name the application, so its name, ownerid and secret (shown on KeyAuth's
dashboard) and its subscriptions are given by the seller. They lose a lot, and what can be won
back is won back by rules:

- keys carry no status: a key that is also a username was redeemed by a License Login (KeyAuth
  makes the user's name the key), so it is imported as Used by that user; any other key's status
  is unknown (None) and reported;
- every subscription is named "default" (a bug of KeyAuth's exporter), so each user's rows are
  mapped onto the application's subscriptions: a License Login user's onto the subscriptions of
  its key's level (KeyAuth gives one row per such subscription, in order), every other user's onto
  the only subscription, else the one named "default" (every KeyAuth application starts with it),
  else the lowest level; the users mapped by the fallback are named in the report;
- the paused flag is not exported, but a paused row's expiry is its remaining seconds: an expiry
  before 2020-01-01 (KeyAuth's launch, 1,577,836,800) is read as remaining seconds, so paused;
- creation, last login and HWID-reset cooldown times are not exported (None).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport.values import integer, named, text

# An absolute expiry is a time KeyAuth existed at; anything smaller is a paused row's remaining seconds.
KEYAUTH_EPOCH = 1_577_836_800
DAY = 86400
NOT_EXPORTED = (
    "KeyAuth's export files hold only keys (key, level, duration) and users (name, e-mail hash, "
    "password hash, HWID, ban, address, subscriptions): not imported are users' creation, last login "
    "and HWID-reset times, keys' notes, creators and dates, user and global variables, files, "
    "webhooks, blacklists, chats, buttons, the team, logs, settings and messages"
)


class ExportFileError(Exception):
    """A file is not one of KeyAuth's exports (a message for a person)."""


def _load(path: Path, what: str) -> Any:
    try:
        with path.open("rb") as source:
            return json.load(source)
    except OSError as exc:
        raise ExportFileError(f"Cannot read {what} {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ExportFileError(f"{path} is not JSON, so not KeyAuth's {what}: {exc}") from exc


def _rows(value: object, path: Path, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
        raise ExportFileError(f"{path} does not look like KeyAuth's {what}")
    return cast(list[dict[str, Any]], value)


class ExportFilesSource:
    def __init__(
        self,
        app: r.App,
        subscriptions: Sequence[r.Subscription],
        *,
        keys: Path | None,
        users: Path | None,
        read_at: int | None = None,
    ) -> None:
        if keys is None and users is None:
            raise ExportFileError("Give KeyAuthKeys.json, KeyAuthUsers.json or both")
        self.app = app
        self.subscriptions = list(subscriptions)
        self.keys_path = keys
        self.users_path = users
        self._read_at = read_at if read_at is not None else self._export_time()
        self._check()

    def _export_time(self) -> int:
        """When the files were downloaded, as near as can be told (never later than now)."""
        times = [os.stat(path).st_mtime for path in (self.keys_path, self.users_path) if path is not None]
        return int(min([*times, time.time()]))

    def _check(self) -> None:
        self._key_rows()
        self._user_file()

    @property
    def read_at(self) -> int:
        return self._read_at

    # --- the files ---------------------------------------------------------------------------

    def _key_rows(self) -> list[dict[str, Any]]:
        if self.keys_path is None:
            return []
        rows = _rows(_load(self.keys_path, "KeyAuthKeys.json"), self.keys_path, "KeyAuthKeys.json")
        if rows and "key" not in rows[0]:
            raise ExportFileError(f"{self.keys_path} does not look like KeyAuth's KeyAuthKeys.json")
        return rows

    def _user_file(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(users, subscription rows) of KeyAuthUsers.json."""
        if self.users_path is None:
            return [], []
        data = _load(self.users_path, "KeyAuthUsers.json")
        if not isinstance(data, dict) or "users" not in data:
            raise ExportFileError(f"{self.users_path} does not look like KeyAuth's KeyAuthUsers.json")
        what = "KeyAuthUsers.json"
        return _rows(data["users"], self.users_path, what), _rows(
            data.get("subscription") or [], self.users_path, what
        )

    def _usernames(self) -> set[str]:
        return {str(row.get("username")) for row in self._user_file()[0]}

    def _key_levels(self) -> dict[str, str]:
        return {str(row.get("key")): str(row.get("level") or "") for row in self._key_rows()}

    # --- the records -------------------------------------------------------------------------

    def apps(self) -> Iterator[r.App]:
        yield self.app

    def rows(self, kind: type[r.R], app: str) -> Iterator[r.R]:
        if app != self.app.secret:
            return iter(())
        readers: dict[type[r.Record], Any] = {
            r.Subscription: lambda: iter(self.subscriptions),
            r.Key: self._keys,
            r.User: self._users,
            r.Sub: self._subs,
        }
        reader = readers.get(cast(type[r.Record], kind))
        return cast(Iterator[r.R], reader()) if reader is not None else iter(())

    def _keys(self) -> Iterator[r.Key]:
        users = self._usernames()
        for row in self._key_rows():
            key = str(row.get("key") or "")
            days = row.get("expiry")
            try:
                expires = round(float(days) * DAY) if days not in (None, "") else None
            except (TypeError, ValueError):
                expires = None
            used = key in users  # a License Login made a user named after the key
            yield r.Key(
                app=self.app.secret,
                key=key,
                expires=expires,
                status="Used" if used else None,
                level=str(row.get("level") or ""),
                usedby=key if used else None,
            )

    def _users(self) -> Iterator[r.User]:
        for row in self._user_file()[0]:
            yield r.User(
                app=self.app.secret,
                username=str(row.get("username") or ""),
                password=text(row.get("password")),
                email=text(row.get("email")),
                hwid=text(row.get("hwid")),
                banned=text(row.get("banned")),
                ip=text(row.get("ip")),
            )

    def _subs(self) -> Iterator[r.Sub]:
        for sub, _fallback in self._mapped():
            yield sub

    def _mapped(self) -> Iterator[tuple[r.Sub, bool]]:
        """Each subscription row mapped onto a subscription, and whether the fallback chose it."""
        levels = self._key_levels()
        by_user: dict[str, list[int]] = {}
        rows = self._user_file()[1]
        for row in rows:
            by_user.setdefault(str(row.get("user")), []).append(integer(row.get("expiry")) or 0)
        fallback = self._fallback()
        for user, expiries in by_user.items():
            level = levels.get(user)
            matching = [s.name for s in self.subscriptions if level is not None and s.level == level]
            if len(self.subscriptions) == 1:
                names, by_fallback = [self.subscriptions[0].name] * len(expiries), False
            elif matching:
                # KeyAuth wrote one row per subscription of the key's level, in that order.
                names = matching if len(matching) == len(expiries) else [matching[0]] * len(expiries)
                by_fallback = False
            else:
                names, by_fallback = [fallback] * len(expiries), True
            for name, expiry in zip(names, expiries, strict=True):
                paused = expiry < KEYAUTH_EPOCH
                yield (
                    r.Sub(app=self.app.secret, user=user, subscription=name, expiry=expiry, paused=paused),
                    by_fallback,
                )

    def _fallback(self) -> str:
        names = [s.name for s in self.subscriptions]
        if "default" in names or not names:
            return "default"

        def level(s: r.Subscription) -> tuple[int, str]:
            return (integer(s.level) or 0, s.level)

        return min(self.subscriptions, key=level).name

    # --- what is lost ------------------------------------------------------------------------

    def warnings(self, app: str) -> list[str]:
        if app != self.app.secret:
            return []
        found = [NOT_EXPORTED]
        if self.app.ver is None:
            found.append(
                "The export files do not carry the application's version: the default is used, and a "
                "program that sends another is refused (or told to update) until the version is set "
                "on the Settings page"
            )
        if self.keys_path is not None:
            keys = list(self._keys())
            unknown = sum(1 for key in keys if key.status is None)
            found.append(
                f"KeyAuthKeys.json carries no key status: {len(keys) - unknown} keys that are also usernames "
                f"(License Logins) are imported as used by that user; the other {unknown} keys' status is "
                "unknown, so one redeemed into an account with another name would be redeemable again. "
                "Import with the seller key or a database dump to keep every key's status"
            )
        if self.users_path is not None:
            mapped = list(self._mapped())
            fallen = sorted({sub.user for sub, by_fallback in mapped if by_fallback})
            subscriptions = (
                ", ".join(f"{s.name} (level {s.level})" for s in self.subscriptions) or "none given"
            )
            found.append(
                "KeyAuthUsers.json names every subscription 'default' (a bug of KeyAuth's exporter): rows "
                f"were mapped onto the application's subscriptions ({subscriptions}): a License Login "
                "user's onto those of its key's level, the others' onto "
                f"'{self._fallback()}'"
                + (f", which {len(fallen)} users got by that rule: {named(fallen)}" if fallen else "")
            )
            paused = sorted({sub.user for sub, _ in mapped if sub.paused})
            found.append(
                "KeyAuthUsers.json drops the paused flag: a row whose expiry is before 2020 (remaining "
                f"seconds, as KeyAuth keeps a paused one) is imported as paused ({len(paused)} users"
                + (f": {named(paused)})" if paused else ")")
            )
            missing = sorted({s.subscription for s, _ in mapped} - {s.name for s in self.subscriptions})
            if missing:
                found.append(f"Subscriptions not given but used: {', '.join(missing)}")
        return found
