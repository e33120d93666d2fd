"""Typed refusals. The domain raises them; `Operation.status_for` alone turns them into statuses.

Each carries a message a person understands and a stable snake_case `error` code a program can
act on.
"""

from __future__ import annotations

from typing import Any


class Refusal(Exception):
    kind = "refusal"

    def __init__(self, message: str, error: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error = error
        self.extra = extra or {}  # fields the failure body carries besides message and error


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

    def __init__(self, retry_after: int, message: str = "Too many requests; try again later.") -> None:
        super().__init__(message, "rate_limited")
        self.retry_after = max(1, retry_after)
