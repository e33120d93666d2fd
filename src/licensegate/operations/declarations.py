"""What an operation is, declared once: its `type`, parameters, handler, permission area and the
statuses it may answer. Dispatch, validation, the API reference and the dashboard's forms all come
from these declarations, so they cannot drift apart. A refusal becomes a status here too
(`Operation.status_for`), within the statuses the operation declares."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from licensegate.domain import errorcodes
from licensegate.domain.errors import ErrorCode, Refusal
from licensegate.domain.permissions import Area

ParamKind = Literal["str", "int", "float", "bool"]
# Client API: what a call must present. "app": ownerid + name; "session": a live session;
# "validated": a logged-in session.
Requires = Literal["app", "session", "validated"]
NO_AREA: Literal[""] = ""  # an operation any caller of its interface may use

STATUS_OF_KIND = {
    "invalid": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "rate_limited": 429,
    "unavailable": 503,
}
ALL_STATUSES = frozenset({200, 400, 401, 403, 404, 409, 429, 500, 503})
# The client API's integer `code` of a success: 68, and 69 for Webhook (as the interface
# document shows).
CLIENT_SUCCESS_CODE = 68
CLIENT_WEBHOOK_SUCCESS_CODE = 69

# Numbers are ASCII decimal only: no other scripts' digits (`٣`), no `_` separators, no exponent,
# no `inf`/`nan` (what Python's int() and float() would also accept), so every number is
# bounded by its parameter's length and cannot overflow.
_INT = re.compile(r"[+-]?[0-9]{1,18}")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]{1,18}(?:\.[0-9]{0,18})?|\.[0-9]{1,18})")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: ParamKind = "str"
    required: bool = False
    max_length: int = 256
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    aliases: tuple[str, ...] = ()  # other names existing clients send for it
    strip: bool = True  # trim surrounding white space (never for passwords or free text)
    secret: bool = False  # kept out of logs
    choices: tuple[str, ...] = ()
    ignore_case: bool = False  # choices match in any case (and arrive in the case declared)
    # Names an existing end user: the seller API hands the handler that user's name as stored,
    # found by the client API's rule for names (operations.seller.invoke).
    names_user: bool = False

    def parse(self, raw: str) -> Any:
        if len(raw) > self.max_length:
            raise errorcodes.PARAMETER_TOO_LONG(name=self.name, max_length=self.max_length, param=self.name)
        if self.kind == "str":
            if self.ignore_case:
                raw = raw.lower()
            if self.choices and raw not in self.choices:
                raise errorcodes.INVALID_PARAMETER(
                    name=self.name, choices=", ".join(self.choices), param=self.name
                )
            return raw
        if self.kind == "bool":
            lowered = raw.lower()
            if lowered in _TRUE:
                return True
            if lowered in _FALSE:
                return False
            raise errorcodes.INVALID_BOOLEAN(name=self.name, param=self.name)
        value: float
        if self.kind == "int":
            if not _INT.fullmatch(raw):
                raise errorcodes.INVALID_NUMBER(name=self.name, param=self.name)
            value = int(raw)
        else:
            if not _DECIMAL.fullmatch(raw):
                raise errorcodes.INVALID_NUMBER(
                    f"Parameter '{self.name}' must be a decimal number (ASCII digits, an optional sign "
                    "and fraction, no exponent).",
                    param=self.name,
                )
            value = float(raw)
        if self.minimum is not None and value < self.minimum:
            raise errorcodes.NUMBER_OUT_OF_RANGE(
                f"Parameter '{self.name}' must be at least {_num(self.minimum)}.", param=self.name
            )
        if self.maximum is not None and value > self.maximum:
            raise errorcodes.NUMBER_OUT_OF_RANGE(name=self.name, maximum=_num(self.maximum), param=self.name)
        return value


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class Args:
    """Validated parameters of one call; absent optional ones are None."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __contains__(self, name: str) -> bool:
        return self._values.get(name) is not None

    def text(self, name: str) -> str:
        value = self._values[name]
        assert isinstance(value, str)
        return value

    def opt_text(self, name: str) -> str | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, str)
        return value

    def texts(self, names: Iterable[str]) -> dict[str, str]:
        """The text parameters among `names` that were given, by name (absent ones left out)."""
        values = self._values
        return {name: values[name] for name in names if values.get(name) is not None}

    def integer(self, name: str) -> int:
        value = self._values[name]
        assert isinstance(value, int)
        return value

    def opt_integer(self, name: str) -> int | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, int)
        return value

    def number(self, name: str) -> float:
        value = self._values[name]
        assert isinstance(value, float)
        return value

    def opt_number(self, name: str) -> float | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, float)
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self._values.get(name)
        return default if value is None else bool(value)

    def opt_flag(self, name: str) -> bool | None:
        value = self._values.get(name)
        return None if value is None else bool(value)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def with_text(self, name: str, value: str) -> Args:
        """These parameters with `name` set to `value`."""
        return Args({**self._values, name: value})


CallT = TypeVar("CallT")
Handler = Callable[[CallT], Awaitable[dict[str, Any]]]
# A parameter as `Operation.parse_args` reads it: name, aliases, strip, required, the longest
# plain text it takes as it is (None: `Param.parse` decides: numbers, flags, choices), the Param.
_Reading = tuple[str, tuple[str, ...], bool, bool, int | None, Param]


def _reading(param: Param) -> _Reading:
    plain = param.kind == "str" and not param.ignore_case and not param.choices
    return (
        param.name,
        param.aliases,
        param.strip,
        param.required,
        param.max_length if plain else None,
        param,
    )


@dataclass(frozen=True, slots=True)
class Operation(Generic[CallT]):
    type: str
    group: str
    summary: str
    handler: Handler[CallT]
    params: tuple[Param, ...] = ()
    statuses: frozenset[int] = ALL_STATUSES
    aliases: tuple[str, ...] = ()
    area: Area | Literal[""] = NO_AREA  # the permission area a seller key or manager needs
    mutates: bool = False
    doc: str = ""
    # Fields of the success body beyond success/message, for the reference: name -> description.
    returns: Mapping[str, str] = field(default_factory=dict)
    # Renders the success body as plain text when the caller asks for format=text.
    text: Callable[[dict[str, Any]], str] | None = None
    max_body_bytes: int | None = None  # a larger body limit
    uploads: tuple[str, ...] = ()  # names of the multipart file fields this operation accepts
    # Client API: what the call must present, and the integer `code` of its success.
    requires: Requires = "app"
    success_code: int = CLIENT_SUCCESS_CODE
    # Client API: run the whole call on one database connection (not for operations that await
    # password hashing: they would hold a pooled connection while waiting for a hashing thread).
    pinned: bool = True
    # How each parameter is read, worked out once (`_reading`): every call reads them all.
    _readings: tuple[_Reading, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_readings", tuple(_reading(param) for param in self.params))

    def parse_args(self, raw: Mapping[str, str]) -> Args:
        values: dict[str, Any] = {}
        for name, aliases, strip, required, text_max, param in self._readings:
            value = raw.get(name)
            if value is None and aliases:
                for alias in aliases:
                    value = raw.get(alias)
                    if value is not None:
                        break
            if value and strip:
                value = value.strip()
            if not value:  # absent or empty
                if required:
                    raise errorcodes.MISSING_PARAMETER(name=name, param=name)
                values[name] = None
            elif text_max is not None and len(value) <= text_max:
                values[name] = value  # what `param.parse` answers for plain text within its length
            else:
                values[name] = param.parse(value)
        return Args(values)

    def status_for(self, refusal: Refusal | ErrorCode) -> int:
        """The status for a refusal (or a catalogue entry), within the statuses this operation is
        declared to answer.

        Where the natural status is not declared (the interface document lists no 429 for
        License Login, say), the call is refused with 403 and keeps its `error` code. A service
        that cannot serve now (503) is a failure on the server's side: where 503 is not declared
        it answers 500, and 403 only where 500 is not declared either (Webhook).
        """
        status = STATUS_OF_KIND.get(refusal.kind, 400)
        if status in self.statuses:
            return status
        if status == 503:
            return self.fault_status()
        return 403

    def body_limit(self, default: int) -> int:
        """The largest form body this operation reads: the deployment's limit, or the larger one
        it declares (for parameters longer than that limit allows)."""
        return max(default, self.max_body_bytes or 0)

    def fault_status(self) -> int:
        """The status of an unexpected fault: 500, unless the operation may not answer it (the
        interface document lists no 500 for Webhook); then 403, still with `internal_error`."""
        return 500 if 500 in self.statuses else 403


class Registry(Generic[CallT]):
    """The operations of one interface, by `type` value (aliases included)."""

    def __init__(self, interface: str) -> None:
        self.interface = interface
        self._by_type: dict[str, Operation[CallT]] = {}
        self._ordered: list[Operation[CallT]] = []
        # default limit -> the largest body limit of any operation: asked on every request (a
        # max over every operation cost about 7 us of each), so worked out once per default.
        self._body_limits: dict[int, int] = {}

    def add(self, op: Operation[CallT]) -> Operation[CallT]:
        if not {400, 403} <= op.statuses or 200 not in op.statuses:
            raise ValueError(f"{op.type}: every operation may answer 200, 400 and 403")
        for name in (op.type, *op.aliases):
            if name in self._by_type:
                raise ValueError(f"{self.interface}: type {name!r} declared twice")
            self._by_type[name] = op
        self._ordered.append(op)
        self._body_limits.clear()
        return op

    def operation(
        self,
        type: str,
        *,
        group: str,
        summary: str,
        params: Iterable[Param] = (),
        statuses: frozenset[int] = ALL_STATUSES,
        aliases: tuple[str, ...] = (),
        area: Area | Literal[""] = NO_AREA,
        mutates: bool = False,
        returns: Mapping[str, str] | None = None,
        text: Callable[[dict[str, Any]], str] | None = None,
        max_body_bytes: int | None = None,
        uploads: tuple[str, ...] = (),
        requires: Requires = "app",
        success_code: int = CLIENT_SUCCESS_CODE,
        pinned: bool = True,
    ) -> Callable[[Handler[CallT]], Handler[CallT]]:
        """Declare the decorated handler as the operation `type` (its docstring is the reference's
        description); see `Operation` for what each keyword means."""

        def register(handler: Handler[CallT]) -> Handler[CallT]:
            self.add(
                Operation(
                    type=type,
                    group=group,
                    summary=summary,
                    handler=handler,
                    params=tuple(params),
                    statuses=statuses,
                    aliases=aliases,
                    area=area,
                    mutates=mutates,
                    doc=inspect.cleandoc(handler.__doc__ or ""),
                    returns=dict(returns or {}),
                    text=text,
                    max_body_bytes=max_body_bytes,
                    uploads=uploads,
                    requires=requires,
                    success_code=success_code,
                    pinned=pinned,
                )
            )
            return handler

        return register

    def get(self, type_value: str) -> Operation[CallT] | None:
        return self._by_type.get(type_value)

    def knows(self, type_value: str) -> bool:
        return type_value in self._by_type

    def lookup(self, raw: Mapping[str, str]) -> Operation[CallT]:
        type_value = raw.get("type")
        if type_value is None or type_value.strip() == "":
            raise errorcodes.MISSING_TYPE()
        op = self._by_type.get(type_value.strip())
        if op is None:
            raise errorcodes.UNKNOWN_TYPE(type=type_value[:64])
        return op

    def body_limit(self, default: int) -> int:
        """The largest body limit of any operation: what is read before the body names its own."""
        limit = self._body_limits.get(default)
        if limit is None:
            limit = max((op.body_limit(default) for op in self._ordered), default=default)
            self._body_limits[default] = limit
        return limit

    def __iter__(self) -> Iterator[Operation[CallT]]:
        return iter(self._ordered)

    def __len__(self) -> int:
        return len(self._ordered)


def status_of(op: Operation[Any] | None, refusal: Refusal) -> int:
    """The status of a refusal: within the operation's declared statuses once it is known."""
    return op.status_for(refusal) if op is not None else STATUS_OF_KIND[refusal.kind]


# --- paging, shared by every list operation ---------------------------------------------------

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
PAGE = Param("page", "int", minimum=1, maximum=1_000_000, max_length=8, doc="page number, from 1 (default 1)")
LIMIT = Param(
    "limit",
    "int",
    minimum=1,
    maximum=MAX_PAGE_SIZE,
    max_length=5,
    doc=f"items per page (default {DEFAULT_PAGE_SIZE}, at most {MAX_PAGE_SIZE})",
)


def paging(args: Args) -> tuple[int, int]:
    """(limit, offset) from the optional `page` and `limit` parameters."""
    limit = args.opt_integer("limit") or DEFAULT_PAGE_SIZE
    page = args.opt_integer("page") or 1
    return limit, (page - 1) * limit
