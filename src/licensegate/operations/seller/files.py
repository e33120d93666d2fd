"""Seller API — Files: content the application's clients download (the client API's Download
File), uploaded here or fetched from a URL through the guarded outbound module."""

from __future__ import annotations

from typing import Any

from licensegate.domain import errorcodes, files
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Files"
AREA: Area = "files"
FILE_ID = Param("id", required=True, max_length=16, aliases=("fileid",), doc="the file's id (8 digits)")
NAME = Param("name", max_length=files.MAX_NAME, doc="file name (at most 64 characters)")
AUTHED_DOC = "1: only a logged-in client session may download it; 0: any client may"
URL = Param(
    "url",
    max_length=2048,
    secret=True,  # a download URL may carry credentials
    doc="an http(s) URL the file is fetched from now (internal addresses are refused)",
)
FILE_FIELDS = (
    "{id, name, size (bytes), authed (0/1), url (or null), created (Unix s), downloads (how many "
    "times programs downloaded it), downloaded (Unix s of the latest, or null)}"
)


@registry.operation(
    "upload",
    group=GROUP,
    summary="Add File",
    area=AREA,
    mutates=True,
    uploads=("file",),
    params=[
        NAME,
        Param("authed", "bool", max_length=5, doc=AUTHED_DOC + " (default 1)"),
        URL,
    ],
    returns={
        "message": "`File ID <id> Uploaded Successfully`",
        "id": "the new file's id (8 digits)",
        "name": "its name",
        "size": "its size in bytes",
    },
)
async def upload(call: SellerCall) -> dict[str, Any]:
    """Add a file: either upload it as the multipart/form-data field `file`, or give `url` to
    have the service fetch it now (the URL is kept with the file). With an upload, `sellerkey`
    must be in the query string: the key (and its `files` area) is checked before the body is
    read, so a refused upload costs the service nothing. Without `name`, the name is
    the uploaded file's name or the last segment of the URL's path. Larger than the upload limit
    (50 MiB by default): 400 `file_too_large`; a URL that is refused or cannot be fetched: 400
    with the outbound error code (`target_not_allowed`, `timeout`, `url_fetch_failed`, ...)."""
    settings = call.services.settings
    sent = call.uploads.get("file")
    url = call.args.opt_text("url")
    if sent is not None and url is not None:
        raise errorcodes.FILE_AND_URL()
    name = call.args.opt_text("name")
    authed = call.args.flag("authed", default=True)
    if sent is not None:
        added = await files.add_upload(
            settings,
            call.services.files,
            call.db,
            call.app_id,
            source=sent.file,
            filename=sent.filename,
            name=name,
            authed=authed,
            now=call.now(),
        )
    elif url is not None:
        added = await files.add_from_url(
            settings,
            call.services.files,
            call.db,
            call.app_id,
            url=url,
            name=name,
            authed=authed,
            now=call.now(),
        )
    else:
        raise errorcodes.MISSING_PARAMETER(
            "Send the file as the multipart/form-data field 'file', or give 'url'."
        )
    call.record(f"file:{added.file_id}", before=None, after=files.audit_view(added))
    return {
        "message": f"File ID {added.file_id} Uploaded Successfully",
        "id": added.file_id,
        "name": added.name,
        "size": added.size,
    }


@registry.operation(
    "fetchallfiles",
    group=GROUP,
    summary="Get All Files",
    area=AREA,
    params=[PAGE, LIMIT],
    returns={"files": f"[{FILE_FIELDS}], oldest first", "count": "total number of files (all pages)"},
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """The application's files, a page at a time (an empty list when there are none)."""
    limit, offset = paging(call.args)
    rows, total = await files.list_page(call.db, call.app_id, limit=limit, offset=offset)
    return {
        "message": "Successfully retrieved files",
        "files": [file_entry(row) for row in rows],
        "count": total,
    }


def file_entry(row: files.FileRow) -> dict[str, Any]:
    """A file as the seller API shows it."""
    return {
        "id": row["file_id"],
        "name": row["name"],
        "size": int(row["size"] or 0),
        "authed": 1 if row["authed"] else 0,
        "url": row["url"],
        "created": row["created_at"],
        "downloads": int(row["downloads"] or 0),
        "downloaded": row["downloaded_at"],
    }


@registry.operation(
    "fetchfile",
    group=GROUP,
    summary="Get File",
    area=AREA,
    params=[FILE_ID],
    returns={"file": FILE_FIELDS},
)
async def fetch_one(call: SellerCall) -> dict[str, Any]:
    """One file's details."""
    row = await files.get(call.db, call.app_id, call.args.text("id"))
    return {"message": "Successfully retrieved file", "file": file_entry(row)}


@registry.operation(
    "editfile",
    group=GROUP,
    summary="Edit File",
    area=AREA,
    mutates=True,
    uploads=("file",),
    params=[
        FILE_ID,
        NAME,
        Param("authed", "bool", max_length=5, doc=AUTHED_DOC + " (omitted: unchanged)"),
        URL,
    ],
    returns={"file": FILE_FIELDS + ", as changed"},
)
async def edit(call: SellerCall) -> dict[str, Any]:
    """Rename a file, change its `authed` flag, and/or replace its content, keeping its id: give
    a new `url` (fetched now; the URL is kept with the file), or upload the new content as the
    multipart/form-data field `file` (with `sellerkey` in the query string, as for Add File; the
    file then has no URL). At least one change must be given; a file and a URL together: 400
    `file_and_url`; larger than the upload limit: 400 `file_too_large`."""
    sent = call.uploads.get("file")
    before, after = await files.edit(
        call.services.settings,
        call.services.files,
        call.db,
        call.app_id,
        call.args.text("id"),
        name=call.args.opt_text("name"),
        authed=call.args.opt_flag("authed"),
        url=call.args.opt_text("url"),
        now=call.now(),
        source=sent.file if sent is not None else None,
    )
    call.record(f"file:{after['file_id']}", before=files.audit_view(before), after=files.audit_view(after))
    return {"message": "Successfully edited file!", "file": file_entry(after)}


@registry.operation(
    "delfile",
    group=GROUP,
    summary="Delete File",
    area=AREA,
    mutates=True,
    params=[FILE_ID],
    returns={"message": "`Successfully deleted file!`"},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete one file. Its stored content goes too, unless another file has the same content."""
    before = await files.delete(call.services.files, call.db, call.app_id, call.args.text("id"))
    call.record(f"file:{before['file_id']}", before=files.audit_view(before), after=None)
    return {"message": "Successfully deleted file!"}


@registry.operation(
    "delallfiles",
    group=GROUP,
    summary="Delete All Files",
    area=AREA,
    mutates=True,
    returns={"deleted": "how many files were deleted"},
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every file of the application."""
    deleted = await files.delete_all(call.services.files, call.db, call.app_id)
    call.record("files:all", before={"count": deleted}, after={"count": 0})
    return {"message": "Successfully deleted all files!", "deleted": deleted}
