"""Typed refusals. The domain raises them; `Operation.status_for` alone turns them into statuses.

Each carries a message a person understands and a stable snake_case `error` code a program can
act on. Every code is declared once, as an `ErrorCode` in `domain/errorcodes.py` (its kind, its
default message, when it is answered); a refusal is raised through its entry:

    raise errorcodes.USER_NOT_FOUND(username=name)       # the default message, filled in
    raise errorcodes.INVALID_NAME("A file name must not contain control characters.")

`docs/api/errors.md` is generated from the catalogue, and a test refuses a refusal built from a
code that is not in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

# What kind of refusal a code is; the API layer maps each kind to an HTTP status (and the client
# API to its integer `code`). "internal" is the unexpected fault, never raised as a refusal.
# "unavailable": the service cannot serve now (503), through no fault of the client.
Kind = Literal[
    "invalid", "unauthorized", "forbidden", "not_found", "conflict", "rate_limited", "unavailable", "internal"
]


class Refusal(Exception):
    kind: Kind = "invalid"
    retry_after: int | None = None  # seconds, for the answer's Retry-After header

    def __init__(
        self, message: str, error: str, extra: dict[str, Any] | None = None, *, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.error = error
        self.extra = extra or {}  # fields the failure body carries besides message and error
        if param is not None:
            self.extra["param"] = param  # the parameter at fault, named in the failure body


class Invalid(Refusal):
    """The request is malformed or a value is out of range."""

    kind = "invalid"


class Unauthorized(Refusal):
    """The credential is missing or unknown."""

    kind = "unauthorized"


class Forbidden(Refusal):
    """The credential is known, but this action is refused."""

    kind = "forbidden"


class NotFound(Refusal):
    """A named object does not exist."""

    kind = "not_found"


class Conflict(Refusal):
    """The action conflicts with existing state."""

    kind = "conflict"


class RateLimited(Refusal):
    kind = "rate_limited"
    retry_after: int

    def __init__(
        self,
        retry_after: int,
        message: str = "Too many requests; try again later.",
        error: str = "rate_limited",
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, error, extra)
        self.retry_after = max(1, retry_after)


class Unavailable(Refusal):
    """The service cannot serve this now (its database does not answer, or it is overloaded) and
    expects to again after `retry_after` seconds: the client is not at fault."""

    kind = "unavailable"
    retry_after: int

    def __init__(self, retry_after: int, message: str, error: str) -> None:
        super().__init__(message, error)
        self.retry_after = max(1, retry_after)


_REFUSAL_OF_KIND: dict[str, type[Refusal]] = {
    cls.kind: cls for cls in (Invalid, Unauthorized, Forbidden, NotFound, Conflict)
}


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One entry of the error catalogue: a code a program can act on, what kind of refusal it
    is, the message a person reads unless the raise site says more, and when it is answered."""

    code: str
    kind: Kind
    message: str  # the default message; `{name}` fields are filled from the raise site's keywords
    doc: str = ""  # when it is answered, for docs/api/errors.md

    def __call__(
        self,
        message: str | None = None,
        /,
        *,
        param: str | None = None,
        extra: Mapping[str, Any] | None = None,
        **fields: object,
    ) -> Refusal:
        """The refusal to raise: `message` replaces the default one; `fields` fill it in;
        `param` names the request parameter at fault and `extra` adds other fields to the
        failure body."""
        if message is None:
            message = self.message.format(**fields) if fields else self.message
        return _REFUSAL_OF_KIND[self.kind](message, self.code, dict(extra) if extra else None, param=param)

    def refuses(self, refusal: Refusal) -> bool:
        """Whether a caught refusal is this entry's (same code and kind)."""
        return refusal.error == self.code and refusal.kind == self.kind


def recast(refusal: Refusal, kind: type[Refusal], message: str) -> Refusal:
    """The same code as another kind of refusal with another message: the client API answers a
    file that cannot be fetched with 403 and the fetch's own code, never naming the URL."""
    return kind(message, refusal.error, dict(refusal.extra))
