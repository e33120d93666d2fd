"""Seller API — Web Loader: the buttons the customer panel shows once the program has signed in
through the web loader (KeyAuth's `addbutton`, `delbutton`, `delallbuttons`, `fetchallbuttons`;
this service's own `editbutton` and `movebutton`)."""

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
    returns={"buttons": "[{text, value}], in the customer panel's order"},
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """The application's web-loader buttons (an empty list when there are none)."""
    return {
        "message": "Successfully retrieved buttons",
        "buttons": [
            {"text": b["text"], "value": b["value"]} for b in await loader.list_all(call.db, call.app_id)
        ],
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
    """Add a button at the end of the order. A value already in use: 409 `button_exists`; a value
    with white space or URL delimiters: 400 `invalid_button_value`; more than 100 buttons: 409
    `too_many_buttons`."""
    value, text = call.args.text("value"), call.args.text("text")
    await loader.add(call.db, call.app_id, value=value, text=text)
    call.record(f"button {value}", after={"value": value, "text": text})
    return {"message": "Successfully added button"}


@registry.operation(
    "editbutton",
    group=GROUP,
    summary="Edit Button",
    area=AREA,
    mutates=True,
    params=[
        VALUE,
        Param("text", required=True, max_length=99, strip=False, doc="the new label"),
        Param("newvalue", max_length=99, doc="a new value (no spaces); absent or empty: it stays"),
    ],
    returns={"message": "`Successfully edited button`"},
)
async def edit(call: SellerCall) -> dict[str, Any]:
    """Change a button's label and, with `newvalue`, its value; it keeps its place in the order.
    404 `button_not_found`; a new value another button has: 409 `button_exists`."""
    value, text = call.args.text("value"), call.args.text("text")
    new_value = call.args.opt_text("newvalue") or value
    before = next((b for b in await loader.list_all(call.db, call.app_id) if b["value"] == value), None)
    await loader.edit(call.db, call.app_id, value, new_value=new_value, text=text)
    after = {"value": new_value, "text": text}
    call.record(f"button {value}", before=dict(before) if before else None, after=after)
    return {"message": "Successfully edited button"}


@registry.operation(
    "movebutton",
    group=GROUP,
    summary="Move Button",
    area=AREA,
    mutates=True,
    params=[
        VALUE,
        Param(
            "position",
            "int",
            required=True,
            max_length=4,
            minimum=1,
            maximum=loader.MAX_BUTTONS,
            doc="where the button goes in the panel's order: 1 is first; past the end is last",
        ),
    ],
    returns={"position": "the button's place now (1 is first)"},
)
async def move(call: SellerCall) -> dict[str, Any]:
    """Reorder: put one button at a position; the others keep their order around it (404
    `button_not_found`)."""
    value = call.args.text("value")
    position = await loader.move(call.db, call.app_id, value, call.args.integer("position"))
    call.record(f"button {value}", after={"position": position})
    return {"message": "Successfully moved button", "position": position}


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
