"""A loopback stand-in for KeyAuth's seller API (`GET /api/seller/?sellerkey=&type=`), for the
importer's tests: one application with data generated the way KeyAuth's code writes it, served in
the documented shapes and with KeyAuth's gaps (`fetchallusers` stops at 520 rows, `userdata` lists
active subscriptions only, `fetchallvars` has no `authed`, webhooks come back as a short link), an
empty list answered as HTTP 406, and 429s once a client asks too much.

`era` picks the reply shapes: "2022" (the last open-source dispatcher: usernames as strings, flat
getsettings, userdata without password or ban) or "newer" (`{username}` objects, `functions` and
`messages`, userdata with password and ban). The whole truth (paused subscriptions, `authed`
flags, full webhook URLs) stays in `StandinApp` so a test can compare.

Rate limiting is counted, not timed, so tests do not depend on the machine's speed: after `burst`
answered requests every request is refused with 429 and `Retry-After: retry_after` until that many
seconds have passed, then the count starts again. `fail_after` makes it fail hard (HTTP 500) once
that many requests were answered, until the test sets it back to None; `hold_after` holds the
next request until the test sets `release`.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BCRYPT_ALPHABET = "./" + string.ascii_uppercase + string.ascii_lowercase + string.digits
DAY = 86400


@dataclass
class StandinSub:
    user: str
    subscription: str
    expiry: int  # unix time; remaining seconds while paused
    key: str | None = None
    paused: bool = False


@dataclass
class StandinApp:
    name: str
    ownerid: str
    secret: str
    sellerkey: str
    owner: str
    version: str = "1.0"
    subscriptions: list[dict[str, str]] = field(default_factory=list)
    keys: list[dict[str, Any]] = field(default_factory=list)
    users: list[dict[str, Any]] = field(default_factory=list)
    subs: list[StandinSub] = field(default_factory=list)
    uservars: list[dict[str, Any]] = field(default_factory=list)
    vars: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    webhooks: list[dict[str, Any]] = field(default_factory=list)
    bans: list[dict[str, Any]] = field(default_factory=list)
    chats: list[dict[str, Any]] = field(default_factory=list)
    mutes: list[dict[str, Any]] = field(default_factory=list)
    buttons: list[dict[str, Any]] = field(default_factory=list)
    resellers: list[dict[str, Any]] = field(default_factory=list)
    managers: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)


def _alnum(rng: random.Random, length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def fake_bcrypt(rng: random.Random) -> str:
    """A hash in PHP's password_hash() form ($2y$, cost 10, 22 salt + 31 hash characters)."""
    return "$2y$10$" + _alnum(rng, 53, BCRYPT_ALPHABET)


def key_mask(rng: random.Random) -> str:
    """KeyAuth's default mask: six groups of six upper-case letters and digits."""
    return "-".join(_alnum(rng, 6, string.ascii_uppercase + string.digits) for _ in range(6))


def sid(rng: random.Random) -> str:
    return (
        "S-1-5-21-"
        + "-".join(str(rng.randint(10**9, 4 * 10**9)) for _ in range(3))
        + f"-{rng.randint(1000, 9999)}"
    )


def real_bcrypt(password: str) -> str:
    """What PHP's password_hash() writes ($2y$), at the lowest cost so tests stay quick."""
    import bcrypt

    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode().replace("$2b$", "$2y$", 1)


def password_of(username: str) -> str:
    """The password a generated user registered with (a License Login user's is its key)."""
    return f"pw-{username}"


def generate(
    users: int = 40, keys: int = 30, *, seed: int = 25, now: int | None = None, real_passwords: bool = False
) -> StandinApp:
    """An application as KeyAuth's code leaves it: keys Not Used/Used/Banned/Paused, license-login
    users (username = key, password = bcrypt of the key), users with appended HWIDs, active,
    expired and paused subscriptions. With `real_passwords` the hashes verify (`password_of`)."""
    rng = random.Random(seed)
    now = int(time.time()) if now is None else now
    owner = "seller" + _alnum(rng, 4, string.ascii_lowercase)
    app = StandinApp(
        name="Standin App",
        ownerid=_alnum(rng, 10),
        secret=_alnum(rng, 64, "0123456789abcdef"),
        sellerkey=_alnum(rng, 32, "0123456789abcdef"),
        owner=owner,
        version="1.3",
    )
    app.subscriptions = [{"name": "default", "level": "1"}, {"name": "premium", "level": "2"}]
    app.settings = {
        "enabled": True,
        "hwid-lock": True,
        "version": app.version,
        "download": "https://example.com/download",
        "webdownload": "https://example.com/web",
        "webhook": "https://discord.com/api/webhooks/1/abc",
        "resellerstore": "https://example.com/store",
        "disabledmsg": "This application is disabled",
        "usernametakenmsg": "Username already taken, choose a different one",
        "licenseinvalidmsg": "Invalid license key",
        "keytakenmsg": "License key has already been used",
        "nosubmsg": "There is no subscription for your level",
        "userinvalidmsg": "Invalid username",
        "passinvalidmsg": "Password does not match.",
        "hwidmismatchmsg": "HWID doesn't match. Ask for a HWID reset",
        "noactivesubmsg": "No active subscription(s) found",
        "blackedmsg": "You've been blacklisted from our application",
        "pausedmsg": "Your subscription is paused and can't be used right now",
        "expiredmsg": "Key has expired",
        "sellixsecret": "",
        "dayresellerproductid": "",
        "weekresellerproductid": "",
        "monthresellerproductid": "",
        "liferesellerproductid": "",
        "cooldown": 604800,
    }
    durations = (DAY, 7 * DAY, 30 * DAY, 863910000)
    for index in range(keys):
        level = "2" if index % 5 == 0 else "1"
        app.keys.append(
            {
                "id": str(index + 1),
                "key": key_mask(rng),
                "note": f"batch {index // 10}" if index % 3 == 0 else None,
                "expires": str(rng.choice(durations)),
                "status": "Not Used",
                "level": level,
                "genby": owner,
                "gendate": str(now - rng.randint(10 * DAY, 100 * DAY)),
                "usedon": None,
                "usedby": None,
                "app": app.secret,
                "banned": None,
            }
        )
    for index in range(users):
        licensed = index < keys // 2  # the first users registered with a key as their username
        key = app.keys[index] if licensed else None
        username = key["key"] if key is not None else f"user{index:04d}"
        created = now - rng.randint(DAY, 90 * DAY)
        hwid = sid(rng) + (sid(rng) if index % 7 == 3 else "")  # a second HWID is appended
        email = None if licensed else hashlib.sha1(f"{username}@example.com".lower().encode()).hexdigest()  # noqa: S324 - as KeyAuth stores it
        banned = "chargeback" if index % 11 == 5 else None
        user = {
            "id": str(index + 1),
            "username": username,
            "email": email,
            "password": None if index % 13 == 7 else fake_bcrypt(rng),  # NULL: the first login sets it
            "hwid": hwid,
            "app": app.secret,
            "owner": owner,
            "createdate": str(created),
            "lastlogin": str(created + rng.randint(0, DAY)),
            "banned": banned,
            "ip": f"203.0.113.{index % 250 + 1}",
            "cooldown": None,
        }
        if real_passwords and user["password"] is not None:
            user["password"] = real_bcrypt(username if licensed else password_of(username))
        app.users.append(user)
        if banned:
            app.bans.append({"hwid": hwid, "ip": None, "type": "hwid"})
            app.bans.append({"hwid": None, "ip": user["ip"], "type": "ip"})
        if key is not None:
            if index == 0:  # one License Login user holds a lifetime key: still active today
                key["expires"] = str(durations[-1])
            key["status"] = "Used"
            key["usedby"] = username
            key["usedon"] = created
            for sub in app.subscriptions:
                if sub["level"] == key["level"]:
                    app.subs.append(
                        StandinSub(username, sub["name"], created + int(key["expires"]), key["key"])
                    )
        elif index % 9 == 4:  # paused: the expiry holds the remaining seconds
            app.subs.append(StandinSub(username, "default", 12 * DAY + index, paused=True))
        elif index % 9 == 8:  # expired
            app.subs.append(StandinSub(username, "default", now - 3 * DAY))
        else:
            app.subs.append(StandinSub(username, "default", now + (index + 1) * DAY))
            if index % 4 == 0:
                app.subs.append(StandinSub(username, "premium", now + 400 * DAY))
    for index, key in enumerate(app.keys):
        if key["status"] == "Used" and index % 6 == 1:
            key["status"] = "Banned"
            key["banned"] = "shared the key"
    paused_user = next((sub.user for sub in app.subs if sub.paused), None)
    if paused_user is not None and app.keys:
        spare = app.keys[-1]  # pausing a user pauses the key it used
        spare.update(status="Paused", usedby=paused_user, usedon=now - DAY)
    for index, user in enumerate(app.users[:: max(1, users // 8)]):
        app.uservars.append(
            {"name": "theme", "data": f"dark{index}", "user": user["username"], "readOnly": index % 2}
        )
    app.vars = [
        {"varid": "motd", "msg": "Welcome back", "authed": 0},
        {"varid": "latest", "msg": "https://example.com/latest.zip", "authed": 1},
    ]
    app.files = [
        {
            "id": f"{rng.randint(0, 999999):06d}",
            "url": "https://example.com/loader.zip",
            "name": "loader.zip",
            "size": "1.5 MB",
            "authed": 1,
        },
    ]
    app.webhooks = [
        {
            "webid": _alnum(rng, 10),
            "baselink": "https://example.com/hook?secret=" + _alnum(rng, 16),
            "useragent": "KeyAuth",
            "authed": 1,
        },
    ]
    app.chats = [{"name": "general", "delay": 5}, {"name": "support", "delay": 30}]
    if app.users:
        app.mutes = [{"user": app.users[-1]["username"], "time": now + DAY}]
    app.buttons = [{"text": "Open loader", "value": "open"}]
    app.resellers = [{"username": "reseller1", "balance": "5|0|2|0|0|1|0", "key_levels": "1|2"}]
    app.managers = [{"username": "manager1", "permissions": 2047}]
    app.logs = [
        {
            "id": str(i + 1),
            "logdate": str(now - i * 3600),
            "logdata": f"opened menu {i}",
            "credential": app.users[i % len(app.users)]["username"] if app.users else None,
            "pcuser": "DESKTOP-1",
        }
        for i in range(5)
    ]
    return app


def _ok(message: str, **fields: Any) -> tuple[int, dict[str, Any]]:
    return 200, {"success": True, "message": message, **fields}


def _none(message: str) -> tuple[int, dict[str, Any]]:
    return 406, {"success": False, "message": message}


class Standin:
    """The server's state; `answer` is one seller API call."""

    def __init__(
        self,
        app: StandinApp,
        *,
        era: str = "2022",
        burst: int | None = None,
        retry_after: int = 1,
        cap: int = 520,
    ) -> None:
        self.app = app
        self.cap = cap  # fetchallusers' LIMIT
        self.era = era
        self.burst = burst
        self.retry_after = retry_after
        self.fail_after: int | None = None
        # Held: once `hold_after` requests were answered, the next waits until `release` is set.
        self.hold_after: int | None = None
        self.release = threading.Event()
        self.held = threading.Event()  # set when a request is being held
        self.answered: list[str] = []  # "type" or "userdata:<user>" of every 200/406 answer, in order
        self.failed: list[str] = []  # the same for every 500 answer
        self.limited = 0  # 429s answered
        self._count = 0
        self._blocked_until = 0.0
        self._lock = threading.Lock()

    def now(self) -> int:
        return int(time.time())

    def answer(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self.hold_after is not None and len(self.answered) >= self.hold_after:
            self.held.set()
            self.release.wait(60)
        with self._lock:
            key = query.get("sellerkey", "")
            if len(key) != 32:
                text = b"Invalid seller key length. Seller key is located in seller settings of dashboard."
                return 404, {"Content-Type": "text/plain"}, text
            kind = query.get("type", "")
            step = f"{kind}:{query.get('user', '')}" if kind in ("userdata", "usersub") else kind
            if self.fail_after is not None and len(self.answered) >= self.fail_after:
                self.failed.append(step)
                return 500, {"Content-Type": "text/html"}, b"<h1>502 Bad Gateway</h1>"
            if self.burst is not None:
                if time.monotonic() < self._blocked_until or self._count >= self.burst:
                    if self._count >= self.burst:
                        self._blocked_until = time.monotonic() + self.retry_after
                        self._count = 0
                    self.limited += 1
                    return (
                        429,
                        {"Retry-After": str(self.retry_after), "Content-Type": "application/json"},
                        json.dumps({"success": False, "message": "Too many requests"}).encode(),
                    )
                self._count += 1
            if key != self.app.sellerkey:
                status, body = (
                    404,
                    {"success": False, "message": "No application with specified seller key found"},
                )
            else:
                status, body = self._dispatch(kind, query)
            self.answered.append(step)
            return status, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def suspects(self) -> list[str]:
        """Users whose subscriptions an importer reads with usersub: none active, or a paused key."""
        paused = {k["usedby"] for k in self.app.keys if k["status"] == "Paused"}
        return [
            u["username"]
            for u in self.app.users
            if not self._active(u["username"]) or u["username"] in paused
        ]

    def steps(self, lists: tuple[str, ...]) -> list[str]:
        """The steps of a whole read, in order: the lists, then each user (and its usersub where
        asked; a server without usersub is asked once)."""
        found = list(lists)
        suspects = set(self.suspects())
        asked = False
        for user in self.app.users:
            found.append(f"userdata:{user['username']}")
            if user["username"] in suspects and (self.era == "2022" or not asked):
                found.append(f"usersub:{user['username']}")
                asked = True
        return found

    def _active(self, user: str) -> list[StandinSub]:
        now = self.now()
        return [s for s in self.app.subs if s.user == user and not s.paused and s.expiry > now]

    def _dispatch(self, kind: str, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        app = self.app
        newer = self.era != "2022"
        if kind == "appdetails":
            details = {"name": app.name, "ownerid": app.ownerid, "secret": app.secret, "version": app.version}
            return _ok("Successfully retrieved application details", appdetails=details)
        if kind == "getsettings":
            if not newer:
                return _ok("Retrieved Settings Successfully", **app.settings)
            functions = {k: v for k, v in app.settings.items() if not k.endswith("msg")}
            functions.update(paused=False, vpnblock=False, ipLogging=True, hash=None)
            messages = {k: v for k, v in app.settings.items() if k.endswith("msg")}
            messages.update(keybanned="Your license is banned", userbanned="The user is banned")
            return _ok("Retrieved Settings Successfully", functions=functions, messages=messages)
        if kind == "fetchallsubs":
            return (
                _ok("Successfully retrieved subscriptions", subs=app.subscriptions)
                if app.subscriptions
                else _none("No subscriptions found")
            )
        if kind == "fetchallkeys":
            return (
                _ok("Successfully Retrieved Licenses", keys=app.keys)
                if app.keys
                else _none("No License Keys Found")
            )
        if kind == "fetchallusers":
            if not app.users:
                return _none("No Users Found")
            return _ok("Successfully Retrieved Users", users=app.users[: self.cap])
        if kind == "fetchallusernames":
            if not app.users:
                return _none("No users found")
            names: list[Any] = [u["username"] for u in app.users]
            if newer:
                names = [{"username": name} for name in names]
            return _ok("Successfully Retrieved Usernames", usernames=names)
        if kind == "userdata":
            return self._userdata(query.get("user", ""), newer)
        if kind == "usersub" and not newer:  # 2022 only: every row, paused and expired ones too
            rows = [
                {
                    "id": str(i + 1),
                    "user": sub.user,
                    "subscription": sub.subscription,
                    "expiry": str(sub.expiry),
                    "app": app.secret,
                    "key": sub.key,
                    "paused": "1" if sub.paused else "0",
                }
                for i, sub in enumerate(app.subs)
                if sub.user == query.get("user", "")
            ]
            if not rows:
                return _none("No Subscriptions Found")
            return _ok("Successfully Retrieved User Subscription", subs=rows)
        lists: dict[str, tuple[str, list[dict[str, Any]], str, str]] = {
            "fetchalluservars": (
                "vars",
                [{k: v for k, v in row.items() if k != "readOnly"} for row in app.uservars],
                "Successfully retrieved user variables",
                "No user variables Found",
            ),
            "fetchallvars": (
                "vars",
                [{"varid": v["varid"], "msg": v["msg"]} for v in app.vars],
                "Successfully retrieved variables",
                "No variables Found",
            ),
            "fetchallfiles": (
                "files",
                [{"id": f["id"], "url": f["url"]} for f in app.files],
                "Successfully retrieved files",
                "No files Found",
            ),
            "fetchallwebhooks": (
                "webhooks",
                [
                    {
                        "webid": w["webid"],
                        "short_baselink": urllib.parse.urlsplit(w["baselink"]).netloc + "/...",
                        "useragent": w["useragent"],
                        "authed": w["authed"],
                    }
                    for w in app.webhooks
                ],
                "Successfully retrieved webhooks",
                "No webhooks found",
            ),
            "fetchallblacks": (
                "blacklists",
                app.bans,
                "Successfully retrieved blacklists",
                "No blacklists found",
            ),
            "fetchallchats": ("chats", app.chats, "Successfully retrieved chats", "No chat channels found"),
            "fetchallmutes": ("mutes", app.mutes, "Successfully retrieved mutes", "No mutes found"),
            "fetchallbuttons": ("buttons", app.buttons, "Successfully retrieved buttons", "No buttons found"),
            "fetchalllogs": ("logs", app.logs, "Successfully retrieved logs", "No logs found"),
        }
        if kind in lists:
            name, rows, ok, none = lists[kind]
            return _ok(ok, **{name: rows}) if rows else _none(none)
        if kind == "fetchteam":
            return _ok("Successfully retrieved team", resellers=app.resellers, managers=app.managers)
        return 200, {"success": False, "message": "Type doesn't exist"}

    def _userdata(self, name: str, newer: bool) -> tuple[int, dict[str, Any]]:
        user = next((u for u in self.app.users if u["username"] == name), None)
        if user is None:
            return 200, {"success": False, "message": "User not found"}
        now = self.now()
        subs = [
            {"subscription": s.subscription, "expiry": str(s.expiry), "timeleft": s.expiry - now}
            for s in self._active(name)
        ]
        token = hashlib.md5((user["password"] or "")[-5:].encode()).hexdigest()  # noqa: S324 - KeyAuth's token
        body: dict[str, Any] = {
            "success": True,
            "username": name,
            "subscriptions": subs,
            "ip": user["ip"],
            "hwid": user["hwid"],
            "createdate": user["createdate"],
            "lastlogin": user["lastlogin"],
            "cooldown": user["cooldown"],
            "token": token,
        }
        if newer:
            body["password"] = user["password"]
            body["banned"] = user["banned"]
            body["uservars"] = [
                {"name": v["name"], "data": v["data"]} for v in self.app.uservars if v["user"] == name
            ]
        return 200, body


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    standin: Standin


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path, _, raw = self.path.partition("?")
        if path != "/api/seller/":
            status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
        else:
            query = dict(urllib.parse.parse_qsl(raw, keep_blank_values=True))
            status, headers, body = self.server.standin.answer(query)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serving(standin: Standin) -> Iterator[str]:
    """Serve the stand-in on a loopback port; yields its seller API URL."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.standin = standin
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/seller/"
    finally:
        server.shutdown()
        server.server_close()


def write_exports(app: StandinApp, folder: Path) -> tuple[Path, Path]:
    """The dashboard's KeyAuthKeys.json and KeyAuthUsers.json of the application, as KeyAuth's
    exporter writes them: keys as {key, level, expiry in days}; users without times; every
    subscription row named "default", its expiry the raw column (remaining seconds while paused)."""
    keys = folder / "KeyAuthKeys.json"
    users = folder / "KeyAuthUsers.json"
    keys.write_text(
        json.dumps(
            [{"key": k["key"], "level": k["level"], "expiry": int(k["expires"]) / DAY} for k in app.keys]
        )
    )
    fields = ("username", "email", "password", "hwid", "banned", "ip")
    users.write_text(
        json.dumps(
            {
                "users": [{name: user[name] for name in fields} for user in app.users],
                "subscription": [
                    {"user": sub.user, "subscription": "default", "expiry": str(sub.expiry)}
                    for sub in app.subs
                ],
            }
        )
    )
    return keys, users
