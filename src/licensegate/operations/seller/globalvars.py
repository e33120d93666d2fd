"""Seller API — Global Variable: values of the application its clients can read."""

from __future__ import annotations

from typing import Any

from licensegate.domain import globalvars
from licensegate.domain.permissions import Area
from licensegate.domain.timefmt import datetime_text
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Global Variable"
AREA: Area = "variables"
DATA = Param("data", required=True, max_length=1000, strip=False, doc="the value (at most 1000 characters)")
AUTHED_DOC = "1: only a logged-in client session may read it; 0: any client may"


@registry.operation(
    "addvar",
    group=GROUP,
    summary="Create Global Variable",
    area=AREA,
    mutates=True,
    params=[
        Param("name", required=True, max_length=64, aliases=("varid",), doc="variable name"),
        DATA,
        Param("authed", "bool", max_length=5, doc=AUTHED_DOC + " (default 1)"),
    ],
    returns={"message": "`Successfully created variable!`"},
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Create a global variable; its name must be new in this application."""
    await globalvars.create(
        call.db,
        call.app_id,
        name=call.args.text("name"),
        value=call.args.text("data"),
        authed=call.args.flag("authed", default=True),
        now=call.now(),
    )
    return {"message": "Successfully created variable!"}


@registry.operation(
    "editvar",
    group=GROUP,
    summary="Edit Global Variable",
    area=AREA,
    mutates=True,
    params=[
        Param("varid", required=True, max_length=64, aliases=("name",), doc="the variable's name"),
        DATA,
        Param("authed", "bool", max_length=5, doc=AUTHED_DOC + " (omitted: unchanged)"),
    ],
    returns={"message": "`Variable Edit Successful`"},
)
async def edit(call: SellerCall) -> dict[str, Any]:
    """Replace a global variable's value and optionally its `authed` flag."""
    await globalvars.edit(
        call.db,
        call.app_id,
        call.args.text("varid"),
        value=call.args.text("data"),
        authed=call.args.opt_flag("authed"),
        now=call.now(),
    )
    return {"message": "Variable Edit Successful"}


NAME = Param("name", required=True, max_length=64, aliases=("varid",), doc="the variable's name")


@registry.operation(
    "retrvvar",
    group=GROUP,
    summary="Get Global Variable",
    area=AREA,
    params=[NAME],
    returns={
        "message": "the variable's value (where KeyAuth clients read it)",
        "value": "the variable's value",
        "authed": "0 or 1",
    },
)
async def retrieve(call: SellerCall) -> dict[str, Any]:
    """One global variable. Its value is in both `message` and `value`."""
    found = await globalvars.get(call.db, call.app_id, call.args.text("name"))
    return {"message": found.value, "value": found.value, "authed": 1 if found.authed else 0}


@registry.operation(
    "fetchallvars",
    group=GROUP,
    summary="Get All Global Variables",
    area=AREA,
    # Exactly the statuses the interface document lists for this operation.
    statuses=frozenset({200, 400, 401, 403, 409, 500}),
    returns={
        "variables": "[{setting_key (name), setting_value (value, a string), "
        "created_at (`YYYY-MM-DD HH:MM:SS`, UTC)}], in creation order",
    },
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """Every global variable of the application (an empty list when there are none). The body is
    exactly `success` and `variables`, as the interface document fixes it."""
    rows = await globalvars.list_all(call.db, call.app_id)
    return {"variables": [variable_entry(row) for row in rows]}


def variable_entry(row: globalvars.GlobalVarRow) -> dict[str, Any]:
    """A variable in the interface document's shape."""
    return {
        "setting_key": row["name"],
        "setting_value": str(row["value"]),
        "created_at": datetime_text(row["created_at"]),
    }


@registry.operation(
    "delvar",
    group=GROUP,
    summary="Delete Global Variable",
    area=AREA,
    mutates=True,
    params=[NAME],
    returns={"message": "`Successfully deleted variable!`"},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete one global variable."""
    await globalvars.delete(call.db, call.app_id, call.args.text("name"))
    return {"message": "Successfully deleted variable!"}


@registry.operation(
    "delallvars",
    group=GROUP,
    summary="Delete All Global Variables",
    area=AREA,
    mutates=True,
    returns={
        "message": "`Successfully deleted all variables!`",
        "deleted": "how many global variables were deleted",
    },
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every global variable of the application."""
    deleted = await globalvars.delete_all(call.db, call.app_id)
    return {"message": "Successfully deleted all variables!", "deleted": deleted}
