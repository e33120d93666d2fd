"""Writing KeyAuth's records into licensegate, with KeyAuth's meanings kept.

Per application, everything but the files is written in ONE transaction: a killed import leaves
either the whole application or none of it (files, fetched over the network, are stored one by
one after it, since nothing slow runs inside a transaction; a run after a kill adds the rest).
Every row is written only where it is not there yet, so running the same import again adds
nothing and reports what exists. `--dry-run` runs the same writes and rolls them back, so its
report is the report of the real run.

The rule for duplicates (KeyAuth has no unique index on usernames or keys, and its collation,
utf8_general_ci, compares without case and trailing spaces): rows that KeyAuth would have taken
for the same user or key are one, and the FIRST in the source's order (the oldest row) is kept;
every later one is skipped and named in the report. An imported application compares usernames
case-insensitively, as KeyAuth did.
"""

from __future__ import annotations

import collections
import itertools
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from licensegate import ids, outbound
from licensegate.config import Settings
from licensegate.domain import appkeys, events, files, invitations, webhooks
from licensegate.domain import messages as catalogue
from licensegate.domain import permissions as perms
from licensegate.domain import tokens as token_rules
from licensegate.domain.errors import Refusal
from licensegate.domain.filestore import FileStore
from licensegate.domain.keyauthimport import records as r
from licensegate.domain.users import fold as user_fold
from licensegate.passwords import Passwords
from licensegate.secretbox import SecretBox
from licensegate.store import accounts as account_store
from licensegate.store import apps as app_store
from licensegate.store import blacklists as blacklist_store
from licensegate.store import keyauthimport as store
from licensegate.store import users as user_store
from licensegate.store.database import Database, Executor

CREATED_BY = "KeyAuth"  # `created_by` / `generated_by` of rows that came from KeyAuth
ADDED_BY = "KeyAuth import"
Progress = Callable[[str], None]

# KeyAuth's `apps` columns -> licensegate's, for the settings both have (seconds stay seconds:
# KeyAuth keeps `session` and `cooldown` in seconds; its *Unit columns only say how to show them).
_INT_SETTINGS = {
    "hwidcheck": "hwid_lock",
    "forceHwid": "force_hwid",
    "minHwid": "min_hwid_length",
    "cooldown": "hwid_reset_cooldown",
    "session": "session_seconds",
    "minUsernameLength": "min_username_length",
    "hashcheck": "hash_check",
    "sellerLogs": "seller_log",
    "tokensystem": "token_validation",
}
_FLAGS = frozenset({"hwid_lock", "force_hwid", "hash_check", "seller_log", "token_validation"})
_TEXT_SETTINGS = {
    "download": "download_link",
    "webdownload": "web_loader_download",
    "webhook": "log_webhook_url",
}
# KeyAuth settings licensegate has no equivalent of, reported when the seller had turned them on.
_UNSUPPORTED = {
    "vpnblock": "VPN blocking",
    "killOtherSessions": "ending a user's other sessions at login",
    "blockLeakedPasswords": "refusing leaked passwords",
    "forceEncryption": "forced encryption",
}
# A reseller's balance, KeyAuth's pipe list in this order (year last, where present).
_BALANCE_BUCKETS = ("day", "week", "month", "three_month", "six_month", "lifetime", "year")
_MD5 = re.compile(r"[0-9a-fA-F]{32}")


class ImportRefused(Exception):
    """The import cannot go ahead as asked; a message for a person. Nothing was written."""


class _DryRun(Exception):
    """Raised inside a dry run's transaction so that everything it wrote is rolled back."""


@dataclass
class Options:
    owner: str
    new_ownerid: bool = False
    with_logs: bool = False
    dry_run: bool = False


@dataclass
class Env:
    db: Database
    box: SecretBox
    passwords: Passwords
    settings: Settings
    content: FileStore
    now: int


@dataclass
class AppReport:
    ownerid: str
    name: str
    keyauth_ownerid: str
    public_key: str | None = None
    imported: collections.Counter[str] = field(default_factory=collections.Counter)
    skipped: collections.Counter[str] = field(default_factory=collections.Counter)
    warnings: list[str] = field(default_factory=list)
    invitations: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ownerid": self.ownerid,
            "name": self.name,
            "public_key": self.public_key,
            "imported": {kind: n for kind, n in sorted(self.imported.items()) if n},
            "skipped": {kind: n for kind, n in sorted(self.skipped.items()) if n},
            "warnings": self.warnings,
        }
        if self.ownerid != self.keyauth_ownerid:
            out["keyauth_ownerid"] = self.keyauth_ownerid
        if self.invitations:
            out["invitations"] = self.invitations
        return out


def report_json(reports: list[AppReport], dry_run: bool) -> dict[str, Any]:
    return {"dry_run": dry_run, "applications": [report.as_json() for report in reports]}


def _keyauth_fold(text: str) -> str:
    """How KeyAuth's utf8_general_ci tells two names apart: not by case nor trailing spaces."""
    return user_fold(text.rstrip(" "))


class _Dupes:
    """Rows skipped as duplicates of an earlier row, by kind: every one is named in the report."""

    def __init__(self) -> None:
        self.named: dict[str, list[str]] = collections.defaultdict(list)
        self.count: collections.Counter[str] = collections.Counter()

    def add(self, kind: str, text: str, first: str) -> None:
        self.count[kind] += 1
        self.named[kind].append(f"'{text}'" + ("" if text == first else f" (as '{first}')"))

    def warnings(self) -> list[str]:
        out = []
        for kind, n in sorted(self.count.items()):
            shown = ", ".join(self.named[kind])
            out.append(
                f"{n} {kind} skipped as duplicates of an earlier row that KeyAuth treats as the same "
                f"(same text ignoring case and trailing spaces; the first row is kept): {shown}"
            )
        return out


async def import_all(
    env: Env, source: r.Source, options: Options, progress: Progress | None = None
) -> list[AppReport]:
    """Import every application of `source` into the owner account `options.owner` (made when
    missing). Raises ImportRefused before writing anything when an application cannot be."""
    say = progress or (lambda _text: None)
    apps = list(source.apps())
    if not apps:
        raise ImportRefused("the source holds no KeyAuth application (or none of the name given with --app)")
    plans = [await _plan(env.db, app, options) for app in apps]
    # Slow work first, outside any transaction: the team's placeholder passwords.
    teams = [await _hash_team(env, source, app) for app, _ in plans]
    reports: list[AppReport] = []
    if options.dry_run:  # every application in one transaction, rolled back: nothing is kept
        try:
            async with env.db.transaction() as tx:
                for (app, ownerid), team in zip(plans, teams, strict=True):
                    say(f"{app.name}: reading (dry run)")
                    reports.append((await _write_in(tx, env, source, app, ownerid, team, options, say))[0])
                raise _DryRun
        except _DryRun:
            pass
        for (app, _), report in zip(plans, reports, strict=True):
            await _write_files(env, source, app, None, options, report)
        return reports
    for (app, ownerid), team in zip(plans, teams, strict=True):
        say(f"{app.name}: importing")
        async with env.db.transaction() as tx:
            report, app_id, new_team = await _write_in(tx, env, source, app, ownerid, team, options, say)
        for username, account_id in new_team:
            token, _expires = await invitations.issue(env.db, account_id, env.now)
            report.invitations[username] = invitations.link(env.settings.public_url, token)
        await _write_files(env, source, app, app_id, options, report)
        say(
            f"{app.name}: done ({sum(report.imported.values())} imported, "
            f"{sum(report.skipped.values())} skipped)"
        )
        reports.append(report)
    return reports


async def _plan(db: Database, app: r.App, options: Options) -> tuple[r.App, str]:
    """The ownerid the application will answer to, or a refusal."""
    owner = await store.account(db, options.owner)
    if owner is not None and owner["role"] != "seller":
        raise ImportRefused(
            f"the account '{options.owner}' is a {owner['role']}, not an owner (seller) account"
        )
    owner_id = owner["id"] if owner is not None else None
    holders = {row["id"] for row in await store.ownerid_holders(db, app.ownerid)}
    if not holders - {owner_id, None}:
        return app, app.ownerid
    if not options.new_ownerid:
        raise ImportRefused(
            f"the ownerid '{app.ownerid}' of the KeyAuth application '{app.name}' is already used by another "
            f"account's application; import with --new-ownerid to give it the ownerid of the account "
            f"'{options.owner}' (its clients must then be given that ownerid)"
        )
    if owner is None or not owner["ownerid"]:
        return app, ""  # the new owner account's own ownerid, made with it
    return app, str(owner["ownerid"])


async def _hash_team(env: Env, source: r.Source, app: r.App) -> list[tuple[r.TeamMember, str]]:
    return [
        (member, await env.passwords.hash(invitations.unknown_password()))
        for member in source.rows(r.TeamMember, app.secret)
    ]


async def _write_in(
    tx: Executor,
    env: Env,
    source: r.Source,
    app: r.App,
    ownerid: str,
    team: list[tuple[r.TeamMember, str]],
    options: Options,
    say: Progress,
) -> tuple[AppReport, int, list[tuple[str, int]]]:
    """Everything of one application but its files, in the transaction `tx`."""
    report = AppReport(ownerid=ownerid or app.ownerid, name=app.name, keyauth_ownerid=app.ownerid)
    report.warnings.extend(source.warnings(app.secret))
    app_id, ownerid = await _write_app(tx, env, app, ownerid, options, report, source.read_at)
    report.ownerid = ownerid
    if ownerid != app.ownerid:
        report.warnings.append(
            f"the application answers to ownerid '{ownerid}' (it was '{app.ownerid}' on KeyAuth): "
            "change the ownerid in its clients as well as the URL"
        )
    new_team = await _write_team(tx, env, app_id, team, report)
    await _write_records(tx, env, source, app, app_id, options, report, say)
    # In the import's own transaction, so a rolled-back (or dry) run reports nothing. A new
    # application has no event endpoint yet: only an import into one that has says so.
    counts = {kind: n for kind, n in report.imported.items() if n}
    await events.import_finished(tx, app_id, env.now, source="keyauth", counts=counts)
    return report, app_id, new_team


async def _write_app(
    tx: Executor, env: Env, app: r.App, ownerid: str, options: Options, report: AppReport, read_at: int
) -> tuple[int, str]:
    owner = await store.account(tx, options.owner)
    if owner is None:
        made_ownerid = ownerid or ids.ownerid()
        owner_id = await _new_owner(tx, options.owner, made_ownerid, env.now)
        ownerid = ownerid or made_ownerid
        report.imported["owner_account"] += 1
        report.warnings.append(
            f"the owner account '{options.owner}' was made without a password: set one with "
            f"`licensegate set-password {options.owner}`"
        )
    else:
        owner_id = owner["id"]
    found = await store.find_app(tx, ownerid, app.name)
    if found is not None:
        if found["account_id"] != owner_id:
            raise ImportRefused(
                f"another account already has an application '{app.name}' with ownerid '{ownerid}'"
            )
        report.skipped["applications"] += 1
        report.public_key = found["public_key"]
        app_id: int = found["id"]
        return app_id, ownerid
    keys = appkeys.make_keys(env.box, app.secret)
    app_id = await app_store.insert(
        tx,
        account_id=owner_id,
        ownerid=ownerid,
        name=app.name,
        secret=keys.sealed_secret,
        signing_key=keys.sealed_signing_key,
        public_key=keys.public_key,
        now=env.now,
    )
    report.public_key = keys.public_key
    report.imported["applications"] += 1
    await store.apply_settings(tx, app_id, _settings(app, env.now, source_time=read_at))
    for column, what in _UNSUPPORTED.items():
        if _int(app.columns.get(column)):
            report.warnings.append(
                f"KeyAuth's setting '{column}' ({what}) was on; licensegate has no such setting"
            )
    for name in catalogue.DEFAULTS:
        text = app.columns.get(name)
        if isinstance(text, str) and text.strip() and await store.add_message(tx, app_id, name, text):
            report.imported["messages"] += 1
    for value in _hashes(app.columns.get("hash")):
        if await store.add_hash(tx, app_id, value, env.now):
            report.imported["hashes"] += 1
    if app.sellerkey:
        outcome = await store.add_seller_key(
            tx, app_id, ids.digest(app.sellerkey), app.sellerkey[:6], perms.ALL, env.now
        )
        if outcome == "added":
            report.imported["seller_keys"] += 1
        elif outcome == "elsewhere":
            report.skipped["seller_keys"] += 1
            report.warnings.append("the seller key is already another application's: it was not imported")
    return app_id, ownerid


async def _new_owner(tx: Executor, username: str, ownerid: str, now: int) -> int:
    return await account_store.insert(
        tx, username=username, role="seller", ownerid=ownerid, parent_id=None, now=now
    )


def _int(value: str | int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value.strip())
    except ValueError:
        return None


def _settings(app: r.App, now: int, *, source_time: int) -> dict[str, Any]:
    values: dict[str, Any] = {"case_insensitive_usernames": 1, "enabled": 1 if app.enabled else 0}
    if app.ver:
        values["version"] = app.ver
    if app.paused:
        values["paused_at"] = source_time
    for keyauth, column in _INT_SETTINGS.items():
        number = _int(app.columns.get(keyauth))
        if number is not None:
            values[column] = (1 if number else 0) if column in _FLAGS else max(number, 0)
    for keyauth, column in _TEXT_SETTINGS.items():
        text = app.columns.get(keyauth)
        if isinstance(text, str) and text.strip():
            values[column] = text.strip()
    values["updated_at"] = now
    return values


def _hashes(value: str | int | None) -> list[str]:
    """KeyAuth appends each program hash (32 hex digits) to one text column."""
    if not isinstance(value, str) or not value.strip():
        return []
    text = value.strip()
    if len(text) % 32 == 0 and all(_MD5.fullmatch(text[i : i + 32]) for i in range(0, len(text), 32)):
        return [text[i : i + 32] for i in range(0, len(text), 32)]
    return [text]


async def _write_team(
    tx: Executor, env: Env, app_id: int, team: list[tuple[r.TeamMember, str]], report: AppReport
) -> list[tuple[str, int]]:
    made: list[tuple[str, int]] = []
    for member, password_hash in team:
        role = member.role.lower()
        existing = await store.team_member(tx, member.username)
        if existing is not None:
            report.skipped["team_members"] += 1
            if existing["app_id"] != app_id:
                report.warnings.append(
                    f"the {role} '{member.username}' was not imported: an account of that name exists already"
                )
            continue
        permissions = (
            perms.RESELLER_AREAS
            if role == perms.RESELLER
            else (member.permissions or 0) & perms.MANAGER_AREAS
        )
        account_id = await store.add_team_member(
            tx,
            app_id=app_id,
            owner_id=await _owner_of(tx, app_id),
            username=member.username,
            role=role,
            password_hash=password_hash,
            permissions=permissions,
            key_levels=_key_levels(member.keylevels),
            balances=_balances(member.balance),
            now=env.now,
        )
        made.append((member.username, account_id))
        report.imported["team_members"] += 1
    if made:
        report.warnings.append(
            "team accounts were made without their KeyAuth passwords (not reusable): each sets one "
            "through its invitation link (in `invitations`)"
        )
    return made


async def _owner_of(tx: Executor, app_id: int) -> int:
    row = await app_store.get(tx, app_id)
    assert row is not None
    owner: int = row["account_id"]
    return owner


def _key_levels(text: str | None) -> str:
    if not text or text.strip().upper() == "N/A":
        return ""
    return ",".join(level.strip() for level in text.split("|") if level.strip())


def _balances(text: str | None) -> dict[str, int]:
    if not text:
        return {}
    values = [_int(part) or 0 for part in text.split("|")]
    return {bucket: max(value, 0) for bucket, value in zip(_BALANCE_BUCKETS, values, strict=False)}


def _each(source: r.Source, kind: type[r.R], app: str, label: str, say: Progress) -> Iterator[r.R]:
    """The rows, with a line of progress every 10,000."""
    for count, record in enumerate(source.rows(kind, app), 1):
        if count % 10000 == 0:
            say(f"  {label}: {count}")
        yield record


async def _write_records(
    tx: Executor,
    env: Env,
    source: r.Source,
    app: r.App,
    app_id: int,
    options: Options,
    report: AppReport,
    say: Progress,
) -> None:
    now, secret, read_at = env.now, app.secret, source.read_at
    imported, skipped = report.imported, report.skipped
    dupes = _Dupes()
    await store.start_seen(tx)

    for sub in source.rows(r.Subscription, secret):
        added = await store.add_subscription(tx, app_id, sub.name, sub.level, now)
        (imported if added else skipped)["subscriptions"] += 1

    say(f"{app.name}: keys")
    unknown_status = 0
    team_ids: dict[str | None, int | None] = {None: None}  # the team, looked up once per name
    for chunk in _chunks(_each(source, r.Key, secret, "keys", say)):
        chunk = [key for key in chunk if key.key]
        firsts = await _first_of_each(tx, "keys", [key.key for key in chunk], dupes)
        rows: list[store.KeyRow] = []
        for key, first in zip(chunk, firsts, strict=True):
            if not first:
                skipped["keys"] += 1
                continue
            status = (key.status or "").strip().lower()
            if status not in ("used", "banned", "not used"):
                unknown_status += 1
            used = status == "used" or bool(key.usedby)
            if key.genby not in team_ids:
                team_ids[key.genby] = await store.team_account_id(tx, app_id, key.genby)
            rows.append(
                store.KeyRow(
                    key=key.key,
                    level=key.level,
                    duration=max(key.expires or 0, 0),
                    note=key.note,
                    status="used" if used else "unused",
                    banned_reason=(key.banned or "Banned") if status == "banned" else None,
                    generated_by=key.genby or CREATED_BY,
                    generated_by_account_id=team_ids[key.genby],
                    created_at=key.gendate or read_at,
                    used_at=(key.usedon or read_at) if used else None,
                    used_by=key.usedby if used else None,
                )
            )
        written = await store.add_keys(tx, app_id, rows)
        imported["keys"] += written
        skipped["keys"] += len(rows) - written
    if unknown_status:
        report.warnings.append(f"{unknown_status} keys had no known status and were imported as not used")

    say(f"{app.name}: users")
    cooldown = _int(app.columns.get("cooldown")) or 0
    for users in _chunks(_each(source, r.User, secret, "users", say)):
        users = [user for user in users if user.username]
        firsts = await _first_of_each(tx, "users", [user.username for user in users], dupes)
        kept = [user for user, first in zip(users, firsts, strict=True) if first]
        skipped["users"] += len(users) - len(kept)
        # A user named by one of the application's keys is a License Login user (KeyAuth names
        # them by their key): they sign in with the key alone.
        license_users = await store.keys_among(tx, app_id, [user.username for user in kept])
        user_rows = []
        for user in kept:
            if user.owner not in team_ids:  # the reseller who made the user keeps seeing it
                team_ids[user.owner] = await store.team_account_id(tx, app_id, user.owner)
            user_rows.append(_user_row(user, user.username in license_users, cooldown, read_at, team_ids))
        written = await store.add_users(tx, app_id, user_rows)
        imported["users"] += written
        skipped["users"] += len(user_rows) - written
    await store.link_used_keys(tx, app_id)

    say(f"{app.name}: subscriptions of users")
    missing: collections.Counter[str] = collections.Counter()
    sub_ids: dict[str, int | None] = {}  # a handful of subscriptions, looked up once each
    for grants in _chunks(_each(source, r.Sub, secret, "user subscriptions", say)):
        grant_rows: dict[tuple[str, int, int, bool], store.GrantRow] = {}
        for grant in grants:
            if grant.subscription not in sub_ids:
                sub_ids[grant.subscription] = await store.subscription_id(tx, app_id, grant.subscription)
            sub_id = sub_ids[grant.subscription]
            if sub_id is None:
                _count(report, "user_subscriptions", "no_subscription", missing)
                continue
            if grant.paused:  # remaining seconds at the source's time: the clock stays stopped there
                expires_at, paused_at = read_at + max(grant.expiry, 0), read_at
            else:
                expires_at, paused_at = grant.expiry, None
            same = (grant.user, sub_id, expires_at - (paused_at or 0), paused_at is not None)
            if same in grant_rows:  # the same grant twice in a row: the second exists
                _count(report, "user_subscriptions", "exists", missing)
                continue
            grant_rows[same] = store.GrantRow(grant.user, sub_id, expires_at, paused_at, grant.key)
        rows_of_users = list(grant_rows.values())
        written = await store.add_grants(tx, app_id, rows_of_users, now)
        await _count_chunk(tx, app_id, report, "user_subscriptions", rows_of_users, written, missing)
    for variables in _chunks(source.rows(r.UserVar, secret)):
        var_rows = [store.UserVarRow(v.user, v.name, v.data, v.readOnly) for v in variables]
        written = await store.add_user_vars(tx, app_id, var_rows, now)
        await _count_chunk(tx, app_id, report, "user_variables", var_rows, written, missing)
    for gvar in source.rows(r.Var, secret):
        added = await store.add_global_var(tx, app_id, gvar.varid, gvar.msg, gvar.authed, now)
        (imported if added else skipped)["variables"] += 1
    for ban in source.rows(r.Ban, secret):
        await _add_ban(tx, app_id, ban, now, report)
    for white in source.rows(r.Whitelisted, secret):
        added = await store.add_whitelisted(tx, app_id, white.ip.strip(), now)
        (imported if added else skipped)["whitelist"] += 1
    for hook in source.rows(r.Webhook, secret):
        added = await store.add_webhook(
            tx,
            app_id,
            hook.webid,
            env.box.seal(hook.baselink, webhooks.BASE_URL),
            hook.useragent or "KeyAuth",
            hook.authed,
            enabled=hook.full_url,
            now=now,
        )
        # Without its full URL it is disabled until the seller enters it (the source reports it).
        (imported if added else skipped)["webhooks"] += 1
    for chat in source.rows(r.Chat, secret):
        added = await store.add_channel(tx, app_id, chat.name, max(chat.delay, 0), now)
        (imported if added else skipped)["chat_channels"] += 1
    for msg in source.rows(r.ChatMessage, secret):
        outcome = await store.add_chat_message(
            tx, app_id, msg.channel, msg.author, msg.message, msg.timestamp
        )
        _count(report, "chat_messages", outcome, missing)
    for mute in source.rows(r.ChatMute, secret):
        outcome = await store.add_mute(tx, app_id, mute.user, mute.time, now)
        _count(report, "chat_mutes", outcome, missing)
    for position, button in enumerate(source.rows(r.Button, secret)):
        added = await store.add_button(tx, app_id, button.value, button.text, position)
        (imported if added else skipped)["buttons"] += 1
    for token in source.rows(r.Token, secret):
        added = await store.add_token(
            tx,
            app_id=app_id,
            token_hash=ids.digest(token.token),
            token_sealed=env.box.seal(token.token, token_rules.SEALED),
            kind=token.type if token.type in token_rules.KINDS else "user",
            assigned=token.assigned,
            banned_reason=(token.reason or "Banned") if token.banned else None,
            file_hash=token.hash,
            used_at=read_at if (token.status or "").lower() == "used" else None,
            now=now,
        )
        (imported if added else skipped)["tokens"] += 1
    if options.with_logs:
        for logs in _chunks(_each(source, r.Log, secret, "logs", say)):
            unique: dict[tuple[str, str, int], store.LogRow] = {}
            for log in logs:  # the same entry twice in a chunk is one, as a second run finds it there
                entry = (log.credential or "", log.logdata, log.logdate)
                unique.setdefault(entry, store.LogRow(log.credential, log.pcuser, log.logdata, log.logdate))
            written = await store.add_logs(tx, app_id, list(unique.values()))
            imported["logs"] += written
            skipped["logs"] += len(logs) - written
    for kind, n in sorted(missing.items()):
        report.warnings.append(
            f"{n} {kind} were not imported: they name a user, subscription or channel that is not there"
        )
    report.warnings.extend(dupes.warnings())
    await store.end_seen(tx)


def _count(report: AppReport, kind: str, outcome: str, missing: collections.Counter[str]) -> None:
    if outcome == "added":
        report.imported[kind] += 1
    else:
        report.skipped[kind] += 1
        if outcome != "exists":
            missing[kind] += 1


def _user_row(
    user: r.User, license_user: bool, cooldown: int, read_at: int, team_ids: dict[str | None, int | None]
) -> store.UserRow:
    password = user.password
    if license_user and password is None:
        password = r.UNREADABLE_PASSWORD
    return store.UserRow(
        username=user.username,
        username_fold=user_fold(user.username),
        password_hash=password,
        email_sha1=(user.email or None),
        hwid=user.hwid or None,
        banned_reason=user.banned,
        created_at=user.createdate or read_at,
        last_login_at=user.lastlogin,
        last_ip=user.ip,
        hwid_reset_at=(user.cooldown - cooldown) if user.cooldown and user.cooldown > read_at else None,
        created_by=user_store.LICENSE_USER if license_user else CREATED_BY,
        owner_account_id=team_ids[user.owner],
    )


def _chunks(rows: Iterable[r.R]) -> Iterator[list[r.R]]:
    """The rows in lists of store.CHUNK: one statement per table for each, and never a whole table."""
    items = iter(rows)
    while chunk := list(itertools.islice(items, store.CHUNK)):
        yield chunk


async def _first_of_each(tx: Executor, kind: str, texts: list[str], dupes: _Dupes) -> list[bool]:
    """For each text of a chunk, whether it is the first of its kind this run has seen (by
    KeyAuth's collation); every other one is named in `dupes` with the text seen first."""
    chunk_firsts: dict[str, str] = {}
    for text in texts:
        chunk_firsts.setdefault(_keyauth_fold(text), text)
    earlier = await store.see_many(tx, kind, chunk_firsts)
    taken: set[str] = set()
    keep: list[bool] = []
    for text in texts:
        fold = _keyauth_fold(text)
        if fold in earlier or fold in taken:
            dupes.add(kind, text, earlier.get(fold, chunk_firsts[fold]))
            keep.append(False)
        else:
            taken.add(fold)
            keep.append(True)
    return keep


async def _count_chunk(
    tx: Executor,
    app_id: int,
    report: AppReport,
    kind: str,
    rows: Sequence[store.GrantRow | store.UserVarRow],
    added: int,
    missing: collections.Counter[str],
) -> None:
    """Counts for a chunk of rows that name their user: written, there already, or no such user."""
    present = await store.users_among(tx, app_id, list({row.username for row in rows}))
    no_user = sum(1 for row in rows if row.username not in present)
    report.imported[kind] += added
    report.skipped[kind] += len(rows) - added
    missing[kind] += no_user


async def _add_ban(tx: Executor, app_id: int, ban: r.Ban, now: int, report: AppReport) -> None:
    kind = ban.type.strip().lower()
    value = ban.hwid if kind == "hwid" else ban.ip
    if kind not in ("hwid", "ip") or not value:
        report.skipped["blacklist"] += 1
        return
    added = await blacklist_store.add(
        tx, app_id, kind, value.strip(), "KeyAuth blacklist", now, added_by=ADDED_BY
    )
    (report.imported if added else report.skipped)["blacklist"] += 1


async def _write_files(
    env: Env, source: r.Source, app: r.App, app_id: int | None, options: Options, report: AppReport
) -> None:
    for item in source.rows(r.File, app.secret):
        if app_id is not None and not options.dry_run and await store.file_exists(env.db, app_id, item.id):
            report.skipped["files"] += 1
            continue
        try:
            if options.dry_run or app_id is None:
                await _check_fetch(env.settings, item.url)
                report.imported["files"] += 1
                continue
            added = await files.add_fetched_as(
                env.settings,
                env.content,
                env.db,
                app_id,
                file_id=item.id,
                url=item.url,
                name=item.name,
                authed=item.authed,
                now=env.now,
            )
        except (Refusal, outbound.OutboundError) as exc:
            report.skipped["files"] += 1
            report.warnings.append(
                f"file '{item.id}' ({outbound.short_url(item.url)}) could not be fetched: {exc}"
            )
            continue
        (report.imported if added is not None else report.skipped)["files"] += 1


async def _check_fetch(settings: Settings, url: str) -> None:
    """A dry run asks for the file as the real run would, and keeps nothing."""
    reply = await outbound.request(settings, "GET", url, max_bytes=settings.max_upload_bytes)
    if not reply.ok:
        from licensegate.domain import errorcodes

        raise errorcodes.URL_FETCH_FAILED(status=reply.status)


def print_progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
