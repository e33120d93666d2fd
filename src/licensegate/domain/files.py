"""Files an application offers its clients (the client API's Download File).

Content is uploaded, or fetched from a URL through the guarded outbound module when the file is
added (and again when its URL is edited, or when stored content has gone missing), and kept in
the content-addressed file store. Each file has a public id of 8 random digits, unique in its
application.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, BinaryIO

import httpx

from licensegate import outbound
from licensegate.config import Settings
from licensegate.domain import errorcodes, filestore
from licensegate.domain.errors import Refusal
from licensegate.domain.filestore import FileStore
from licensegate.store import files as store
from licensegate.store.database import Database, Executor, UniqueViolation
from licensegate.store.files import FileRow as FileRow  # the rows it returns
from licensegate.store.paging import Page, PageRequest, finish

MAX_NAME = 64
FILE_ID_DIGITS = 8
ID_ATTEMPTS = 20  # 8 digits leave a collision unlikely; retrying a few times makes it vanish
DEFAULT_NAME = "file"


@dataclass(frozen=True, slots=True)
class Added:
    file_id: str
    name: str
    size: int
    authed: bool
    url: str | None


def new_file_id() -> str:
    return f"{secrets.randbelow(10**FILE_ID_DIGITS):0{FILE_ID_DIGITS}d}"


def audit_view(row: FileRow | Added) -> dict[str, Any]:
    """What the audit log keeps of a file: never the URL (it may carry credentials), only its host."""
    size: int | None
    if isinstance(row, Added):
        name, size, authed, url = row.name, row.size, row.authed, row.url
    else:
        name, size, authed, url = row["name"], row["size"], bool(row["authed"]), row["url"]
    return {"name": name, "size": size, "authed": 1 if authed else 0, "url_host": url_host(url)}


def check_name(name: str) -> str:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise errorcodes.INVALID_NAME("A file name must not contain control characters.")
    return name


def derived_name(raw: str | None) -> str:
    """A name from an uploaded file name or a URL path: its last segment, cleaned and cut to
    MAX_NAME characters (keeping the extension)."""
    text = (raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(ch for ch in text if ord(ch) >= 32 and ord(ch) != 127).strip()
    if not text:
        return DEFAULT_NAME
    if len(text) > MAX_NAME:
        suffix = PurePosixPath(text).suffix
        suffix = suffix if len(suffix) <= 16 else ""
        text = text[: MAX_NAME - len(suffix)] + suffix
    return text


def _limit_text(max_bytes: int) -> str:
    mib = max_bytes / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{max_bytes} bytes"


def too_large(max_bytes: int) -> Refusal:
    return errorcodes.FILE_TOO_LARGE(limit=_limit_text(max_bytes))


def url_host(url: str | None) -> str | None:
    """The host of a URL (what the dashboard and the audit log show of a file's source)."""
    if not url:
        return None
    try:
        return httpx.URL(url).host or None
    except (httpx.InvalidURL, ValueError, UnicodeError):
        return None


async def get(db: Executor, app_id: int, file_id: str) -> FileRow:
    row = await store.find(db, app_id, file_id)
    if row is None:
        raise errorcodes.FILE_NOT_FOUND(file_id=file_id)
    return row


async def list_page(db: Executor, app_id: int, *, limit: int, offset: int) -> tuple[list[FileRow], int]:
    rows = await store.page(db, app_id, limit=limit, offset=offset)
    return rows, await store.count(db, app_id)


async def browse(db: Executor, app_id: int, *, name: str | None, request: PageRequest) -> Page:
    """One keyset page of the application's files (the dashboard's list), by name when set."""
    rows = await store.browse(db, app_id, name=name, request=request)
    return finish([dict(row) for row in rows], request)


async def count(db: Executor, app_id: int) -> int:
    return await store.count(db, app_id)


async def count_larger(db: Executor, app_id: int, size: int) -> int:
    """How many files are larger than `size` bytes (those the client API will not send)."""
    return await store.count_larger(db, app_id, size)


# --- adding ----------------------------------------------------------------------------------


async def add_upload(
    settings: Settings,
    content: FileStore,
    db: Database,
    app_id: int,
    *,
    source: BinaryIO,
    filename: str | None,
    name: str | None,
    authed: bool,
    now: int,
) -> Added:
    """Store an uploaded file (already spooled by the request parser)."""
    final_name = check_name(name) if name else derived_name(filename)
    try:
        staged = await content.stage_file(source, settings.max_upload_bytes)
    except filestore.TooLarge as exc:
        raise too_large(settings.max_upload_bytes) from exc
    return await _add(content, db, app_id, staged, final_name, None, authed, now)


async def add_from_url(
    settings: Settings,
    content: FileStore,
    db: Database,
    app_id: int,
    *,
    url: str,
    name: str | None,
    authed: bool,
    now: int,
) -> Added:
    """Fetch a URL now and store what it answers; the URL is kept with the file."""
    try:
        path = outbound.parse_url(url).path
    except outbound.OutboundError as exc:
        raise errorcodes.by_code(exc.error)(f"The file cannot be fetched: {exc.message}") from exc
    final_name = check_name(name) if name else derived_name(path)
    staged = await _fetch(settings, content, url, settings.max_upload_bytes)
    return await _add(content, db, app_id, staged, final_name, url, authed, now)


async def add_fetched_as(
    settings: Settings,
    content: FileStore,
    db: Database,
    app_id: int,
    *,
    file_id: str,
    url: str,
    name: str | None,
    authed: bool,
    now: int,
) -> Added | None:
    """Fetch a URL and store it under a file id the clients already know (a file moved from
    another service keeps its id); None when the application has that id already."""
    staged = await _fetch(settings, content, url, settings.max_upload_bytes)
    final_name = check_name(name) if name else derived_name(outbound.parse_url(url).path)
    try:
        return await _add(content, db, app_id, staged, final_name, url, authed, now, file_id=file_id)
    except FileIdTaken:
        return None


class FileIdTaken(Exception):
    """The application has a file with the id asked for already."""


async def _fetch(settings: Settings, content: FileStore, url: str, limit: int) -> filestore.Staged:
    """Fetch the URL's content into staging, streamed through a temporary file (never whole in
    memory); `file_too_large` past `limit`."""
    with tempfile.TemporaryFile() as spool:
        try:
            reply = await outbound.request(settings, "GET", url, max_bytes=limit, sink=spool)
        except outbound.OutboundError as exc:
            if exc.error == "response_too_large":
                raise too_large(limit) from exc
            raise errorcodes.by_code(exc.error)(f"The file cannot be fetched: {exc.message}") from exc
        if not reply.ok:
            raise errorcodes.URL_FETCH_FAILED(status=reply.status)
        try:
            return await content.stage_file(spool, limit)
        except filestore.TooLarge as exc:
            raise too_large(limit) from exc


async def _add(
    content: FileStore,
    db: Database,
    app_id: int,
    staged: filestore.Staged,
    name: str,
    url: str | None,
    authed: bool,
    now: int,
    *,
    file_id: str | None = None,
) -> Added:
    """Store the staged content as a file: under `file_id` (FileIdTaken when the application
    has it), or under a new random id."""
    inserted = False
    try:
        await staged.publish()  # present before any row refers to it
        for _ in range(ID_ATTEMPTS if file_id is None else 1):
            row_file_id = file_id or new_file_id()
            try:
                await store.insert(
                    db,
                    app_id=app_id,
                    file_id=row_file_id,
                    name=name,
                    url=url,
                    storage_key=staged.key,
                    size=staged.size,
                    authed=authed,
                    now=now,
                )
            except UniqueViolation:
                if file_id is not None:
                    raise FileIdTaken(file_id) from None
                continue
            inserted = True
            break
        else:
            raise RuntimeError("no free file id after several attempts")
        await staged.commit()  # restores the blob if a concurrent delete took it meanwhile
    finally:
        if not inserted:
            await staged.discard()
            await _release(content, db, staged.key)
    return Added(file_id=row_file_id, name=name, size=staged.size, authed=authed, url=url)


# --- changing and deleting -------------------------------------------------------------------


async def edit(
    settings: Settings,
    content: FileStore,
    db: Database,
    app_id: int,
    file_id: str,
    *,
    name: str | None,
    authed: bool | None,
    url: str | None,
    now: int,
    source: BinaryIO | None = None,
) -> tuple[FileRow, FileRow]:
    """Rename, change `authed`, and/or replace the content: from a new URL (fetched now, and
    kept with the file) or from an upload `source` (the file then has no URL). The id stays, so
    programs keep asking for the same file. Returns the row before and after."""
    if name is None and authed is None and url is None and source is None:
        raise errorcodes.NOTHING_TO_CHANGE()
    if url is not None and source is not None:
        raise errorcodes.FILE_AND_URL()
    if name is not None:
        check_name(name)
    await get(db, app_id, file_id)  # an unknown id is refused before anything is fetched
    staged: filestore.Staged | None = None
    if url is not None:
        staged = await _fetch(settings, content, url, settings.max_upload_bytes)
    elif source is not None:
        try:
            staged = await content.stage_file(source, settings.max_upload_bytes)
        except filestore.TooLarge as exc:
            raise too_large(settings.max_upload_bytes) from exc
    committed = False
    try:
        if staged is not None:
            await staged.publish()
        async with db.transaction() as tx:
            before = await get(tx, app_id, file_id)
            await store.update_details(
                tx,
                app_id,
                file_id,
                name=before["name"] if name is None else name,
                authed=bool(before["authed"]) if authed is None else authed,
                now=now,
            )
            if staged is not None:
                await store.replace_content(
                    tx, before["id"], url=url, storage_key=staged.key, size=staged.size, now=now
                )
            after = await get(tx, app_id, file_id)
        committed = True
        if staged is not None:
            await staged.commit()
    finally:
        if staged is not None and not committed:
            await staged.discard()
            await _release(content, db, staged.key)
    old_key = before["storage_key"]
    if staged is not None and old_key and old_key != staged.key:
        await _release(content, db, old_key)
    return before, after


async def delete(content: FileStore, db: Database, app_id: int, file_id: str) -> FileRow:
    """Delete one file; its content goes too unless another file has the same content."""
    before = await get(db, app_id, file_id)
    deleted = await store.delete(db, app_id, file_id)
    if not deleted:
        raise errorcodes.FILE_NOT_FOUND(file_id=file_id)
    key = deleted[0]["storage_key"]
    if key:
        await _release(content, db, key)
    return before


async def delete_all(content: FileStore, db: Database, app_id: int) -> int:
    deleted = await store.delete_all(db, app_id)
    for key in sorted({row["storage_key"] for row in deleted if row["storage_key"]}):
        await _release(content, db, key)
    return len(deleted)


async def storage_keys(db: Executor, app_id: int) -> list[str]:
    """The content the application's files use (read before the application is deleted)."""
    return await store.storage_keys(db, app_id)


async def release(content: FileStore, db: Database, keys: list[str]) -> None:
    """Remove the content of these keys that no file (of any application) uses any more."""
    for key in keys:
        await _release(content, db, key)


async def _release(content: FileStore, db: Database, key: str) -> None:
    async def referenced() -> bool:
        return await store.is_referenced(db, key)

    await content.remove_if_unreferenced(key, referenced)


# --- reading (the client API's Download File) ------------------------------------------------


async def note_download(db: Executor, row_id: int, now: int) -> None:
    """Count one download the client API served (the dashboard shows the count and the time)."""
    await store.count_download(db, row_id, now)


async def read_content(
    settings: Settings,
    content: FileStore,
    db: Database,
    app_id: int,
    file_id: str,
    *,
    max_bytes: int | None = None,
) -> tuple[FileRow, AsyncIterator[bytes]]:
    """The file's row and its bytes, a chunk at a time. Raises NotFound (`file_not_found`) for an
    unknown id and Invalid (`file_too_large`) when the file is larger than `max_bytes`. A file
    added by URL whose stored content has gone missing is fetched again (through the outbound
    rules) and stored again."""
    row = await get(db, app_id, file_id)
    if max_bytes is not None and int(row["size"] or 0) > max_bytes:
        raise too_large(max_bytes)
    key = row["storage_key"]
    if key and (await content.exists(key) or not row["url"]):
        return row, content.chunks(key)
    if not row["url"]:
        raise filestore.ContentMissing(f"file {file_id} of application {app_id} has no content")
    limit = settings.max_upload_bytes if max_bytes is None else max_bytes
    staged = await _fetch(settings, content, row["url"], limit)
    changed = 0
    try:
        await staged.publish()
        changed = await store.replace_content(
            db, row["id"], url=row["url"], storage_key=staged.key, size=staged.size, now=row["updated_at"]
        )
        if changed:
            await staged.commit()
    finally:
        if not changed:  # the file was deleted meanwhile
            await staged.discard()
    if not changed:
        await _release(content, db, staged.key)
        raise errorcodes.FILE_NOT_FOUND(file_id=file_id)
    return await get(db, app_id, file_id), content.chunks(staged.key)
