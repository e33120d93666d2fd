"""Reading a live KeyAuth application through its seller API, one paced request at a time, each
reply kept in the checkpoint before the next request (`checkpoint.py`), so a stopped read resumes
where it stopped. `sellerapi.SellerApiSource` then turns the replies into KeyAuth's records.

The steps: the application's details and settings, every `fetchall*` list, the user list without
its 520-row cap (`fetchallusernames`), then `userdata` for each user (the only place the seller API
gives a user's subscriptions). Every request goes through the guarded outbound client."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from licensegate import outbound
from licensegate.config import Settings
from licensegate.domain.keyauthimport.checkpoint import Checkpoint, CheckpointError
from licensegate.domain.keyauthimport.pacing import Pacer

DEFAULT_URL = "https://keyauth.win/api/seller/"
# The lists read once each, in this order, before the users one by one.
LISTS = (
    "appdetails",
    "getsettings",
    "fetchallsubs",
    "fetchallkeys",
    "fetchallusers",
    "fetchallusernames",
    "fetchalluservars",
    "fetchallvars",
    "fetchallfiles",
    "fetchallwebhooks",
    "fetchallblacks",
    "fetchallchats",
    "fetchallmutes",
    "fetchallbuttons",
    "fetchteam",
    "fetchalllogs",
)
USERDATA = "userdata:"  # a user's step is this prefix and the username
USERSUB = "usersub:"  # every subscription row of a user, paused ones included (older servers)
NO_SUCH_TYPE = "type doesn't exist"
MAX_REPLY = 256 * 1024 * 1024  # fetchallkeys of a large application is one reply
REQUEST_TIMEOUT = 300.0
MAX_RATE_LIMITED = 8  # 429s in a row before giving up (the checkpoint stays for --resume)
TRANSIENT_DELAYS = (1.0, 4.0)  # waits before asking again after a 5xx or a broken connection

# Told after every step: steps done, steps in all (once known), the step.
Progress = Callable[[int, int | None, str], Awaitable[None]]


class SellerApiError(Exception):
    """The read cannot go on: KeyAuth refused it, or kept failing. A message for a person."""


@dataclass(frozen=True, slots=True)
class ReadStats:
    requests: int  # requests made by this run (retries included)
    rate_limited: int  # 429s received
    resumed_steps: int  # steps a resumed run found already finished


def usernames_of(reply: dict[str, Any]) -> list[str]:
    """`fetchallusernames`: a list of strings (2022) or of `{username}` objects (newer)."""
    names: list[str] = []
    for entry in reply.get("usernames") or []:
        name = entry.get("username") if isinstance(entry, dict) else entry
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return names


@dataclass
class _Known:
    active: dict[str, bool | None] = field(default_factory=dict)  # username -> any active (None: gone)
    usersub: bool | None = None  # whether the server answers usersub (None: not asked yet)


def _has_subscriptions(reply: dict[str, Any]) -> bool | None:
    """None for a user deleted since the list was read."""
    return bool(reply.get("subscriptions")) if reply.get("success") is True else None


def usersub_known(reply: dict[str, Any]) -> bool:
    return str(reply.get("message") or "").strip().lower().rstrip("!.") != NO_SUCH_TYPE


def paused_key_users(reply: dict[str, Any]) -> set[str]:
    """Users whose key is paused (pausing a user pauses the key it used)."""
    keys = reply.get("keys") or []
    return {
        str(k["usedby"])
        for k in keys
        if isinstance(k, dict) and k.get("status") == "Paused" and k.get("usedby")
    }


def _empty_list(step: str, status: int, message: str) -> bool:
    """KeyAuth answers an empty list as a refusal (`No License Keys Found`, HTTP 406), and a user
    deleted since the list was read as `User not found`; a wrong seller key is a 404."""
    text = message.strip().lower().rstrip("!.")
    if status == 404:
        return False
    if step.startswith(USERDATA):
        return text.endswith("not found")
    if step.startswith(USERSUB):  # none, the user gone, or a server without usersub: all kept
        return status == 406 or text.endswith("not found") or text == NO_SUCH_TYPE
    return step.startswith("fetch") and (status == 406 or (text.startswith("no ") and text.endswith("found")))


class SellerApiReader:
    def __init__(
        self,
        settings: Settings,
        seller_key: str,
        checkpoint: Checkpoint,
        pacer: Pacer,
        *,
        base_url: str = DEFAULT_URL,
        with_logs: bool = True,
        progress: Progress | None = None,
    ) -> None:
        self.settings = settings
        self.seller_key = seller_key
        self.checkpoint = checkpoint
        self.pacer = pacer
        self.base_url = base_url
        self.with_logs = with_logs
        self.progress = progress
        self._requests = 0
        self._rate_limited = 0

    async def read(self) -> ReadStats:
        """Every step not yet in the checkpoint, in order; raises SellerApiError to stop (what was
        read stays in the checkpoint)."""
        resumed = len(self.checkpoint.done)
        lists = [step for step in LISTS if self.with_logs or step != "fetchalllogs"]
        done = 0
        for step in lists:
            if step not in self.checkpoint.done:
                self.checkpoint.record(step, await self._ask(step, {}))
            done += 1
            await self._report(done, None, step)
        names = self._usernames()
        total = len(lists) + len(names)
        known = self._known_users()
        paused = paused_key_users(self.checkpoint.reply("fetchallkeys"))
        for name in names:
            step = USERDATA + name
            if step not in self.checkpoint.done:
                reply = await self._ask(step, {"user": name})
                self.checkpoint.record(step, reply, user=name)
                known.active[name] = _has_subscriptions(reply)
            done += 1
            await self._report(done, total, step)
            # userdata lists active subscriptions only: where some may be paused (no active one, or
            # a paused key), the older `usersub` gives every row, while the server knows it.
            suspect = known.active.get(name) is False or name in paused
            if not suspect or known.usersub is False:
                continue
            step = USERSUB + name
            total += 1
            if step not in self.checkpoint.done:
                reply = await self._ask(step, {"user": name})
                self.checkpoint.record(step, reply, user=name)
                if known.usersub is None:
                    known.usersub = usersub_known(reply)
            done += 1
            await self._report(done, total, step)
        return ReadStats(self._requests, self._rate_limited, resumed)

    def _known_users(self) -> _Known:
        """What finished steps say: which users have active subscriptions, whether the server
        knows `usersub` (one pass over the checkpoint, so a resumed read starts at once)."""
        known = _Known()
        for entry in self.checkpoint.entries():
            step = str(entry["step"])
            if step.startswith(USERDATA):
                known.active[str(entry["user"])] = _has_subscriptions(entry["reply"])
            elif step.startswith(USERSUB) and known.usersub is None:
                known.usersub = usersub_known(entry["reply"])
        return known

    def _usernames(self) -> list[str]:
        names = usernames_of(self.checkpoint.reply("fetchallusernames"))
        if not names:  # an older server without the list: the capped rows are all there is
            names = [
                str(row["username"]) for row in self.checkpoint.reply("fetchallusers").get("users") or []
            ]
        return names

    async def _report(self, done: int, total: int | None, step: str) -> None:
        if self.progress is not None:
            await self.progress(done, total, step)

    def _url(self, kind: str, params: dict[str, str]) -> str:
        query = urllib.parse.urlencode({"sellerkey": self.seller_key, "type": kind, **params})
        joiner = "&" if "?" in self.base_url else "?"
        return f"{self.base_url}{joiner}{query}"

    async def _ask(self, step: str, params: dict[str, str]) -> dict[str, Any]:
        kind = step.split(":", 1)[0]
        url = self._url(kind, params)
        limited = 0
        failures = 0
        while True:
            await self.pacer.wait_turn()
            self._requests += 1
            try:
                reply = await outbound.request(
                    self.settings, "GET", url, max_bytes=MAX_REPLY, timeout=REQUEST_TIMEOUT
                )
            except outbound.OutboundRefused as exc:
                raise SellerApiError(f"Cannot reach the seller API: {exc.message}") from exc
            except outbound.OutboundFailed as exc:
                failures += 1
                if failures > len(TRANSIENT_DELAYS):
                    raise SellerApiError(self._stopped(kind, exc.message)) from exc
                await self.pacer.back_off(str(int(TRANSIENT_DELAYS[failures - 1])), failures)
                continue
            if reply.status == 429:
                self._rate_limited += 1
                limited += 1
                if limited > MAX_RATE_LIMITED:
                    raise SellerApiError(self._stopped(kind, f"still rate limited after {limited} waits"))
                await self.pacer.back_off(reply.headers.get("retry-after"), limited)
                continue
            if reply.status >= 500:
                failures += 1
                if failures > len(TRANSIENT_DELAYS):
                    raise SellerApiError(self._stopped(kind, f"it answered HTTP {reply.status}"))
                await self.pacer.back_off(str(int(TRANSIENT_DELAYS[failures - 1])), failures)
                continue
            return self._judge(step, kind, reply)

    def _judge(self, step: str, kind: str, reply: outbound.OutboundReply) -> dict[str, Any]:
        text = reply.text()
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise SellerApiError(
                f"KeyAuth's answer to {kind} is not JSON (HTTP {reply.status}): {text[:200]}"
            )
        if body.get("success") is True:
            return body
        message = str(body.get("message") or "")
        if _empty_list(step, reply.status, message):
            return body
        raise SellerApiError(f"KeyAuth refused {kind} (HTTP {reply.status}): {message[:200]}")

    def _stopped(self, kind: str, why: str) -> str:
        return (
            f"KeyAuth's seller API failed on {kind}: {why}. What was read is kept in {self.checkpoint.path}: "
            "run the same command again with --resume to continue from there."
        )


def open_checkpoint(path: Path, *, base_url: str, seller_key: str, resume: bool, now: int) -> Checkpoint:
    """The checkpoint to read into: a new one (the read starts now), or the one being resumed."""
    if resume:
        return Checkpoint.resume(path, base_url=base_url, seller_key=seller_key)
    return Checkpoint.start(path, base_url=base_url, seller_key=seller_key, read_at=now)


def replies(checkpoint: Checkpoint, prefix: str) -> Iterator[dict[str, Any]]:
    """The finished steps whose name starts with `prefix`, in order."""
    for entry in checkpoint.entries():
        if str(entry["step"]).startswith(prefix):
            yield entry


__all__ = ["CheckpointError", "SellerApiError", "SellerApiReader", "open_checkpoint", "replies"]
