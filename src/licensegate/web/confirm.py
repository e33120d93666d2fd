"""Confirmation before a destructive action, with or without JavaScript.

A form that needs confirming carries `data-confirm="question"`; app.js asks in the page's
<dialog> and adds `confirmed=1`. Without script (or when a typed confirmation is required) the
server answers the first post with a confirmation page that re-posts the same fields with
`confirmed=1`. Either way the server checks: nothing destructive runs without it.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.responses import Response

from licensegate.web.visit import Visit

OWN_FIELDS = frozenset({"csrf", "confirmed", "typed"})


@dataclass(frozen=True, slots=True)
class Question:
    """What a destructive row action asks first (`seller.act(..., ask=...)`): the title, what
    happens, the button's word; Cancel goes where the action goes back to, unless `back` says
    otherwise."""

    title: str
    message: str
    button: str = "Confirm"
    back: str | None = None
    danger: bool = True


def confirmed(visit: Visit, typed: str | None = None) -> bool:
    """True when this post is the confirmed one (with `typed`: and the person typed it exactly)."""
    form = visit.form
    if form.get("confirmed") != "1":
        return False
    return typed is None or form.get("typed").strip() == typed


def confirm_page(
    visit: Visit,
    *,
    title: str,
    message: str,
    button: str = "Confirm",
    back: str = "/dashboard/",
    typed: str | None = None,
    typed_label: str = "",
    details: tuple[str, ...] = (),
    danger: bool = True,
) -> Response:
    """The page that asks; a second look after a wrong typed confirmation says so."""
    error = ""
    if typed is not None and visit.form.get("confirmed") == "1":
        error = "What you typed does not match, so nothing was changed."
    fields = [(name, value) for name, value in visit.form.items() if name not in OWN_FIELDS]
    return visit.render(
        "confirm.html",
        status=400 if error else 200,
        title=title,
        message=message,
        details=details,
        fields=fields,
        action=visit.request.url.path,
        button=button,
        back=back,
        typed=typed,
        typed_label=typed_label,
        error=error,
        danger=danger,
    )
