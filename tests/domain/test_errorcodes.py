"""The error catalogue: every refusal is raised through an entry of `domain/errorcodes.py`, each
entry is well formed and used, and a raise site fills in exactly its message's fields."""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from licensegate.domain import errorcodes
from licensegate.domain.errors import Conflict, ErrorCode, Forbidden, Invalid, NotFound, Refusal, Unauthorized

SRC = Path(errorcodes.__file__).resolve().parent.parent
ERRORS_MODULE = SRC / "domain" / "errors.py"
CATALOGUE_MODULE = SRC / "domain" / "errorcodes.py"
REFUSAL_CLASSES = {"Refusal", "Invalid", "Unauthorized", "Forbidden", "NotFound", "Conflict"}
# Functions that put a code on the wire; their code argument (by position) must be catalogued.
WIRE_CODE_ARGS = {"failure_body": 1, "client_failure": 2, "OutboundRefused": 1, "OutboundFailed": 1}
CODE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")

BY_NAME = {name: value for name, value in vars(errorcodes).items() if isinstance(value, ErrorCode)}
CODES = {entry.code for entry in errorcodes.catalogue()}


def _sources() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(SRC.parent)}:{getattr(node, 'lineno', '?')}"


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_catalogue_entries_are_well_formed_and_declared_once() -> None:
    entries = errorcodes.catalogue()
    assert len(entries) == len(BY_NAME)  # no entry is bound to two names
    pairs = [(entry.code, entry.kind) for entry in entries]
    assert len(pairs) == len(set(pairs)), "a code is declared twice for the same kind"
    for name, entry in BY_NAME.items():
        assert CODE.fullmatch(entry.code), f"{name}: {entry.code!r} is not snake_case"
        assert entry.message.strip(), f"{name}: give a default message"
        assert entry.doc.strip(), f"{name}: say when it is answered"
        _fields(entry.message)  # a template that parses


def test_every_refusal_is_built_from_the_catalogue() -> None:
    """No refusal class is called with a literal code outside domain/errors.py; codes that reach
    the wire another way (failure bodies, outbound errors) are catalogued codes."""
    offenders: list[str] = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            called = _called_name(node)
            if called in REFUSAL_CLASSES and path != ERRORS_MODULE:
                offenders.append(
                    f"{_where(path, node)}: {ast.unparse(node)[:80]} (raise an errorcodes entry)"
                )
            position = WIRE_CODE_ARGS.get(called or "")
            if position is not None and len(node.args) > position:
                code = node.args[position]
                if isinstance(code, ast.Constant) and code.value not in CODES:
                    offenders.append(f"{_where(path, node)}: code {code.value!r} is not in the catalogue")
    assert not offenders, "\n".join(offenders)


def _entry_uses() -> Iterator[tuple[Path, ast.AST, str]]:
    for path, tree in _sources():
        if path == CATALOGUE_MODULE:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "errorcodes"
            ):
                yield path, node, node.attr


def test_raise_sites_fill_in_exactly_the_fields_of_the_message() -> None:
    offenders: list[str] = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            target = node.func.value
            if not (isinstance(target, ast.Name) and target.id == "errorcodes"):
                continue
            entry = BY_NAME.get(node.func.attr)
            if entry is None:
                continue  # a function of the module, not an entry
            given = {kw.arg for kw in node.keywords if kw.arg not in (None, "param", "extra")}
            if node.args:
                if given:
                    offenders.append(f"{_where(path, node)}: a message of its own takes no fields")
            elif given != _fields(entry.message):
                offenders.append(
                    f"{_where(path, node)}: {node.func.attr} fills {sorted(given)}, "
                    f"its message has {sorted(_fields(entry.message))}"
                )
    assert not offenders, "\n".join(offenders)


def test_every_entry_is_used() -> None:
    used = {name for _, _, name in _entry_uses()}
    # Codes raised by `outbound` (by their code) and by `errors.RateLimited`.
    literal: set[str] = {"rate_limited"}
    for path, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called_name(node) in ("OutboundRefused", "OutboundFailed"):
                code = node.args[1]
                assert isinstance(code, ast.Constant), _where(path, node)
                literal.add(str(code.value))
    unused = [name for name, entry in BY_NAME.items() if name not in used and entry.code not in literal]
    assert not unused, f"declared but never raised: {unused}"


@pytest.mark.parametrize(
    ("entry", "cls"),
    [
        (errorcodes.MISSING_TYPE, Invalid),
        (errorcodes.MISSING_SELLER_KEY, Unauthorized),
        (errorcodes.SESSION_GONE, Forbidden),
        (errorcodes.USER_NOT_FOUND, NotFound),
        (errorcodes.USER_EXISTS, Conflict),
    ],
)
def test_an_entry_raises_the_refusal_of_its_kind(entry: ErrorCode, cls: type[Refusal]) -> None:
    refusal = entry("A message of its own.")
    assert type(refusal) is cls
    assert refusal.error == entry.code
    assert refusal.kind == entry.kind
    assert entry.refuses(refusal)


def test_an_entry_fills_its_message_or_takes_one_and_names_the_parameter() -> None:
    refusal = errorcodes.USER_NOT_FOUND(username="bob")
    assert refusal.message == "No user named 'bob' exists."
    assert refusal.extra == {}
    own = errorcodes.MISSING_PARAMETER("Give an 'ip', a 'hwid' or both.", param="ip")
    assert own.message == "Give an 'ip', a 'hwid' or both."
    assert own.extra == {"param": "ip"}
