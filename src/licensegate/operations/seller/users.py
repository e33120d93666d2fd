"""Seller API — Users: create, list, verify, ban, rename, extend, pause and reset users, and list
the subscriptions they hold.

A reseller's key sees only the users that reseller created (any other user is "not found" to
it, and `all` means all of its own users); it pays for the time it gives from its balance."""

from __future__ import annotations

from typing import Any

from licensegate.domain import users
from licensegate.domain.permissions import Area
from licensegate.domain.timefmt import datetime_text, unix_text
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Users"
AREA: Area = "users"
MAX_NAME = 64

USER = Param("user", required=True, max_length=MAX_NAME, doc="username", names_user=True)
USER_OR_ALL = Param(
    "user", required=True, max_length=MAX_NAME, doc="username, or `all` for every user", names_user=True
)
SUB = Param("sub", required=True, max_length=MAX_NAME, doc="subscription name")
PAUSE_USER = Param(
    "username", required=True, max_length=MAX_NAME, aliases=("user",), doc="username", names_user=True
)


# --- KeyAuth's field names ---------------------------------------------------------------------


def _when(unix_seconds: int | None) -> str | None:
    return None if unix_seconds is None else unix_text(unix_seconds)


def user_entry(row: users.UserDetails, hwids: list[str]) -> dict[str, Any]:
    """A user as fetchallusers lists them."""
    return {
        "id": str(row["id"]),
        "username": row["username"],
        "email": row["email"],
        "hwids": hwids,
        "ip": row["last_ip"],
        "createdate": datetime_text(row["created_at"]),
        "lastlogin": _when(row["last_login_at"]),
        "banned": row["banned_reason"],
        "created_by": row["created_by"],
    }


def data_fields(found: users.UserData, now: int) -> dict[str, Any]:
    """One user as userdata answers them, with only the subscriptions running now."""
    row = found.user
    locked_until = row["locked_until"]
    return {
        "username": row["username"],
        "email": row["email"],
        "subscriptions": [
            {
                "subscription": grant["name"],
                "expiry": unix_text(grant["expires_at"]),
                "timeleft": grant["expires_at"] - now,
            }
            for grant in found.grants
        ],
        "ip": row["last_ip"],
        "hwids": found.hwids,
        "hwid_lock": row["hwid_lock"],
        "cooldown": row["hwid_cooldown"],
        "createdate": datetime_text(row["created_at"]),
        "lastlogin": _when(row["last_login_at"]),
        "banned": row["banned_reason"],
        "created_by": row["created_by"],
        "failed_logins": row["failed_logins"],
        "locked_until": _when(locked_until) if (locked_until or 0) > now else None,
        "lockouts": row["lockouts"],
    }


def _usernames_text(body: dict[str, Any]) -> str:
    return "\n".join(body["usernames"])


def _users_text(body: dict[str, Any]) -> str:
    return "\n".join(user["username"] for user in body["users"])


@registry.operation(
    "addhwiduser",
    group=GROUP,
    summary="Add HWID User",
    area=AREA,
    mutates=True,
    params=[USER, Param("hwid", required=True, max_length=256, doc="hardware id to allow")],
    returns={"added": "1 when the HWID was added, 0 when the user already held it"},
)
async def add_hwid(call: SellerCall) -> dict[str, Any]:
    """Allow the user one more HWID; the user may sign in from any HWID they hold."""
    added = await users.add_hwid(
        call.db, call.scope, call.args.text("user"), call.args.text("hwid"), call.now()
    )
    return {"message": "Added HWID", "added": 1 if added else 0}


@registry.operation(
    "adduser",
    group=GROUP,
    summary="Create User",
    area=AREA,
    mutates=True,
    params=[
        Param("user", required=True, max_length=MAX_NAME, doc="username (not `all`, which is reserved)"),
        Param("sub", max_length=MAX_NAME, doc="subscription name (default `default`)"),
        Param("expiry", "float", required=True, maximum=1_000_000, max_length=32, doc="days, more than 0"),
        Param(
            "pass",
            max_length=256,
            strip=False,
            secret=True,
            doc="password; without it, the user's first login sets it",
        ),
        Param("email", max_length=254, doc="email address"),
        Param("hwidAffected", "bool", max_length=5, doc="1 (default): the HWID lock applies to this user"),
    ],
    returns={"expires_at": "Unix seconds when the new user's subscription ends"},
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Create a user holding one subscription that ends `expiry` days from now.

    A reseller's user belongs to it. The reseller needs the subscription's level among its
    allowed levels (403 `level_not_allowed`), a duration its balance pays for (400
    `duration_not_sold`) and one unit of the matching bucket (403 `insufficient_balance`)."""
    expires_at = await users.create(
        call.db,
        call.services.passwords,
        call.services.secrets,
        call.scope,
        username=call.args.text("user"),
        sub_name=call.args.opt_text("sub") or "default",
        days=call.args.number("expiry"),
        password=call.args.opt_text("pass"),
        email=call.args.opt_text("email"),
        hwid_lock=call.args.flag("hwidAffected", default=True),
        now=call.now(),
    )
    return {"message": "Successfully created user!", "expires_at": expires_at}


@registry.operation(
    "deluser", group=GROUP, summary="Delete User", area=AREA, mutates=True, params=[USER], returns={}
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete the user with their HWIDs, subscriptions, variables and sessions."""
    await users.delete_by_name(call.db, call.scope, call.args.text("user"), now=call.now())
    return {"message": "Successfully deleted user!"}


@registry.operation(
    "delallusers",
    group=GROUP,
    summary="Delete All Users",
    area=AREA,
    mutates=True,
    returns={"deleted": "number of users deleted"},
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every user of the application (a reseller: every user of its own)."""
    deleted = await users.delete_all(call.db, call.scope, now=call.now())
    return {"message": "Successfully deleted all users!", "deleted": deleted}


@registry.operation(
    "delexpusers",
    group=GROUP,
    summary="Delete Expired Users",
    area=AREA,
    mutates=True,
    returns={"deleted": "number of users deleted"},
)
async def delete_expired(call: SellerCall) -> dict[str, Any]:
    """Delete the users with no time left on any subscription. A paused user is not expired."""
    deleted = await users.delete_expired(call.db, call.scope, call.now())
    return {"message": "Successfully deleted expired users!", "deleted": deleted}


@registry.operation(
    "fetchallusers",
    group=GROUP,
    summary="Retrieve Users",
    area=AREA,
    params=[PAGE, LIMIT],
    returns={
        "users": "[{id, username, email, hwids: [..], ip, createdate (YYYY-MM-DD HH:MM:SS, UTC), "
        "lastlogin (Unix seconds as a string, or null), banned (the reason, or null), created_by}], "
        "ordered by id",
        "count": "total number of users (all pages)",
    },
    text=_users_text,
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """One page of the application's users. With format=text: the page's usernames, one a line."""
    limit, offset = paging(call.args)
    page = await users.list_page(call.db, call.scope, limit=limit, offset=offset)
    found = [user_entry(row, page.hwids.get(row["id"], [])) for row in page.users]
    return {"message": "Successfully Retrieved Users", "users": found, "count": page.total}


@registry.operation(
    "fetchallusernames",
    group=GROUP,
    summary="Retrieve Usernames",
    area=AREA,
    params=[PAGE, LIMIT],
    returns={"usernames": "[string], ordered by user id", "count": "total number of users (all pages)"},
    text=_usernames_text,
)
async def fetch_all_names(call: SellerCall) -> dict[str, Any]:
    """One page of usernames. With format=text: one a line."""
    limit, offset = paging(call.args)
    names, total = await users.list_usernames(call.db, call.scope, limit=limit, offset=offset)
    return {"message": "Successfully Retrieved Usernames", "usernames": names, "count": total}


@registry.operation(
    "verifyuser",
    group=GROUP,
    summary="Verify User",
    area=AREA,
    params=[
        USER,
        Param("pass", max_length=256, strip=False, secret=True, doc="password to check (optional)"),
    ],
    returns={},
)
async def verify(call: SellerCall) -> dict[str, Any]:
    """Succeeds when the user exists and, if `pass` is given, it is their password."""
    await users.verify(
        call.db, call.services.passwords, call.scope, call.args.text("user"), call.args.opt_text("pass")
    )
    return {"message": "User Successfully Verified"}


@registry.operation(
    "userexists",
    group=GROUP,
    summary="Check User Exists",
    area=AREA,
    params=[USER],
    returns={"exists": "true or false"},
)
async def exists(call: SellerCall) -> dict[str, Any]:
    """Whether a user of this name exists (always a success)."""
    found = await users.exists(call.db, call.scope, call.args.text("user"))
    return {"message": "User exists" if found else "User does not exist", "exists": found}


@registry.operation(
    "userdata",
    group=GROUP,
    summary="Retrieve User Data",
    area=AREA,
    params=[USER],
    aliases=("getuserdata",),
    returns={
        "username": "",
        "email": "or null",
        "subscriptions": "running subscriptions only: [{subscription, expiry (Unix seconds as a "
        "string), timeleft (seconds, integer)}]",
        "ip": "last IP, or null",
        "hwids": "[string]",
        "hwid_lock": "1 when the application's HWID lock applies to the user",
        "cooldown": "the user's own HWID-reset cooldown in seconds, or null (the application's)",
        "createdate": "YYYY-MM-DD HH:MM:SS, UTC",
        "lastlogin": "Unix seconds as a string, or null",
        "banned": "the ban reason, or null",
        "created_by": "",
        "failed_logins": "wrong passwords in a row since the last right one or lock-out (integer)",
        "locked_until": "Unix seconds as a string while password sign-in is locked, else null",
        "lockouts": "lock-outs in a row (integer); each lasts twice as long as the one before",
    },
)
async def data(call: SellerCall) -> dict[str, Any]:
    """One user's data."""
    now = call.now()
    found = await users.details(call.db, call.scope, call.args.text("user"), now)
    return {"message": "Successfully retrieved user data", **data_fields(found, now)}


@registry.operation(
    "banuser",
    group=GROUP,
    summary="Ban User",
    area=AREA,
    mutates=True,
    params=[
        USER,
        Param("reason", max_length=256, doc=f"shown to the user (default: {users.DEFAULT_BAN_REASON})"),
        Param(
            "blacklistIp",
            "bool",
            max_length=5,
            doc="0: leave the user's last IP off the blacklist (a shared address); default 1",
        ),
    ],
    returns={},
)
async def ban(call: SellerCall) -> dict[str, Any]:
    """Ban the user, end their sessions at once and blacklist their HWIDs and last IP (with
    blacklistIp=0: their HWIDs only). Banning again replaces the reason. A caller without the
    `blacklists` area (a reseller, a manager without it) bans without blacklisting anything."""
    await users.ban_by_name(
        call.db,
        call.scope,
        call.args.text("user"),
        call.args.opt_text("reason") or users.DEFAULT_BAN_REASON,
        call.now(),
        blacklist_as=call.blacklist_as,
        blacklist_ip=call.args.flag("blacklistIp", default=True),
    )
    return {"message": "Successfully banned user!"}


@registry.operation(
    "unlockuser", group=GROUP, summary="Unlock User", area=AREA, mutates=True, params=[USER], returns={}
)
async def unlock(call: SellerCall) -> dict[str, Any]:
    """Lift the user's sign-in lock-out now, and start the count of wrong passwords and the
    doubling of lock-outs over. Wrong passwords in a row from any address lock a user's password
    sign-in for `LICENSEGATE_LOGIN_LOCK_SECONDS`, doubling up to `LICENSEGATE_LOGIN_LOCK_MAX`;
    `userdata` shows the state. Succeeds whether or not the user is locked."""
    await users.unlock(call.db, call.scope, call.args.text("user"))
    return {"message": "Successfully unlocked user!"}


@registry.operation(
    "unbanuser", group=GROUP, summary="Unban User", area=AREA, mutates=True, params=[USER], returns={}
)
async def unban(call: SellerCall) -> dict[str, Any]:
    """Lift the user's ban and the blacklist entries their bans added (never one the owner added
    directly or another user's ban added). A caller without the `blacklists` area lifts only the
    ban."""
    await users.unban_by_name(
        call.db,
        call.scope,
        call.args.text("user"),
        lift_blacklist=call.blacklist_as is not None,
        now=call.now(),
    )
    return {"message": "Successfully unbanned user!"}


@registry.operation(
    "editusername",
    group=GROUP,
    summary="Change Username",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "currentUsername",
            required=True,
            max_length=MAX_NAME,
            aliases=("user",),
            doc="username",
            names_user=True,
        ),
        Param("newUsername", required=True, max_length=MAX_NAME, doc="new username (not `all`)"),
    ],
    returns={},
)
async def rename(call: SellerCall) -> dict[str, Any]:
    """Rename a user. Their redeemed keys, chat messages and token follow the new name."""
    await users.rename(call.db, call.scope, call.args.text("currentUsername"), call.args.text("newUsername"))
    return {"message": "Successfully changed username!"}


@registry.operation(
    "resetpw",
    group=GROUP,
    summary="Change Password",
    area=AREA,
    mutates=True,
    aliases=("changepw",),
    params=[
        USER,
        Param(
            "passwd",
            max_length=256,
            strip=False,
            secret=True,
            aliases=("pass",),
            doc="the new password; without it, the password is cleared and the next login sets it",
        ),
    ],
    returns={},
)
async def set_password(call: SellerCall) -> dict[str, Any]:
    """Set the user's password, or clear it so that their next login sets it. The user's client
    sessions and customer-panel sessions end: their next call is refused and they log in again."""
    await users.set_password(
        call.db,
        call.services.passwords,
        call.scope,
        call.args.text("user"),
        call.args.opt_text("passwd"),
        now=call.now(),
    )
    return {"message": "Password reset successful"}


@registry.operation(
    "editemail",
    group=GROUP,
    summary="Change Email",
    area=AREA,
    mutates=True,
    params=[USER, Param("email", required=True, max_length=254, doc="email address")],
    returns={},
)
async def set_email(call: SellerCall) -> dict[str, Any]:
    """Change the user's email address."""
    await users.set_email(call.db, call.scope, call.args.text("user"), call.args.text("email"))
    return {"message": "Successfully changed email!"}


@registry.operation(
    "extend",
    group=GROUP,
    summary="Extend User Expiry",
    area=AREA,
    mutates=True,
    params=[
        USER_OR_ALL,
        SUB,
        Param("expiry", "float", required=True, maximum=1_000_000, max_length=32, doc="days, more than 0"),
        Param(
            "activeOnly",
            "bool",
            max_length=5,
            doc="1: only users who still have time on this subscription (default 0)",
        ),
    ],
    returns={"updated": "number of users given time"},
)
async def extend(call: SellerCall) -> dict[str, Any]:
    """Add days to a subscription of one user or of all users. Users who still have time on it
    (paused time included) get the days added; the others get a new grant of that many days,
    unless activeOnly=1. A reseller extends only its own users, with a subscription of an allowed
    level, and pays one unit of the bucket matching `expiry` per user served (all or nothing)."""
    updated = await users.extend(
        call.db,
        call.scope,
        call.args.text("user"),
        call.args.text("sub"),
        call.args.number("expiry"),
        active_only=call.args.flag("activeOnly"),
        now=call.now(),
    )
    return {"message": "Successfully extended user(s)!", "updated": updated}


@registry.operation(
    "subtract",
    group=GROUP,
    summary="Subtract User Time",
    area=AREA,
    mutates=True,
    params=[
        USER_OR_ALL,
        SUB,
        Param(
            "seconds", "int", required=True, minimum=1, maximum=10**12, max_length=13, doc="seconds to take"
        ),
    ],
    returns={"updated": "number of users whose time was reduced"},
)
async def subtract(call: SellerCall) -> dict[str, Any]:
    """Take seconds from the time one user (or all users) still have on a subscription."""
    updated = await users.subtract(
        call.db,
        call.scope,
        call.args.text("user"),
        call.args.text("sub"),
        call.args.integer("seconds"),
        call.now(),
    )
    return {"message": "Successfully subtracted time from user(s)!", "updated": updated}


@registry.operation(
    "pauseuser",
    group=GROUP,
    summary="Pause User",
    area=AREA,
    mutates=True,
    params=[PAUSE_USER],
    returns={"paused": "number of subscriptions frozen"},
)
async def pause(call: SellerCall) -> dict[str, Any]:
    """Freeze the user's running subscriptions: they stop giving access and stop counting down.
    The user's client sessions end."""
    paused = await users.pause(call.db, call.scope, call.args.text("username"), call.now())
    return {"message": "Successfully paused user!", "paused": paused}


@registry.operation(
    "unpauseuser",
    group=GROUP,
    summary="Unpause User",
    area=AREA,
    mutates=True,
    params=[PAUSE_USER],
    returns={"unpaused": "number of subscriptions thawed"},
)
async def unpause(call: SellerCall) -> dict[str, Any]:
    """Thaw the user's frozen subscriptions; each expiry moves forward by the length of the pause."""
    unpaused = await users.unpause(call.db, call.scope, call.args.text("username"), call.now())
    return {"message": "Successfully unpaused user!", "unpaused": unpaused}


@registry.operation(
    "resetuser",
    group=GROUP,
    summary="Reset User HWID",
    area=AREA,
    mutates=True,
    params=[USER],
    returns={"removed": "number of HWIDs removed"},
)
async def reset_hwid(call: SellerCall) -> dict[str, Any]:
    """Forget the user's HWIDs and end their client sessions; their next login records a new one
    (a program that keeps a signed license file is refused at its next online check)."""
    removed = await users.reset_hwids(call.db, call.scope, call.args.text("user"), call.now())
    return {"message": "Successfully reset user!", "removed": removed}


@registry.operation(
    "resetalluser",
    group=GROUP,
    summary="Reset All User HWID",
    area=AREA,
    mutates=True,
    returns={"updated": "number of users whose HWIDs were removed"},
)
async def reset_all_hwids(call: SellerCall) -> dict[str, Any]:
    """Forget the HWIDs of every user of the application."""
    updated = await users.reset_all_hwids(call.db, call.scope, call.now())
    return {"message": "Successfully reset all users!", "updated": updated}


@registry.operation(
    "setcooldown",
    group=GROUP,
    summary="Set HWID Reset Cooldown",
    area=AREA,
    mutates=True,
    aliases=("sethwidcool",),
    params=[
        USER,
        Param(
            "cooldown",
            "int",
            required=True,
            minimum=0,
            maximum=315_360_000,
            max_length=10,
            doc="seconds between the user's own HWID resets (overrides the application's)",
        ),
    ],
    returns={},
)
async def set_cooldown(call: SellerCall) -> dict[str, Any]:
    """Set how long this user must wait between resetting their own HWID."""
    await users.set_cooldown(call.db, call.scope, call.args.text("user"), call.args.integer("cooldown"))
    return {"message": "Cooldown set successfully!"}


@registry.operation(
    "delsub",
    group=GROUP,
    summary="Delete User Subscription",
    area=AREA,
    mutates=True,
    params=[USER, SUB],
    returns={"deleted": "number of the user's grants of it removed"},
)
async def delete_subscription(call: SellerCall) -> dict[str, Any]:
    """Take a subscription (every grant of it, expired ones too) away from the user. The user's
    client sessions end (a new login decides on what they still hold)."""
    deleted = await users.remove_subscription(
        call.db, call.scope, call.args.text("user"), call.args.text("sub")
    )
    return {"message": "Successfully deleted subscription!", "deleted": deleted}


@registry.operation(
    "usersubs",
    group=GROUP,
    summary="Retrieve User Subscriptions",
    area=AREA,
    aliases=("usersub",),
    params=[
        Param("user", max_length=MAX_NAME, doc="only this user's subscriptions (optional)", names_user=True),
        PAGE,
        LIMIT,
    ],
    statuses=frozenset({200, 400, 401, 403, 404, 429, 500}),
    returns={
        "count": "integer: the total number of entries matching, across all pages (not the length "
        "of this page)",
        "subscriptions": "[{username, subscription, subscription_id (string of digits), expiry (Unix "
        "seconds as a string of digits; for a paused grant, the expiry it would have if unpaused "
        "now), is_banned (0/1: the user is banned), is_paused (0/1: the grant or its subscription "
        "is paused)}], ordered by user then grant, expired grants included",
    },
)
async def user_subscriptions(call: SellerCall) -> dict[str, Any]:
    """Every subscription held by the application's users (or by one user). The body has
    exactly `success`, `count` and `subscriptions`."""
    limit, offset = paging(call.args)
    held, total = await users.grants(
        call.db, call.scope, call.args.opt_text("user"), limit=limit, offset=offset, now=call.now()
    )
    return {"count": total, "subscriptions": [grant_entry(grant) for grant in held]}


def grant_entry(grant: users.HeldGrant) -> dict[str, Any]:
    """A grant as fetchallusersubs lists it."""
    return {
        "username": grant.username,
        "subscription": grant.subscription,
        "subscription_id": str(grant.subscription_id),
        "expiry": unix_text(grant.expires_at),
        "is_banned": 1 if grant.banned else 0,
        "is_paused": 1 if grant.paused else 0,
    }
