"""A `mysqldump` of KeyAuth's database as a `Source`, read in bounded memory.

The file is never held whole. A first pass reads it line by line (in pieces of at most
`PIECE` bytes, so a long extended INSERT is never a whole line in memory; an INSERT ends with the
line that ends in `;`, one line or one row a line as newer mysqldumps write it) and notes each table's
columns (from its CREATE TABLE), where its INSERT statements start and end, and the dump's time
("-- Dump completed on ..."). A table's rows are then read by seeking to its statements and
tokenising their values from a buffer refilled in chunks: mysqldump's escaping (`\\0 \\' \\" \\b
\\n \\r \\t \\Z \\\\`, and `''`), `_binary '...'` and other charset introducers, `b'0101'` bit
values, `0x...` hex, NULL and numbers. Extended and one-row INSERTs, with or without a column
list (`--complete-insert`), are read alike.
"""

from __future__ import annotations

import calendar
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport import tables
from licensegate.domain.keyauthimport.tables import Value

PIECE = 1 << 20  # the most the first pass reads of one line at a time
CHUNK = 1 << 20  # how much the value tokeniser reads at a time
HEADER = 1 << 16  # an INSERT's head (its column list included) is shorter than this

_INSERT = re.compile(rb"INSERT\s+(?:IGNORE\s+)?INTO\s+`?([^`\s(]+)`?\s*(?:\(([^)]*)\))?\s*VALUES\s*", re.I)
_CREATE = re.compile(rb"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?`?([^`\s(]+)`?", re.I)
_COLUMN = re.compile(rb"\s*`([^`]+)`\s+(\w+)")
_COMPLETED = re.compile(rb"-- Dump completed on\s+(\d{4}-\d{2}-\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})")
_TOKEN = re.compile(
    rb"""\s*+(?:
      (?P<str>(?:_(?P<charset>\w+)\s*+)?'(?P<body>(?:[^'\\]++|\\.|'')*+)')
     |b'(?P<bits>[01]*+)'
     |(?P<hex>0x[0-9A-Fa-f]*+)
     |(?P<null>NULL)\b
     |(?P<num>[-+]?[0-9][0-9.eE+-]*+)
     |(?P<punct>[(),;])
    )""",
    re.X | re.S,
)
_ESCAPE = re.compile(rb"\\(.)|''", re.S)
_ESCAPES = {b"0": b"\0", b"b": b"\b", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"Z": b"\x1a"}


class DumpError(Exception):
    """The file is not a dump this reader understands; a message for a person."""


@dataclass(slots=True)
class _Table:
    columns: list[str] = field(default_factory=list)
    bits: set[str] = field(default_factory=set)  # its bit(n) columns: raw bytes in a dump
    start: int | None = None  # offset of its first INSERT
    end: int = 0  # offset just past its last INSERT


def _unescape(body: bytes) -> bytes:
    if b"\\" not in body and b"''" not in body:
        return body

    def one(m: re.Match[bytes]) -> bytes:
        if m.group(1) is None:
            return b"'"
        c = m.group(1)
        if c in (b"%", b"_"):  # MySQL keeps the backslash of these two
            return b"\\" + c
        return _ESCAPES.get(c, c)

    return _ESCAPE.sub(one, body)


class _Values:
    """The values of INSERT statements, tokenised from `stream` between two offsets."""

    def __init__(self, stream: BinaryIO, start: int, end: int) -> None:
        self._stream = stream
        stream.seek(start)
        self._left = end - start
        self._buf = b""
        self._pos = 0

    def _fill(self) -> bool:
        if self._left <= 0:
            return False
        data = self._stream.read(min(CHUNK, self._left))
        if not data:
            self._left = 0
            return False
        self._left -= len(data)
        self._buf = self._buf[self._pos :] + data
        self._pos = 0
        return True

    def _match(self, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
        """A match of `pattern` at the position that the buffer's end does not cut short."""
        while True:
            m = pattern.match(self._buf, self._pos)
            if m is not None and (m.end() < len(self._buf) or self._left <= 0):
                return m
            if not self._fill():
                return m

    def statements(self) -> Iterator[tuple[str, list[str] | None]]:
        """Each INSERT's table and column list (None: the table's order); its rows are then read
        with `rows()` before asking for the next statement."""
        while True:
            while len(self._buf) - self._pos < HEADER and self._fill():
                pass
            m = _INSERT.match(self._buf, self._pos) if self._buf.startswith(b"INSERT", self._pos) else None
            if m is not None:
                self._pos = m.end()
                cols = m.group(2)
                names = None if cols is None else [c.strip().strip(b"`").decode() for c in cols.split(b",")]
                yield m.group(1).decode(), names
                continue
            # Anything else between the statements (LOCK TABLES, comments): skip its line.
            while True:
                nl = self._buf.find(b"\n", self._pos)
                if nl >= 0:
                    self._pos = nl + 1
                    break
                self._pos = len(self._buf)
                if not self._fill():
                    return

    def rows(self, bits: frozenset[int] = frozenset()) -> Iterator[list[Value]]:
        """The tuples of the statement just started, up to its `;`. The values at the positions
        `bits` are bit fields, which mysqldump may write as a quoted string of raw bytes."""
        row: list[Value] | None = None
        while True:
            m = self._match(_TOKEN)
            if m is None:
                snippet = self._buf[self._pos : self._pos + 40]
                raise DumpError(f"unreadable value in an INSERT statement near {snippet!r}")
            self._pos = m.end()
            kind = m.lastgroup
            if kind == "punct":
                p = m.group("punct")
                if p == b"(":
                    row = []
                elif p == b")":
                    if row is not None:
                        yield row
                    row = None
                elif p == b";":
                    return
                continue
            if row is None:
                raise DumpError("a value outside a row in an INSERT statement")
            if kind == "str" or kind == "charset" or kind == "body":
                raw = _unescape(m.group("body"))
                charset = m.group("charset")
                if len(row) in bits:
                    row.append(int.from_bytes(raw, "big") if raw else 0)
                else:
                    row.append(raw if charset == b"binary" else raw.decode("utf-8", errors="replace"))
            elif kind == "bits":
                digits = m.group("bits")
                row.append(int(digits, 2) if digits else 0)
            elif kind == "hex":
                row.append(bytes.fromhex(m.group("hex")[2:].decode()))
            elif kind == "null":
                row.append(None)
            else:
                num = m.group("num").decode()
                row.append(int(num) if num.lstrip("+-").isdigit() else num)


def _scan(stream: BinaryIO) -> tuple[dict[str, _Table], int | None]:
    """The first pass: each table's columns and INSERT span, and the dump's time."""
    found: dict[str, _Table] = {}
    completed: int | None = None
    creating: _Table | None = None
    offset = 0
    at_line_start = True
    stream.seek(0)
    while True:
        # A line's start is read whole up to a statement's head (shorter than HEADER).
        piece = stream.readline(max(PIECE, HEADER) if at_line_start else PIECE)
        if not piece:
            break
        start, offset = offset, offset + len(piece)
        line_start, at_line_start = at_line_start, piece.endswith(b"\n")
        if not line_start:
            continue
        if creating is not None:
            if piece.lstrip().startswith(b")"):
                creating = None
            elif (col := _COLUMN.match(piece)) is not None:
                creating.columns.append(col.group(1).decode())
                if col.group(2).lower() == b"bit":
                    creating.bits.add(col.group(1).decode())
            continue
        if piece.startswith(b"INSERT"):
            m = _INSERT.match(piece)
            if m is not None:
                table = found.setdefault(m.group(1).decode(), _Table())
                if table.start is None:
                    table.start = start
                # The statement ends with the line that ends in `;` (mysqldump escapes every
                # newline inside a value, so no value spans lines; rows may be one per line).
                last = piece.rstrip(b"\r\n")[-1:] or b"\n"
                while not (at_line_start and last == b";"):
                    more = stream.readline(PIECE)
                    if not more:
                        break
                    offset += len(more)
                    at_line_start = more.endswith(b"\n")
                    last = more.rstrip(b"\r\n")[-1:] or last
                table.end = offset
        elif piece.startswith(b"CREATE TABLE"):
            m = _CREATE.match(piece)
            if m is not None:
                creating = found.setdefault(m.group(1).decode(), _Table())
                creating.columns, creating.bits = [], set()
        elif piece.startswith(b"-- Dump completed"):
            m = _COMPLETED.match(piece)
            if m is not None:
                day, hour, minute, second = (g.decode() for g in m.groups())
                stamp = time.strptime(f"{day} {hour}:{minute}:{second}", "%Y-%m-%d %H:%M:%S")
                completed = calendar.timegm(stamp)
    return found, completed


class DumpSource(tables.TableSource):
    """A mysqldump file as KeyAuth's records. `app_name` limits it to one application."""

    def __init__(self, path: Path, app_name: str | None = None) -> None:
        self._path = path
        self._stream: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed by close()
        try:
            self._tables, completed = _scan(self._stream)
            if "apps" not in self._tables or self._tables["apps"].start is None:
                raise DumpError(
                    f"{path} holds no rows of KeyAuth's `apps` table: is it a dump of KeyAuth's database?"
                )
        except BaseException:
            self._stream.close()
            raise
        self._notes: list[str] = []
        if completed is None:
            completed = int(os.stat(path).st_mtime)
            self._notes.append(
                "the dump has no 'Dump completed on' line; its file time was taken as the time it was made"
            )
        self._read_at = completed
        super().__init__((tables.app_from_row(row) for row in self._rows_of("apps")), app_name)

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> DumpSource:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def read_at(self) -> int:
        return self._read_at

    def _rows_of(self, name: str) -> Iterator[dict[str, Value]]:
        table = self._tables.get(name)
        if table is None or table.start is None:
            return
        values = _Values(self._stream, table.start, table.end)
        for statement_table, names in values.statements():
            columns = names if names is not None else self._tables.get(statement_table, table).columns
            bits = frozenset(i for i, c in enumerate(columns) if c in table.bits)
            for row in values.rows(bits):
                if statement_table != name:
                    continue
                if len(row) != len(columns):
                    raise DumpError(
                        f"a row of `{name}` has {len(row)} values but the table has {len(columns)} columns"
                    )
                yield dict(zip(columns, row, strict=True))

    def _table_rows(self, kind: type[Any], app: r.App) -> Iterator[tables.Row]:
        return self._rows_of(tables.table(kind))

    def warnings(self, app: str) -> list[str]:
        return list(self._notes)
