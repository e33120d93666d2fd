"""Seller API — Web Loader: the buttons the customer panel shows once the program has signed in
through the web loader (KeyAuth's `addbutton`, `delbutton`, `delallbuttons`, `fetchallbuttons`)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import loader
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Web Loader"
AREA: Area = "settings"
VALUE = Param(
    "value", required=True, max_length=99, doc="what the program's `button()` call waits for (no spaces)"
)


@registry.operation(
    "fetchallbuttons",
    group=GROUP,
    summary="Get All Buttons",
    area=AREA,
    returns={"buttons": "[{text, value}], in the order they were added"},
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """The application's web-loader buttons (an empty list when there are none)."""
    return {
        "message": "Successfully retrieved buttons",
        "buttons": await loader.list_all(call.db, call.app_id),
    }


@registry.operation(
    "addbutton",
    group=GROUP,
    summary="Add Button",
    area=AREA,
    mutates=True,
    params=[VALUE, Param("text", required=True, max_length=99, strip=False, doc="the label shown")],
    returns={"message": "`Successfully added button`"},
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Add a button. A value already in use: 409 `button_exists`; a value with white space or URL
    delimiters: 400 `invalid_button_value`."""
    value, text = call.args.text("value"), call.args.text("text")
    await loader.add(call.db, call.app_id, value=value, text=text)
    call.record(f"button {value}", after={"value": value, "text": text})
    return {"message": "Successfully added button"}


@registry.operation(
    "delbutton",
    group=GROUP,
    summary="Delete Button",
    area=AREA,
    mutates=True,
    params=[VALUE],
    returns={"message": "`Successfully deleted button`"},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete one button by its value (404 `button_not_found` when there is none)."""
    value = call.args.text("value")
    await loader.delete(call.db, call.app_id, value)
    call.record(f"button {value}")
    return {"message": "Successfully deleted button"}


@registry.operation(
    "delallbuttons",
    group=GROUP,
    summary="Delete All Buttons",
    area=AREA,
    mutates=True,
    aliases=("delAllButtons",),
    returns={"message": "`Successfully deleted all buttons`", "deleted": "how many were deleted"},
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every button of the application."""
    deleted = await loader.delete_all(call.db, call.app_id)
    call.record("buttons", after={"deleted": deleted})
    return {"message": "Successfully deleted all buttons", "deleted": deleted}
