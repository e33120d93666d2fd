"""Files: what the application's programs download (the client API's Download File). Listed with
name, id, size, SHA-256 and who may download each, searched by name, sorted by when added, name
or size, keyset paged; uploaded from the browser (a progress bar with script, a plain form
without) or fetched from a URL (through the outbound rules: internal addresses are refused);
each one's page downloads it, renames it, changes who may download it, replaces its content
(same id, so programs keep asking for it) and deletes it; every file deleted at once, confirmed.
Files larger than what the client API sends (`client_file_bytes`) are flagged. Every change runs
the seller operation of the same effect (`upload`, `editfile`, `delfile`, `delallfiles`)."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from licensegate.domain import errorcodes, files, filestore
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.operations.seller import Upload
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import Column, Filter, ListSpec
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.templating import counted, size
from licensegate.web.visit import Visit, error_page, page

log = logging.getLogger("licensegate.web")

SLUG = "files"
AREA: Area = "files"  # the seller API's Files operations
register(Section("Files", SLUG, AREA))

SPEC = ListSpec(
    columns=(
        Column("name", "Name", sortable=True),
        Column("file_id", "ID"),
        Column("size", "Size", sortable=True, numeric=True),
        Column("checksum", "SHA-256"),
        Column("authed", "Access"),
        Column("downloads", "Downloads", numeric=True),
        Column("created", "Added", sortable=True),
    ),
    filters=(Filter("search", "Name", "search", placeholder="Part of a name", max_length=files.MAX_NAME),),
    default_sort="created",
    empty_text="No files yet. Upload one below, or give a URL to fetch it from.",
)
UPLOAD_OVERHEAD = 64 * 1024  # the multipart boundaries and text fields around an upload
FILE_ID_MAX = 16
# Where a refusal is shown: parameter names and error codes -> form fields.
UPLOAD_FIELDS = {"name": "name", "invalid_name": "name", "file": "file", "file_too_large": "file"}
URL_FIELDS = {"name": "url_name", "invalid_name": "url_name", "url": "url"}
RENAME_FIELDS = {"name": "name", "invalid_name": "name"}
TOO_LARGE = ("file_too_large", "request_too_large")
UNSAFE_IN_FILENAME = re.compile(r"[^A-Za-z0-9._ ()+-]")


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


def _file_id(visit: Visit) -> str:
    file_id = str(visit.request.path_params["file_id"])
    if len(file_id) > FILE_ID_MAX or not file_id.isdigit() or not file_id.isascii():
        raise errorcodes.FILE_NOT_FOUND(file_id=file_id[:FILE_ID_MAX])
    return file_id


def _limits(visit: Visit) -> dict[str, int]:
    settings = visit.services.settings
    return {"upload": settings.max_upload_bytes, "client": settings.client_file_bytes}


def _status(refusal: Refusal) -> int:
    """413 for a file over the upload limit (the status a browser and a proxy understand)."""
    return 413 if refusal.error in TOO_LARGE else seller.status_of(refusal)


def _shown(row: dict[str, Any], client_limit: int) -> dict[str, Any]:
    """A file as the pages show it: never its URL (it may carry credentials), only its host."""
    return {
        **row,
        "size": int(row["size"] or 0),
        "checksum": row["storage_key"] or "",
        "source_host": files.url_host(row["url"]),
        "too_large": int(row["size"] or 0) > client_limit,
    }


# --- the list ---------------------------------------------------------------------------------


async def list_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    db = visit.services.db
    limits = _limits(visit)
    view = SPEC.read(visit.request.query_params)
    found = await files.browse(db, app.id, name=view.values.get("search"), request=view.request)
    found.rows[:] = [_shown(row, limits["client"]) for row in found.rows]
    total = await files.count(db, app.id)
    form = visit.form
    return visit.render(
        "files/list.html",
        status=status,
        title=f"Files · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(SLUG), found, None),
        path=app.path(SLUG),
        total=total,
        too_large=await files.count_larger(db, app.id, limits["client"]),
        limits=limits,
        errors=errors,
        form={
            "name": form.get("name"),
            "url": form.get("url"),
            "url_name": form.get("url_name"),
            # a new file is for logged-in users unless the form said otherwise
            "authed": form.flag("authed") if "csrf" in form else True,
        },
    )


def _added(visit: Visit, app: AppPage, body: dict[str, Any]) -> Response:
    visit.flash(f"{body['name']} is added as file {body['id']} ({size(int(body['size']))}).")
    _warn_if_too_large(visit, int(body["size"]))
    return visit.redirect(app.path(SLUG))


def _warn_if_too_large(visit: Visit, file_size: int) -> None:
    limit = visit.services.settings.client_file_bytes
    if file_size > limit:
        visit.flash(
            f"Programs cannot download it: it is larger than the {size(limit)} the client API sends.",
            "warning",
        )


async def _read_upload(visit: Visit) -> Upload | None:
    """The file an upload form sent (None when none was chosen); over the limit: `file_too_large`
    before the body is read."""
    limit = visit.services.settings.max_upload_bytes
    try:
        form = await visit.read_upload(limit + UPLOAD_OVERHEAD)
    except Refusal as refusal:
        if refusal.error == "request_too_large":
            raise files.too_large(limit) from refusal
        raise
    sent = form.files.get("file")
    if sent is None or not sent.filename:
        return None
    return Upload(sent.filename, sent.file)


async def _close_uploads(visit: Visit) -> None:
    for sent in visit.form.files.values():
        await sent.close()


async def upload(visit: Visit) -> Response:
    app = await _open(visit)  # who may upload, before the body is read
    try:
        try:
            sent = await _read_upload(visit)
            if sent is None:
                raise errorcodes.MISSING_PARAMETER(name="file", param="file")
            form = visit.form
            params = {"authed": "1" if form.flag("authed") else "0"}
            if form.get("name").strip():
                params["name"] = form.get("name").strip()
            body = await seller.run(visit, app, "upload", params, uploads={"file": sent})
        finally:
            await _close_uploads(visit)
    except Refusal as refusal:
        errors = seller.field_error(refusal, UPLOAD_FIELDS, default="file")
        if refusal.error == "missing_parameter":
            errors = {"file": "Choose a file to upload."}
        return await list_page(visit, Shown(app, errors, _status(refusal)))
    return _added(visit, app, body)


async def fetch(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    url = form.get("url").strip()
    params = {"url": url, "authed": "1" if form.flag("authed") else "0"}
    if form.get("url_name").strip():
        params["name"] = form.get("url_name").strip()
    try:
        if not url:
            raise errorcodes.MISSING_PARAMETER(name="url", param="url")
        body = await seller.run(visit, app, "upload", params)
    except Refusal as refusal:
        errors = seller.field_error(refusal, URL_FIELDS, default="url")
        return await list_page(visit, Shown(app, errors, _status(refusal)))
    return _added(visit, app, body)


async def delete_all(visit: Visit) -> Response:
    app = await _open(visit)
    total = await files.count(visit.services.db, app.id)
    ask = Question(
        title="Delete every file?",
        message=f"All {total:,} file{'' if total == 1 else 's'} of the application are deleted; "
        "programs asking for them get file_not_found. This cannot be undone.",
        button="Delete every file",
    )
    return await seller.act(
        visit,
        app,
        "delallfiles",
        {},
        done=lambda body: f"Every file is deleted ({counted(int(body.get('deleted', 0)), 'file')}).",
        back=app.path(SLUG),
        ask=ask,
    )


# --- one file -----------------------------------------------------------------------------------


async def detail_page(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    limits = _limits(visit)
    row = _shown(dict(await files.get(visit.services.db, app.id, _file_id(visit))), limits["client"])
    form = visit.form
    return visit.render(
        "files/detail.html",
        status=status,
        title=f"{row['name']} · Files · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        path=app.path(SLUG),
        here=app.path(f"{SLUG}/{row['file_id']}"),
        file=row,
        limits=limits,
        errors=errors,
        form={"name": form.get("name") if "name" in form else row["name"], "url": form.get("url")},
    )


async def _edit(visit: Visit, app: AppPage, file_id: str, params: dict[str, str], **kwargs: Any) -> Any:
    return await seller.run(visit, app, "editfile", {"id": file_id, **params}, **kwargs)


async def rename(visit: Visit) -> Response:
    app = await _open(visit)
    file_id = _file_id(visit)
    name = visit.form.get("name").strip()
    try:
        if not name:
            raise errorcodes.MISSING_PARAMETER(name="name", param="name")
        await _edit(visit, app, file_id, {"name": name})
    except Refusal as refusal:
        return await detail_page(visit, seller.refused(app, refusal, RENAME_FIELDS, default="name"))
    visit.flash(f"File {file_id} is now named {name}.")
    return visit.redirect(app.path(f"{SLUG}/{file_id}"))


async def set_authed(visit: Visit) -> Response:
    app = await _open(visit)
    file_id = _file_id(visit)
    authed = visit.form.flag("authed")
    back = app.path(f"{SLUG}/{file_id}") if visit.form.get("back") == "file" else app.path(SLUG)
    try:
        body = await _edit(visit, app, file_id, {"authed": "1" if authed else "0"})
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(back)
    who = "logged-in users only" if authed else "any program, logged in or not"
    visit.flash(f"{body['file']['name']} can now be downloaded by {who}.")
    return visit.redirect(back)


async def replace(visit: Visit) -> Response:
    app = await _open(visit)
    file_id = _file_id(visit)
    try:
        try:
            sent = await _read_upload(visit)
            if sent is None:
                raise errorcodes.MISSING_PARAMETER(name="file", param="file")
            body = await _edit(visit, app, file_id, {}, uploads={"file": sent})
        finally:
            await _close_uploads(visit)
    except Refusal as refusal:
        if refusal.error == "file_not_found":
            raise
        errors = seller.field_error(refusal, {}, default="file")
        if refusal.error == "missing_parameter":
            errors = {"file": "Choose the file with the new content."}
        return await detail_page(visit, Shown(app, errors, _status(refusal)))
    return _replaced(visit, app, body)


async def refetch(visit: Visit) -> Response:
    app = await _open(visit)
    file_id = _file_id(visit)
    url = visit.form.get("url").strip()
    try:
        if not url:
            raise errorcodes.MISSING_PARAMETER(name="url", param="url")
        body = await _edit(visit, app, file_id, {"url": url})
    except Refusal as refusal:
        if refusal.error == "file_not_found":
            raise
        errors = seller.field_error(refusal, {}, default="url")
        return await detail_page(visit, Shown(app, errors, _status(refusal)))
    return _replaced(visit, app, body)


def _replaced(visit: Visit, app: AppPage, body: dict[str, Any]) -> Response:
    changed = body["file"]
    visit.flash(f"The content of {changed['name']} is replaced ({size(int(changed['size']))}); its id stays.")
    _warn_if_too_large(visit, int(changed["size"]))
    return visit.redirect(app.path(f"{SLUG}/{changed['id']}"))


async def download(visit: Visit) -> Response:
    """The file's content as programs get it, saved by the browser under the file's name (so a
    seller can check what was uploaded or fetched against the checksum)."""
    app = await _open(visit)
    services = visit.services
    row, chunks = await files.read_content(
        services.settings, services.files, services.db, app.id, _file_id(visit)
    )
    reading = aiter(chunks)
    try:  # the first chunk before the answer starts: missing content is a page, not a cut download
        first = await anext(reading, b"")
    except filestore.ContentMissing:
        log.error("file %s of application %d has no stored content", row["file_id"], app.id)
        return error_page(visit, 404, "Not found", "The content of this file is missing from storage.")

    async def body() -> AsyncIterator[bytes]:
        yield first
        async for chunk in reading:
            yield chunk

    name = row["name"]
    fallback = UNSAFE_IN_FILENAME.sub("_", name) or "file"
    disposition = f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
    return visit.finish(
        StreamingResponse(
            body(), media_type="application/octet-stream", headers={"content-disposition": disposition}
        )
    )


async def delete(visit: Visit) -> Response:
    app = await _open(visit)
    file_id = _file_id(visit)
    name = (await files.get(visit.services.db, app.id, file_id))["name"]
    ask = Question(
        title=f"Delete the file {name}?",
        message="Programs asking for it get file_not_found. This cannot be undone.",
        button="Delete the file",
    )
    done = f"The file {name} is deleted."
    return await seller.act(visit, app, "delfile", {"id": file_id}, done=done, back=app.path(SLUG), ask=ask)


BASE = "/apps/{app_id:int}/" + SLUG
ONE = BASE + "/{file_id}"
ROUTES = [
    Route(BASE, page(list_page), methods=["GET"]),
    Route(BASE + "/upload", page(upload, upload=True), methods=["POST"]),
    Route(BASE + "/fetch", page(fetch), methods=["POST"]),
    Route(BASE + "/delete-all", page(delete_all), methods=["POST"]),
    Route(ONE, page(detail_page), methods=["GET"]),
    Route(ONE + "/download", page(download), methods=["GET"]),
    Route(ONE + "/rename", page(rename), methods=["POST"]),
    Route(ONE + "/authed", page(set_authed), methods=["POST"]),
    Route(ONE + "/replace", page(replace, upload=True), methods=["POST"]),
    Route(ONE + "/refetch", page(refetch), methods=["POST"]),
    Route(ONE + "/delete", page(delete), methods=["POST"]),
]
