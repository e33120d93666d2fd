"""Where file content lives, content-addressed: a blob is named by the SHA-256 of its content, so
identical content is stored once, whichever application or row refers to it.

Two stores behind one interface (`FileStore`):

- `LocalFileStore`: a folder (`<data dir>/files` on SQLite, or `LICENSEGATE_FILES_DIR`, a folder
  every node mounts). Blobs are written atomically: into a temporary file in the folder, flushed
  and fsynced, then renamed into place and the folder fsynced.
- `DatabaseFileStore` (PostgreSQL without a shared folder): the blob's row in `file_blobs` and its
  bytes in `file_chunks`, 1 MiB a row, written in one transaction, so every node serves every
  file. Content is staged in an anonymous temporary file first (the digest names it), then copied
  a chunk at a time; it is read back a chunk at a time. No step holds a whole file in memory.

Adding content and removing it race with each other (one row is deleted while another with the
same content is added). The order of steps keeps a blob present whenever a row refers to it:

- adding: stage the content; `publish` it (present in the store); insert the row; `commit`
  (make sure it is still present and put it back if a concurrent removal took it meanwhile).
- removing: delete the row; when no row refers to the blob any more, take the blob (the folder:
  move it aside; the database: lock its row), ask the database again, and keep it if a row
  appeared meanwhile, else delete it.

What remains: a reader of the folder may find the blob missing for the instant it is moved aside
and back (opening retries once), and a crash between steps can leave an unreferenced blob or a
temporary file behind (harmless; they take space only).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from licensegate import private
from licensegate.clock import Clock
from licensegate.durable import fsync_dir
from licensegate.store import blobs as blob_store
from licensegate.store.database import Database, dialect_of

CHUNK = 1024 * 1024
_KEY = re.compile(r"[0-9a-f]{64}")

Referenced = Callable[[], Awaitable[bool]]


class TooLarge(Exception):
    """The content is larger than the limit it was staged under."""


class ContentMissing(Exception):
    """A row refers to a blob that is not in storage (a server fault, not a caller's)."""


def check_key(key: str) -> str:
    if not _KEY.fullmatch(key):  # the key becomes a path or a row's key: never anything but a digest
        raise ValueError(f"not a storage key: {key[:80]!r}")
    return key


class Staged(Protocol):
    """Content staged, not yet in its place."""

    key: str
    size: int

    async def publish(self) -> None:
        """Make the blob present in the store, keeping what was staged for `commit`."""
        ...

    async def commit(self) -> None:
        """After the row referring to it is committed: make sure the blob is still present."""
        ...

    async def discard(self) -> None: ...


class FileStore(Protocol):
    where: str  # for messages: the folder, or "the database"

    async def stage_file(self, source: BinaryIO, max_bytes: int) -> Staged:
        """Copy a readable file (an upload spooled by the request parser, a download) into
        staging, hashing as it goes; raise TooLarge past `max_bytes`."""
        ...

    def chunks(self, key: str) -> AsyncIterator[bytes]:
        """The blob's content, a chunk at a time; raises ContentMissing when it is not there."""
        ...

    async def exists(self, key: str) -> bool: ...

    async def remove_if_unreferenced(self, key: str, referenced: Referenced) -> bool:
        """Delete the blob unless a row still refers to it. `referenced` asks the database
        (after the deleting transaction has committed). Returns whether the blob was deleted."""
        ...

    async def keys(self) -> list[str]:
        """Every blob present, sorted."""
        ...


async def stage_bytes(store: FileStore, content: bytes) -> Staged:
    return await store.stage_file(_ChunksOf(content), len(content))  # type: ignore[arg-type]


async def read(store: FileStore, key: str) -> bytes:
    """A whole blob (for small ones and tests; downloads go a chunk at a time)."""
    return b"".join([chunk async for chunk in store.chunks(key)])


# --- a folder ------------------------------------------------------------------------------------


def root(data_dir: Path) -> Path:
    """The default folder: `files` in the data folder."""
    return data_dir / "files"


@dataclass(slots=True)
class LocalStaged:
    """Content written to a temporary file in the folder, not yet in its place."""

    key: str
    size: int
    temp: Path
    final: Path

    async def publish(self) -> None:
        await asyncio.to_thread(_publish, self.temp, self.final)

    async def commit(self) -> None:
        """Move the staged file into place (restores the blob if a concurrent removal took it)."""
        await asyncio.to_thread(_place, self.temp, self.final)

    async def discard(self) -> None:
        await asyncio.to_thread(_unlink, self.temp)


class LocalFileStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.where = str(folder)

    def path(self, key: str) -> Path:
        return self.folder / check_key(key)[:2] / key

    async def stage_file(self, source: BinaryIO, max_bytes: int) -> LocalStaged:
        return await asyncio.to_thread(self._stage, source, max_bytes)

    def _stage(self, source: BinaryIO | _ChunksOf, max_bytes: int) -> LocalStaged:
        folder = private.folder(self.folder)
        temp = folder / f".upload-{secrets.token_hex(8)}"
        try:
            with private.create(temp) as out:
                key, size = _copy_hashing(source, out, max_bytes)
                out.flush()
                os.fsync(out.fileno())
        except BaseException:
            _unlink(temp)
            raise
        return LocalStaged(key=key, size=size, temp=temp, final=self.path(key))

    async def chunks(self, key: str) -> AsyncIterator[bytes]:
        path = self.path(key)
        handle: BinaryIO | None = None
        for attempt in range(2):
            try:
                handle = await asyncio.to_thread(open, path, "rb")
                break
            except FileNotFoundError:
                if attempt == 0:
                    await asyncio.sleep(0.05)  # a concurrent removal may be moving it back
        if handle is None:
            raise ContentMissing(f"file content {key} is missing from {self.folder}")
        try:
            while chunk := await asyncio.to_thread(handle.read, CHUNK):
                yield chunk
        finally:
            handle.close()

    async def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    async def remove_if_unreferenced(self, key: str, referenced: Referenced) -> bool:
        if await referenced():
            return False
        final = self.path(key)
        aside = self.folder / f".removing-{key}-{secrets.token_hex(4)}"
        try:
            await asyncio.to_thread(os.replace, final, aside)
        except FileNotFoundError:
            return False
        if await referenced():
            await asyncio.to_thread(_place, aside, final)  # a row with this content appeared meanwhile
            return False
        await asyncio.to_thread(_unlink, aside)
        return True

    async def keys(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.name for p in self.folder.glob("??/*") if p.is_file() and _KEY.fullmatch(p.name))


# --- the database --------------------------------------------------------------------------------


@dataclass(slots=True)
class DatabaseStaged:
    """Content in an anonymous temporary file (gone when closed), copied into the database by
    `publish`."""

    key: str
    size: int
    temp: BinaryIO
    store: DatabaseFileStore

    async def publish(self) -> None:
        await self.store.put(self.key, self.size, self.temp)

    async def commit(self) -> None:
        try:
            if not await blob_store.hold(self.store.db, self.key):
                await self.publish()  # a concurrent removal took it after the first publish
        finally:
            self.temp.close()

    async def discard(self) -> None:
        self.temp.close()


class DatabaseFileStore:
    """`legacy`: the folder files lived in before (read, and copied in, when the database does
    not have a blob yet: an upgraded deployment keeps serving its files)."""

    where = "the database"

    def __init__(self, db: Database, clock: Clock, legacy: LocalFileStore | None = None) -> None:
        self.db = db
        self.clock = clock
        self.legacy = legacy

    async def stage_file(self, source: BinaryIO, max_bytes: int) -> DatabaseStaged:
        return await asyncio.to_thread(self._stage, source, max_bytes)

    def _stage(self, source: BinaryIO | _ChunksOf, max_bytes: int) -> DatabaseStaged:
        temp = tempfile.TemporaryFile()  # noqa: SIM115 - closed by commit or discard
        try:
            key, size = _copy_hashing(source, temp, max_bytes)
        except BaseException:
            temp.close()
            raise
        return DatabaseStaged(key=key, size=size, temp=temp, store=self)

    async def put(self, key: str, size: int, content: BinaryIO) -> None:
        """The blob and all its chunks in one transaction (nothing when it is there already)."""
        chunks = -(-size // CHUNK)
        async with self.db.transaction() as tx:
            if not await blob_store.insert(tx, key, size, chunks, self.clock.now()):
                return  # present (a concurrent publisher of the same content waited for us)
            await asyncio.to_thread(content.seek, 0)
            for seq in range(chunks):
                data = await asyncio.to_thread(content.read, CHUNK)
                await blob_store.insert_chunk(tx, key, seq, data)

    async def chunks(self, key: str) -> AsyncIterator[bytes]:
        found = await blob_store.find(self.db, check_key(key))
        if found is None:
            if self.legacy is None or not await self.legacy.exists(key):
                raise ContentMissing(f"file content {key} is not in the database")
            async for chunk in self._import(key):
                yield chunk
            return
        for seq in range(found["chunks"]):
            data = await blob_store.chunk(self.db, key, seq)
            if data is None:  # deleted while being read
                raise ContentMissing(f"file content {key} was removed while it was read")
            yield data

    async def _import(self, key: str) -> AsyncIterator[bytes]:
        """A blob of the folder files were kept in before: copied into the database, then read."""
        assert self.legacy is not None
        path = self.legacy.path(key)
        with await asyncio.to_thread(open, path, "rb") as handle:
            size = (await asyncio.to_thread(os.fstat, handle.fileno())).st_size
            await self.put(key, size, handle)
            await asyncio.to_thread(handle.seek, 0)
            while chunk := await asyncio.to_thread(handle.read, CHUNK):
                yield chunk

    async def exists(self, key: str) -> bool:
        return await blob_store.find(self.db, check_key(key)) is not None

    async def remove_if_unreferenced(self, key: str, referenced: Referenced) -> bool:
        if await referenced():
            return False
        async with self.db.transaction() as tx:
            if not await blob_store.lock(tx, key):
                return False
            # Asked after the lock: a row committed before it is seen; an adder committing
            # after it finds the blob gone in `commit` and puts it back.
            if await referenced():
                return False
            await blob_store.delete(tx, key)
        return True

    async def keys(self) -> list[str]:
        return await blob_store.keys(self.db)


def location(database_url: str, data_dir: Path, files_dir: Path | None) -> str:
    """Where `open_file_store` keeps content, for people: an absolute folder, or the database."""
    if files_dir is not None:
        return str(files_dir.resolve())
    if dialect_of(database_url) == "postgresql":
        return "the database"
    return str(root(data_dir).resolve())


def open_file_store(db: Database, clock: Clock, data_dir: Path, files_dir: Path | None) -> FileStore:
    """A shared folder when one is configured; else the database on PostgreSQL (reading what an
    older version kept in `<data dir>/files`), the data folder's `files` on SQLite."""
    if files_dir is not None:
        return LocalFileStore(files_dir)
    if db.dialect == "postgresql":
        return DatabaseFileStore(db, clock, legacy=LocalFileStore(root(data_dir)))
    return LocalFileStore(root(data_dir))


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


def _copy_hashing(source: BinaryIO | _ChunksOf, out: BinaryIO, max_bytes: int) -> tuple[str, int]:
    """Copy `source` from its start into `out`; its digest and size."""
    digest = hashlib.sha256()
    size = 0
    if hasattr(source, "seek"):
        source.seek(0)
    while chunk := source.read(CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise TooLarge(f"the content is larger than {max_bytes} bytes")
        digest.update(chunk)
        out.write(chunk)
    return digest.hexdigest(), size


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
