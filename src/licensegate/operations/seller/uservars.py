"""Seller API — User Variable: set, read, list, edit and delete variables stored per end user."""

from __future__ import annotations

from typing import Any

from licensegate.domain import uservars
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "User Variable"
AREA: Area = "variables"
# A license login's username is the license key, so usernames get the key length (128).
USER = Param(
    "user", required=True, max_length=128, aliases=("username",), doc="the user's username", names_user=True
)
VAR = Param("var", required=True, max_length=64, doc="variable name")
DATA = Param("data", required=True, max_length=500, strip=False, doc="the value (at most 500 characters)")
READ_ONLY = Param(
    "readOnly",
    "bool",
    max_length=5,
    aliases=("readonly",),
    doc="1: the client API may not change it; 0: it may. Omitted: a new variable gets 0, "
    "an existing one keeps its flag",
)


@registry.operation(
    "setvar",
    group=GROUP,
    summary="Set User Variable",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "user",
            required=True,
            max_length=128,
            aliases=("username",),
            doc="the user's username, or `all` for every user of the application",
            names_user=True,
        ),
        VAR,
        DATA,
        READ_ONLY,
    ],
    returns={"message": "`Successfully set variable!`", "updated": "how many users' variables were written"},
)
async def set_var(call: SellerCall) -> dict[str, Any]:
    """Create or replace a user's variable, or every user's with `user=all`. The owner may
    overwrite read-only variables."""
    written = await uservars.set_value(
        call.db,
        call.app_id,
        call.args.text("user"),
        name=call.args.text("var"),
        value=call.args.text("data"),
        read_only=call.args.opt_flag("readOnly"),
        now=call.now(),
    )
    return {"message": "Successfully set variable!", "updated": written}


@registry.operation(
    "getvar",
    group=GROUP,
    summary="Get User Variable",
    area=AREA,
    params=[USER, VAR],
    returns={
        "message": "`Successfully retrieved variable`",
        "response": "the variable's value",
        "readOnly": "0 or 1",
    },
)
async def get_var(call: SellerCall) -> dict[str, Any]:
    """One user's variable."""
    found = await uservars.get(call.db, call.app_id, call.args.text("user"), call.args.text("var"))
    return {
        "message": "Successfully retrieved variable",
        "response": found.value,
        "readOnly": 1 if found.read_only else 0,
    }


@registry.operation(
    "fetchalluservars",
    group=GROUP,
    summary="Retrieve User Variables",
    area=AREA,
    params=[
        Param(
            "user", max_length=128, aliases=("username",), doc="only this user's variables", names_user=True
        ),
        Param("var", max_length=64, aliases=("name",), doc="only variables of this name"),
        PAGE,
        LIMIT,
    ],
    returns={
        "message": "`Successfully retrieved user variables`",
        "vars": "[{name, data, user, readOnly (0/1)}], oldest first",
        "count": "how many variables match the filters, across all pages",
    },
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """The application's user variables, optionally of one user and/or one name (an empty list
    when there are none)."""
    limit, offset = paging(call.args)
    rows, total = await uservars.list_page(
        call.db,
        call.app_id,
        username=call.args.opt_text("user"),
        name=call.args.opt_text("var"),
        limit=limit,
        offset=offset,
    )
    entries = [
        {"name": row["name"], "data": row["value"], "user": row["username"], "readOnly": row["read_only"]}
        for row in rows
    ]
    return {"message": "Successfully retrieved user variables", "vars": entries, "count": total}


@registry.operation(
    "edituservar",
    group=GROUP,
    summary="Edit User Variable",
    area=AREA,
    mutates=True,
    params=[USER, VAR, DATA, READ_ONLY],
    returns={"message": "`Successfully edited variable!`"},
)
async def edit_var(call: SellerCall) -> dict[str, Any]:
    """Change the value (and optionally the read-only flag) of an existing user variable; unlike
    `setvar` it never creates one."""
    await uservars.edit(
        call.db,
        call.app_id,
        call.args.text("user"),
        call.args.text("var"),
        value=call.args.text("data"),
        read_only=call.args.opt_flag("readOnly"),
        now=call.now(),
    )
    return {"message": "Successfully edited variable!"}


@registry.operation(
    "deluservar",
    group=GROUP,
    summary="Delete User Variable",
    area=AREA,
    mutates=True,
    params=[USER, VAR],
    returns={"message": "`Successfully deleted variable!`"},
)
async def delete_var(call: SellerCall) -> dict[str, Any]:
    """Delete one user's variable."""
    await uservars.delete(call.db, call.app_id, call.args.text("user"), call.args.text("var"))
    return {"message": "Successfully deleted variable!"}


@registry.operation(
    "massUserVarDelete",
    group=GROUP,
    summary="Delete Variables By Name",
    area=AREA,
    mutates=True,
    params=[Param("name", required=True, max_length=64, aliases=("var",), doc="variable name")],
    returns={
        "message": "`Successfully deleted user variables with that name!`",
        "deleted": "how many users' variables were deleted (0 is not an error)",
    },
)
async def delete_by_name(call: SellerCall) -> dict[str, Any]:
    """Delete the variable of this name from every user of the application."""
    deleted = await uservars.delete_by_name(call.db, call.app_id, call.args.text("name"))
    return {"message": "Successfully deleted user variables with that name!", "deleted": deleted}


@registry.operation(
    "delalluservars",
    group=GROUP,
    summary="Delete All User Variables",
    area=AREA,
    mutates=True,
    returns={
        "message": "`Successfully deleted all user variables!`",
        "deleted": "how many user variables were deleted",
    },
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every user variable of the application."""
    deleted = await uservars.delete_all(call.db, call.app_id)
    return {"message": "Successfully deleted all user variables!", "deleted": deleted}
