"""Where file content lives: the local filesystem under `data_dir/files`, content-addressed.

A blob is named by the SHA-256 of its content (`files/ab/abcdef...`), so identical content is
stored once, whichever application or row refers to it. Blobs are written atomically: into a
temporary file in the `files` folder (the same filesystem as the blob's place), flushed and
fsynced, then renamed into place and the folder fsynced.

Adding content and removing it race with each other (one row is deleted while another with the
same content is added). The order of steps keeps a blob present whenever a row refers to it:

- adding: stage the content in a temporary file; `publish` it (a hard link, or a copy, into
  place); insert the row; `commit` (rename the staged file into place once more, which restores
  the blob if a concurrent removal took it after the first publish).
- removing: delete the row; when no row refers to the blob any more, move the blob aside, ask
  the database again, and move it back if a row appeared meanwhile, else delete it.

What remains: a reader may find the blob missing for the instant it is moved aside and back
(`read` retries once), and a crash between steps can leave an unreferenced blob or a temporary
file behind (harmless; they take space only).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from licensegate import private
from licensegate.durable import fsync_dir

CHUNK = 1024 * 1024
_KEY = re.compile(r"[0-9a-f]{64}")


class TooLarge(Exception):
    """The content is larger than the limit it was staged under."""


class ContentMissing(Exception):
    """A row refers to a blob that is not in storage (a server fault, not a caller's)."""


def root(data_dir: Path) -> Path:
    return data_dir / "files"


def blob_path(data_dir: Path, key: str) -> Path:
    if not _KEY.fullmatch(key):  # the key becomes a path: never anything but a digest
        raise ValueError(f"not a storage key: {key[:80]!r}")
    return root(data_dir) / key[:2] / key


@dataclass(slots=True)
class Staged:
    """Content written to a temporary file, not yet in its place."""

    key: str
    size: int
    temp: Path
    final: Path

    async def publish(self) -> None:
        """Make the blob present in its place, keeping the staged file for `commit`."""
        await asyncio.to_thread(_publish, self.temp, self.final)

    async def commit(self) -> None:
        """Move the staged file into place (after the row referring to it is committed)."""
        await asyncio.to_thread(_place, self.temp, self.final)

    async def discard(self) -> None:
        await asyncio.to_thread(_unlink, self.temp)


async def stage_bytes(data_dir: Path, content: bytes) -> Staged:
    return await asyncio.to_thread(_stage, data_dir, _ChunksOf(content), len(content))


async def stage_file(data_dir: Path, source: BinaryIO, max_bytes: int) -> Staged:
    """Copy a readable file (an upload spooled by the request parser) into staging, hashing as
    it goes; raise TooLarge past `max_bytes`."""
    return await asyncio.to_thread(_stage, data_dir, source, max_bytes)


async def read(data_dir: Path, key: str) -> bytes:
    path = blob_path(data_dir, key)
    for attempt in range(2):
        try:
            return await asyncio.to_thread(path.read_bytes)
        except FileNotFoundError:
            if attempt == 0:
                await asyncio.sleep(0.05)  # a concurrent removal may be moving it back
    raise ContentMissing(f"file content {key} is missing from {root(data_dir)}")


def exists(data_dir: Path, key: str) -> bool:
    return blob_path(data_dir, key).is_file()


async def remove_if_unreferenced(data_dir: Path, key: str, referenced: Callable[[], Awaitable[bool]]) -> bool:
    """Delete the blob unless a row still refers to it. `referenced` asks the database (after
    the deleting transaction has committed). Returns whether the blob was deleted."""
    if await referenced():
        return False
    final = blob_path(data_dir, key)
    aside = root(data_dir) / f".removing-{key}-{secrets.token_hex(4)}"
    try:
        await asyncio.to_thread(os.replace, final, aside)
    except FileNotFoundError:
        return False
    if await referenced():
        await asyncio.to_thread(_place, aside, final)  # a row with this content appeared meanwhile
        return False
    await asyncio.to_thread(_unlink, aside)
    return True


# --- the blocking parts, run in a worker thread ----------------------------------------------


class _ChunksOf:
    """A bytes object read like a file, without copying it."""

    def __init__(self, content: bytes) -> None:
        self._view = memoryview(content)
        self._offset = 0

    def read(self, size: int) -> bytes:
        chunk = self._view[self._offset : self._offset + size]
        self._offset += len(chunk)
        return bytes(chunk)


def _stage(data_dir: Path, source: BinaryIO | _ChunksOf, max_bytes: int) -> Staged:
    folder = private.folder(root(data_dir))
    temp = folder / f".upload-{secrets.token_hex(8)}"
    digest = hashlib.sha256()
    size = 0
    if hasattr(source, "seek"):
        source.seek(0)
    try:
        with private.create(temp) as out:
            while chunk := source.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise TooLarge(f"the content is larger than {max_bytes} bytes")
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        _unlink(temp)
        raise
    key = digest.hexdigest()
    return Staged(key=key, size=size, temp=temp, final=blob_path(data_dir, key))


def _publish(temp: Path, final: Path) -> None:
    if final.exists():
        return
    private.folder(final.parent)
    try:
        os.link(temp, final)
    except FileExistsError:
        return
    except OSError:
        # A filesystem without hard links: copy to a second temporary file and rename that.
        copy = temp.with_name(temp.name + ".copy")
        with open(temp, "rb") as source, private.create(copy) as handle:
            shutil.copyfileobj(source, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(copy, final)
    fsync_dir(final.parent)


def _place(temp: Path, final: Path) -> None:
    private.folder(final.parent)
    os.replace(temp, final)  # identical content by construction: replacing a present blob is harmless
    # Renaming one hard link of a file onto another link of the same file does nothing (POSIX):
    # drop the staged name in that case.
    _unlink(temp)
    fsync_dir(final.parent)


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
