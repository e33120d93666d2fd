# ruff: noqa: E501  (the table definitions are kept one line per column group, as KeyAuth's are)
"""A KeyAuth panel's database, built in the real MariaDB (127.0.0.1:3306, root, no password; see
scripts/services) for the importer's tests: the tables and columns of the open-source panel's
`db_structure.sql` that the importer reads (as described in the reference), and values written the
way KeyAuth's code writes them: `$2y$10$` bcrypt hashes, SHA-1 e-mails, appended HWIDs, a paused
subscription's remaining seconds, `Used`/`Banned`/`Not Used` keys, a License Login user named by
its key, duplicate and case-variant names that `utf8_general_ci` let in.

`build(database, file_base)` makes it (dropping an older one of that name) and returns what it
holds as `KeyAuthData`; `dump(database, path)` writes a `mysqldump` of it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bcrypt
import pymysql

HOST, PORT, USER = "127.0.0.1", 3306, "root"

TABLES_SQL = """
CREATE TABLE `apps` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `owner` varchar(65) NOT NULL, `name` varchar(40) NOT NULL,
  `secret` varchar(64) NOT NULL, `ownerid` varchar(39) NOT NULL, `enabled` int(1) NOT NULL,
  `banned` int(1) NOT NULL DEFAULT 0, `paused` int(1) NOT NULL DEFAULT 0, `hwidcheck` int(1) NOT NULL,
  `vpnblock` int(1) NOT NULL DEFAULT 0, `sellerkey` varchar(32) NOT NULL, `ver` varchar(5) NOT NULL DEFAULT '1.0',
  `download` varchar(120) DEFAULT NULL, `hash` varchar(2000) DEFAULT NULL, `webhook` varchar(130) DEFAULT NULL,
  `auditLogWebhook` varchar(130) DEFAULT NULL, `resellerstore` varchar(69) DEFAULT NULL,
  `appdisabled` varchar(100) DEFAULT 'This application is disabled', `usernametaken` varchar(100) DEFAULT 'Username Already Exists.',
  `keynotfound` varchar(100) DEFAULT 'Key Not Found.', `keyused` varchar(100) DEFAULT 'Key Already Used.',
  `nosublevel` varchar(100) DEFAULT 'There is no subscription created for your key level.',
  `usernamenotfound` varchar(100) DEFAULT 'Invalid username', `passmismatch` varchar(100) DEFAULT 'Password does not match.',
  `hwidmismatch` varchar(100) DEFAULT 'HWID Doesn''t match.', `noactivesubs` varchar(100) DEFAULT 'No active subscriptions found.',
  `hwidblacked` varchar(100) DEFAULT 'You''ve been blacklisted from our application',
  `pausedsub` varchar(100) DEFAULT 'Your subscription is paused and can''t be used right now',
  `vpnblocked` varchar(100) DEFAULT 'VPNs are blocked on this application',
  `keybanned` varchar(100) DEFAULT 'Your license is banned', `userbanned` varchar(100) DEFAULT 'The user is banned',
  `sessionunauthed` varchar(100) DEFAULT 'Session is not validated', `hashcheckfail` varchar(100) DEFAULT 'This program hash does not match, make sure you''re using latest version',
  `loggedInMsg` varchar(99) DEFAULT 'Logged in!', `pausedApp` varchar(99) DEFAULT 'Application is currently paused, please wait for the developer to say otherwise.',
  `unTooShort` varchar(99) DEFAULT 'Username too short, try longer one.', `pwLeaked` varchar(99) DEFAULT 'This password has been leaked in a data breach (not from us), please use a different one.',
  `chatHitDelay` varchar(99) DEFAULT 'Chat slower, you''ve hit the delay limit',
  `cooldown` int(11) NOT NULL DEFAULT 604800, `panelstatus` int(1) NOT NULL DEFAULT 1,
  `session` int(11) NOT NULL DEFAULT 21600, `hashcheck` int(1) NOT NULL DEFAULT 0,
  `webdownload` varchar(120) DEFAULT NULL, `customDomain` varchar(253) DEFAULT NULL,
  `format` varchar(99) DEFAULT '******-******-******-******-******-******',
  `killOtherSessions` int(1) NOT NULL DEFAULT 0, `cooldownUnit` int(11) NOT NULL DEFAULT 86400,
  `sessionUnit` int(11) NOT NULL DEFAULT 3600, `minUsernameLength` int(11) NOT NULL DEFAULT 1,
  `blockLeakedPasswords` int(1) NOT NULL DEFAULT 0, `forceEncryption` int(1) NOT NULL DEFAULT 0,
  `forceHwid` int(1) NOT NULL DEFAULT 1, `minHwid` int(11) NOT NULL DEFAULT 20,
  `sellerLogs` int(1) NOT NULL DEFAULT 0, `sellerApiWhitelist` varchar(49) DEFAULT NULL,
  `tokensystem` int(1) NOT NULL DEFAULT 0, `tokeninvalid` varchar(99) DEFAULT 'Token Invalid',
  PRIMARY KEY (`id`), KEY `sellerkey` (`sellerkey`), KEY `name_owner` (`name`,`owner`), KEY `secret` (`secret`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `keys` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `key` varchar(70) NOT NULL, `note` varchar(69) DEFAULT NULL,
  `expires` varchar(49) NOT NULL, `status` varchar(49) NOT NULL, `level` varchar(12) NOT NULL DEFAULT '',
  `genby` varchar(65) NOT NULL, `gendate` varchar(49) NOT NULL, `usedon` int(10) DEFAULT NULL,
  `usedby` varchar(70) DEFAULT NULL, `app` varchar(64) NOT NULL, `banned` varchar(99) DEFAULT NULL,
  PRIMARY KEY (`id`), KEY `app` (`app`), KEY `app_key` (`app`,`key`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `users` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `username` varchar(70) NOT NULL, `email` varchar(40) DEFAULT NULL,
  `password` varchar(60) DEFAULT NULL, `hwid` varchar(2000) DEFAULT NULL, `app` varchar(64) NOT NULL,
  `owner` varchar(65) DEFAULT NULL, `createdate` int(10) DEFAULT NULL, `lastlogin` int(10) DEFAULT NULL,
  `banned` varchar(99) DEFAULT NULL, `ip` varchar(49) DEFAULT NULL, `cooldown` int(10) DEFAULT NULL,
  PRIMARY KEY (`id`), KEY `username_app` (`username`,`app`), KEY `app` (`app`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `subs` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `user` varchar(70) NOT NULL, `subscription` varchar(49) NOT NULL,
  `expiry` varchar(49) NOT NULL, `app` varchar(64) NOT NULL, `key` varchar(70) DEFAULT NULL,
  `paused` int(1) NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`), KEY `user_app_paused` (`user`,`app`,`paused`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `subscriptions` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `name` varchar(49) NOT NULL, `level` varchar(12) NOT NULL,
  `app` varchar(64) NOT NULL, PRIMARY KEY (`id`), KEY `app_level` (`app`,`level`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `uservars` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `name` varchar(99) NOT NULL, `data` varchar(500) NOT NULL,
  `user` varchar(70) NOT NULL, `app` varchar(64) NOT NULL, `readOnly` int(1) NOT NULL DEFAULT 0,
  PRIMARY KEY (`id`), UNIQUE KEY `name_user_app` (`name`,`user`,`app`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `vars` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `varid` varchar(49) NOT NULL, `msg` varchar(1000) NOT NULL,
  `app` varchar(64) NOT NULL, `authed` int(1) NOT NULL DEFAULT 1, PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `files` (
  `pk` int(11) NOT NULL AUTO_INCREMENT, `name` varchar(49) NOT NULL, `id` varchar(49) NOT NULL,
  `url` varchar(2048) NOT NULL, `size` varchar(49) NOT NULL, `uploaddate` varchar(49) NOT NULL,
  `app` varchar(64) NOT NULL, `authed` int(1) NOT NULL DEFAULT 1, PRIMARY KEY (`pk`), KEY `app_id` (`app`,`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `webhooks` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `webid` varchar(10) NOT NULL, `baselink` varchar(200) NOT NULL,
  `useragent` varchar(49) NOT NULL DEFAULT 'KeyAuth', `app` varchar(64) NOT NULL,
  `authed` int(1) NOT NULL DEFAULT 1, PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `bans` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `hwid` varchar(500) DEFAULT NULL, `ip` varchar(49) DEFAULT NULL,
  `type` varchar(5) NOT NULL, `app` varchar(64) NOT NULL, PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `whitelist` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `ip` varchar(49) NOT NULL, `app` varchar(64) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `tokens` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `app` varchar(255) NOT NULL, `token` varchar(32) NOT NULL,
  `assigned` varchar(255) NOT NULL, `banned` int(1) NOT NULL DEFAULT 0, `reason` varchar(255) DEFAULT NULL,
  `hash` varchar(255) DEFAULT NULL, `type` varchar(255) NOT NULL, `status` varchar(255) NOT NULL DEFAULT 'Not Used',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `sessions` (
  `id` varchar(10) NOT NULL, `credential` varchar(70) DEFAULT NULL, `app` varchar(64) NOT NULL,
  `expiry` int(10) NOT NULL, `created_at` int(10) DEFAULT NULL, `enckey` varchar(100) DEFAULT NULL,
  `validated` int(1) NOT NULL DEFAULT 0, `ip` varchar(45) DEFAULT NULL, `pk` int(11) NOT NULL AUTO_INCREMENT,
  PRIMARY KEY (`pk`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `chats` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `name` varchar(50) NOT NULL, `delay` int(11) NOT NULL,
  `app` varchar(64) NOT NULL, PRIMARY KEY (`id`), UNIQUE KEY `name_app` (`name`,`app`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `chatmsgs` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `author` varchar(70) NOT NULL, `message` varchar(2000) NOT NULL,
  `timestamp` int(10) NOT NULL, `channel` varchar(50) NOT NULL, `app` varchar(64) NOT NULL, PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `chatmutes` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `user` varchar(70) NOT NULL, `time` int(10) NOT NULL,
  `app` varchar(64) NOT NULL, PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `buttons` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `text` varchar(99) NOT NULL, `value` varchar(99) NOT NULL,
  `app` varchar(64) NOT NULL, PRIMARY KEY (`id`), UNIQUE KEY `value_app` (`value`,`app`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `logs` (
  `id` int(11) NOT NULL AUTO_INCREMENT, `logdate` varchar(49) NOT NULL, `logdata` varchar(275) NOT NULL,
  `credential` varchar(70) DEFAULT NULL, `pcuser` varchar(32) DEFAULT NULL, `logapp` varchar(64) NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
CREATE TABLE `accounts` (
  `username` varchar(65) NOT NULL, `email` varchar(40) NOT NULL, `password` varchar(60) NOT NULL,
  `ownerid` varchar(65) DEFAULT NULL, `role` varchar(65) NOT NULL DEFAULT 'seller', `app` varchar(65) DEFAULT NULL,
  `owner` varchar(49) DEFAULT NULL, `banned` varchar(99) DEFAULT NULL, `locked` int(1) NOT NULL DEFAULT 0,
  `admin` int(1) NOT NULL DEFAULT 0, `img` varchar(90) NOT NULL DEFAULT 'https://cdn.keyauth.cc/front/assets/img/favicon.png',
  `balance` varchar(49) DEFAULT NULL, `keylevels` varchar(49) NOT NULL DEFAULT 'N/A',
  `expires` varchar(49) DEFAULT NULL, `twofactor` int(1) NOT NULL DEFAULT 0, `googleAuthCode` varchar(59) DEFAULT NULL,
  `permissions` bit(64) NOT NULL DEFAULT b'11111111111',
  PRIMARY KEY (`username`), KEY `owner` (`owner`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci;
"""

# The moment the fixture's data is written as of (what `now` meant to KeyAuth): the real time,
# as the dump's own "Dump completed on" line (and a live server's NOW()) will say.
NOW = int(time.time())
DAY = 86400


def bcrypt_2y(password: str) -> str:
    """A hash as PHP's password_hash(PASSWORD_BCRYPT) writes it: `$2y$10$...` (`$2b$` renamed)."""
    made = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=10)).decode()
    return "$2y$" + made[4:]


def email_sha1(address: str) -> str:
    return hashlib.sha1(address.strip().lower().encode()).hexdigest()  # noqa: S324 - KeyAuth's own hash


@dataclass(frozen=True)
class KeyAuthApp:
    name: str
    ownerid: str
    secret: str
    sellerkey: str


ALPHA = KeyAuthApp("Alpha Loader", "Ab3dE6gH9j", "a1" * 32, "5e11e7" + "0" * 26)
BETA = KeyAuthApp("Beta", "Ab3dE6gH9j", "b2" * 32, "5e11e7" + "1" * 26)

PASSWORDS = {"alice": "alice-Pa55!", "bob": "bob-Pa55!", "dave": "dave-Pa55!"}
HWIDS = {"alice": ("S-1-5-21-ALICE-ONE", "S-1-5-21-ALICE-TWO"), "dave": ("S-1-5-21-DAVE",)}
USED_KEY = "ALPHA-USED-0001"  # a License Login user is named by it
FREE_KEY = "ALPHA-FREE-0001"
BANNED_KEY = "ALPHA-BAN-00001"
PAUSED_LEFT = 3 * DAY + 1234  # dave's paused subscription: remaining seconds
NOTE = 'O\'Brien \\ "quoted"\nsecond line'  # every character mysqldump escapes


@dataclass(frozen=True)
class KeyAuthData:
    database: str
    apps: tuple[KeyAuthApp, ...]


def connect(database: str | None = None) -> pymysql.connections.Connection[Any]:
    return pymysql.connect(host=HOST, port=PORT, user=USER, password="", database=database, charset="utf8mb4")


def _insert(cur: Any, table: str, rows: list[dict[str, Any]]) -> None:
    for row in rows:
        names = ", ".join(f"`{n}`" for n in row)
        marks = ", ".join("%s" for _ in row)
        cur.execute(f"INSERT INTO `{table}` ({names}) VALUES ({marks})", tuple(row.values()))


def _app_row(app: KeyAuthApp, **extra: Any) -> dict[str, Any]:
    return {
        "owner": "kaseller",
        "name": app.name,
        "secret": app.secret,
        "ownerid": app.ownerid,
        "enabled": 1,
        "hwidcheck": 1,
        "sellerkey": app.sellerkey,
        **extra,
    }


def build(database: str, file_base: str) -> KeyAuthData:
    """Makes the database `database` (an older one of that name is dropped first). `file_base`
    is the loopback server the `files` rows point at (it serves /alpha.bin; /missing.bin is 404)."""
    a, b = ALPHA.secret, BETA.secret
    with connect() as conn, conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{database}`")
        cur.execute(f"CREATE DATABASE `{database}` CHARACTER SET utf8 COLLATE utf8_general_ci")
        cur.execute(f"USE `{database}`")
        for statement in TABLES_SQL.split(";"):
            if statement.strip():
                cur.execute(statement)
        _insert(
            cur,
            "apps",
            [
                _app_row(
                    ALPHA,
                    ver="2.1",
                    download="https://example.com/alpha.exe",
                    webdownload="https://example.com/web.exe",
                    keynotfound="That license does not exist.",
                    userbanned="You are banned, friend.",
                    cooldown=3 * DAY,
                    cooldownUnit=DAY,
                    session=12 * 3600,
                    sessionUnit=3600,
                    minHwid=10,
                    forceHwid=1,
                    tokensystem=0,
                ),
                _app_row(BETA, ver="1.0", enabled=1),
            ],
        )
        _insert(
            cur,
            "subscriptions",
            [
                {"name": "Gold", "level": "1", "app": a},
                {"name": "Silver", "level": "2", "app": a},
                {"name": "Trial", "level": "1", "app": b},
            ],
        )
        key = {"note": None, "genby": "kaseller", "usedon": None, "usedby": None, "banned": None}
        _insert(
            cur,
            "keys",
            [
                {
                    **key,
                    "key": USED_KEY,
                    "expires": str(30 * DAY),
                    "status": "Used",
                    "level": "1",
                    "gendate": str(NOW - 40 * DAY),
                    "usedon": NOW - 10 * DAY,
                    "usedby": USED_KEY,
                    "app": a,
                },
                {
                    **key,
                    "key": FREE_KEY,
                    "expires": str(7 * DAY),
                    "status": "Not Used",
                    "level": "1",
                    "gendate": str(NOW - 5 * DAY),
                    "note": NOTE,
                    "app": a,
                },
                {
                    **key,
                    "key": BANNED_KEY,
                    "expires": str(DAY),
                    "status": "Banned",
                    "level": "2",
                    "gendate": str(NOW - 5 * DAY),
                    "banned": "chargeback",
                    "app": a,
                },
                # A case variant of the free key, made later: KeyAuth's collation let it in.
                {
                    **key,
                    "key": FREE_KEY.lower(),
                    "expires": str(DAY),
                    "status": "Not Used",
                    "level": "1",
                    "gendate": str(NOW - 4 * DAY),
                    "app": a,
                },
                {
                    **key,
                    "key": "BETA-FREE-0001",
                    "expires": str(DAY),
                    "status": "Not Used",
                    "level": "1",
                    "gendate": str(NOW - DAY),
                    "app": b,
                },
            ],
        )
        user = {
            "email": None,
            "hwid": None,
            "owner": "kaseller",
            "banned": None,
            "ip": None,
            "cooldown": None,
        }
        _insert(
            cur,
            "users",
            [
                {
                    **user,
                    "username": "alice",
                    "password": bcrypt_2y(PASSWORDS["alice"]),
                    "email": email_sha1("Alice@Example.com"),
                    "hwid": "".join(HWIDS["alice"]),
                    "app": a,
                    "createdate": NOW - 90 * DAY,
                    "lastlogin": NOW - DAY,
                    "ip": "203.0.113.7",
                    "cooldown": NOW + DAY,
                },
                {
                    **user,
                    "username": "bob",
                    "password": bcrypt_2y(PASSWORDS["bob"]),
                    "hwid": "S-1-5-21-BOB",
                    "app": a,
                    "createdate": NOW - 80 * DAY,
                    "lastlogin": NOW - 2 * DAY,
                    "banned": "cheating",
                    "ip": "198.51.100.4",
                },
                {
                    **user,
                    "username": "carol",
                    "password": None,
                    "app": a,
                    "createdate": NOW - 70 * DAY,
                    "lastlogin": None,
                },
                {
                    **user,
                    "username": "dave",
                    "owner": "res1",  # made by the reseller
                    "password": bcrypt_2y(PASSWORDS["dave"]),
                    "hwid": HWIDS["dave"][0],
                    "app": a,
                    "createdate": NOW - 60 * DAY,
                    "lastlogin": NOW - 3 * DAY,
                },
                {
                    **user,
                    "username": USED_KEY,
                    "password": bcrypt_2y(USED_KEY),
                    "hwid": "S-1-5-21-LICENSE",
                    "app": a,
                    "createdate": NOW - 10 * DAY,
                    "lastlogin": NOW - 10 * DAY,
                },
                # A case variant of alice, made later, and an exact second row of carol.
                {
                    **user,
                    "username": "Alice",
                    "password": bcrypt_2y("other"),
                    "app": a,
                    "createdate": NOW - 50 * DAY,
                    "lastlogin": None,
                },
                {
                    **user,
                    "username": "carol",
                    "password": None,
                    "app": a,
                    "createdate": NOW - 20 * DAY,
                    "lastlogin": None,
                },
                {
                    **user,
                    "username": "zed",
                    "password": bcrypt_2y("zed-Pa55!"),
                    "app": b,
                    "createdate": NOW - DAY,
                    "lastlogin": None,
                },
            ],
        )
        _insert(
            cur,
            "subs",
            [
                {
                    "user": "alice",
                    "subscription": "Gold",
                    "expiry": str(NOW + 30 * DAY),
                    "app": a,
                    "key": None,
                    "paused": 0,
                },
                {
                    "user": "bob",
                    "subscription": "Gold",
                    "expiry": str(NOW + 30 * DAY),
                    "app": a,
                    "key": None,
                    "paused": 0,
                },
                {
                    "user": "dave",
                    "subscription": "Silver",
                    "expiry": str(PAUSED_LEFT),
                    "app": a,
                    "key": None,
                    "paused": 1,
                },
                {
                    "user": "carol",
                    "subscription": "Gold",
                    "expiry": str(NOW - DAY),
                    "app": a,
                    "key": None,
                    "paused": 0,
                },
                {
                    "user": USED_KEY,
                    "subscription": "Gold",
                    "expiry": str(NOW + 20 * DAY),
                    "app": a,
                    "key": USED_KEY,
                    "paused": 0,
                },
                {
                    "user": "zed",
                    "subscription": "Trial",
                    "expiry": str(NOW + DAY),
                    "app": b,
                    "key": None,
                    "paused": 0,
                },
            ],
        )
        _insert(
            cur,
            "uservars",
            [
                {"name": "plan", "data": "pro", "user": "alice", "app": a, "readOnly": 1},
                {"name": "theme", "data": "dark ' \\ mode", "user": "alice", "app": a, "readOnly": 0},
            ],
        )
        _insert(
            cur,
            "vars",
            [
                {"varid": "motd", "msg": "Welcome back, ünïcödé ✓", "app": a, "authed": 1},
                {"varid": "status", "msg": "online", "app": a, "authed": 0},
            ],
        )
        _insert(
            cur,
            "files",
            [
                {
                    "name": "alpha.bin",
                    "id": "123456",
                    "url": f"{file_base}/alpha.bin",
                    "size": "16",
                    "uploaddate": str(NOW - DAY),
                    "app": a,
                    "authed": 1,
                },
                {
                    "name": "gone.bin",
                    "id": "654321",
                    "url": f"{file_base}/missing.bin",
                    "size": "1",
                    "uploaddate": str(NOW - DAY),
                    "app": a,
                    "authed": 1,
                },
            ],
        )
        _insert(
            cur,
            "webhooks",
            [
                {
                    "webid": "Hk1x2",
                    "baselink": "http://127.0.0.1:9/hook?token=abc",
                    "useragent": "KeyAuth",
                    "app": a,
                    "authed": 1,
                }
            ],
        )
        _insert(
            cur,
            "bans",
            [
                {"hwid": "S-1-5-21-BOB", "ip": None, "type": "hwid", "app": a},
                {"hwid": None, "ip": "198.51.100.4", "type": "ip", "app": a},
            ],
        )
        _insert(cur, "whitelist", [{"ip": "192.0.2.10", "app": a}])
        _insert(
            cur,
            "tokens",
            [
                {
                    "app": a,
                    "token": "T" * 32,
                    "assigned": "alice",
                    "banned": 0,
                    "reason": None,
                    "hash": None,
                    "type": "user",
                    "status": "Not Used",
                }
            ],
        )
        _insert(
            cur, "sessions", [{"id": "abcdefghij", "credential": "alice", "app": a, "expiry": NOW + 3600}]
        )
        _insert(cur, "chats", [{"name": "general", "delay": 5, "app": a}])
        _insert(
            cur,
            "chatmsgs",
            [
                {
                    "author": "alice",
                    "message": "hello; (world), 'quoted'",
                    "timestamp": NOW - 100,
                    "channel": "general",
                    "app": a,
                },
                {"author": "dave", "message": "hi", "timestamp": NOW - 50, "channel": "general", "app": a},
            ],
        )
        _insert(cur, "chatmutes", [{"user": "dave", "time": NOW + 7 * DAY, "app": a}])
        _insert(cur, "buttons", [{"text": "Discord", "value": "https://discord.gg/alpha", "app": a}])
        _insert(
            cur,
            "logs",
            [
                {
                    "logdate": str(NOW - 300),
                    "logdata": "opened the menu",
                    "credential": "alice",
                    "pcuser": "ALICE-PC",
                    "logapp": a,
                },
                {
                    "logdate": str(NOW - 200),
                    "logdata": "closed",
                    "credential": "dave",
                    "pcuser": "DAVE-PC",
                    "logapp": a,
                },
            ],
        )
        account = {"password": bcrypt_2y("team-password"), "banned": None}
        _insert(
            cur,
            "accounts",
            [
                {
                    **account,
                    "username": "kaseller",
                    "email": email_sha1("seller@example.com"),
                    "ownerid": ALPHA.ownerid,
                    "role": "seller",
                    "app": None,
                    "owner": None,
                    "balance": None,
                },
                {
                    **account,
                    "username": "res1",
                    "email": email_sha1("res1@example.com"),
                    "ownerid": None,
                    "role": "Reseller",
                    "app": ALPHA.name,
                    "owner": "kaseller",
                    "balance": "10|5|2|0|0|1",
                    "keylevels": "1|2",
                },
                {
                    **account,
                    "username": "man1",
                    "email": email_sha1("man1@example.com"),
                    "ownerid": None,
                    "role": "Manager",
                    "app": ALPHA.name,
                    "owner": "kaseller",
                    "balance": None,
                },
            ],
        )
        # The Manager's permissions as a bit(64) value with some bits off.
        cur.execute("UPDATE accounts SET permissions = b'10110011011' WHERE username = 'man1'")
        conn.commit()
    return KeyAuthData(database=database, apps=(ALPHA, BETA))


def url(database: str) -> str:
    return f"mysql://{USER}@{HOST}:{PORT}/{database}"


def dump(database: str, path: Path, *extra: str) -> Path:
    """`mysqldump` of the database to `path` (its default options: extended inserts, comments)."""
    with open(path, "wb") as out:
        subprocess.run(
            [
                "mysqldump",
                "--protocol=tcp",
                f"--host={HOST}",
                f"--port={PORT}",
                f"--user={USER}",
                *extra,
                database,
            ],
            stdout=out,
            check=True,
            env={**os.environ, "MYSQL_PWD": ""},
        )
    return path


def drop(database: str) -> None:
    with connect() as conn, conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{database}`")
