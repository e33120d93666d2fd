"""Applications: "Import from KeyAuth". An owner gives a seller key, the dashboard's export files
or a database dump (within the upload limit); the source is read as background work
(`domain/keyauthimport/jobs.py`) whose progress this page shows, on any worker and after a reload;
then the dry-run report (what will be imported, what already exists, what is lost), and only
after the owner confirms it, the import, recorded in each imported application's audit log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile
from starlette.responses import Response
from starlette.routing import Route

from licensegate import private
from licensegate.domain import apps, audit, errorcodes
from licensegate.domain.errors import Refusal
from licensegate.domain.keyauthimport import jobs, records, writer
from licensegate.domain.keyauthimport.pacing import DEFAULT_PACE, parse_pace
from licensegate.domain.keyauthimport.sellerread import DEFAULT_URL
from licensegate.web.visit import Denied, Visit, page

PATH = "/dashboard/apps/import-keyauth"
UPLOAD_OVERHEAD = 64 * 1024  # multipart boundaries and the text fields around the files
CHUNK = 256 * 1024
SOURCES = ("seller", "files", "dump")
REFRESH = 2  # seconds between looks at a running import's progress


def context(visit: Visit) -> jobs.Context:
    services = visit.services
    owner = visit.account.username

    async def write(source: records.Source, dry_run: bool, say: Callable[[str], None]) -> dict[str, Any]:
        env = writer.Env(
            db=services.db,
            box=services.secrets,
            passwords=services.passwords,
            settings=services.settings,
            content=services.files,
            now=services.clock.now(),
        )
        options = writer.Options(owner=owner, with_logs=True, dry_run=dry_run)
        return writer.report_json(await writer.import_all(env, source, options, say), dry_run)

    return jobs.Context(
        settings=services.settings,
        db=services.db,
        secrets=services.secrets,
        clock=services.clock,
        background=services.background,
        writer=write,
        refused=(writer.ImportRefused,),
    )


def _owner(visit: Visit) -> None:
    if not visit.account.is_owner:
        raise Denied("Only an owner account imports applications.")


def _form(
    visit: Visit, *, error: str = "", errors: dict[str, str] | None = None, status: int = 200
) -> Response:
    form = visit.form
    return visit.render(
        "apps/keyauth_import.html",
        status=status,
        title="Import from KeyAuth",
        error=error,
        errors=errors or {},
        source=form.get("source", "seller") if form is not None else "seller",
        values={
            name: form.get(name)
            for name in ("sellerkey", "from", "pace", "name", "ownerid", "version", "subscriptions", "app")
        }
        if form is not None
        else {},
        default_url=DEFAULT_URL,
        default_pace=DEFAULT_PACE,
        max_bytes=visit.services.settings.max_upload_bytes,
    )


async def form_page(visit: Visit) -> Response:
    _owner(visit)
    return _form(visit)


async def _save(upload: UploadFile | None, target: Path) -> bool:
    """The upload written owner-only to `target` (False when no file was chosen)."""
    if upload is None or not upload.filename:
        return False
    with private.create(target) as out:
        while chunk := await upload.read(CHUNK):
            out.write(chunk)
    return True


def _subscriptions(text: str) -> list[tuple[str, str]]:
    """`NAME=LEVEL` a line (or comma-separated); KeyAuth's `default=1` when empty."""
    found: list[tuple[str, str]] = []
    for part in text.replace(",", "\n").splitlines():
        if not part.strip():
            continue
        name, equals, level = part.partition("=")
        if not equals or not name.strip() or not level.strip():
            raise errorcodes.INVALID_FORM(
                f"Write each subscription as NAME=LEVEL, not '{part.strip()[:40]}'."
            )
        found.append((name.strip()[:49], level.strip()[:12]))
    return found or [("default", "1")]


async def start(visit: Visit) -> Response:
    _owner(visit)  # before the body is read
    limit = visit.services.settings.max_upload_bytes
    try:
        form = await visit.read_upload(limit + UPLOAD_OVERHEAD, files=2)  # the two export files
    except Refusal as refusal:
        message = refusal.message
        if refusal.error == "request_too_large":
            message = f"The files are larger than the upload limit ({limit // (1024 * 1024)} MiB)."
        return _form(visit, error=message, status=413 if refusal.error == "request_too_large" else 400)
    try:
        return await _start(visit, form.get("source"))
    except Refusal as refusal:
        return _form(visit, error=refusal.message, status=400)
    finally:
        for sent in form.files.values():
            await sent.close()


async def _start(visit: Visit, source: str) -> Response:
    form, ctx = visit.form, context(visit)
    if source not in SOURCES:
        raise errorcodes.INVALID_FORM("Choose what to import from.")
    if source == "seller":
        key = form.text("sellerkey", 64)
        if len(key) != 32:
            return _form(visit, errors={"sellerkey": "A KeyAuth seller key is 32 characters."}, status=400)
        try:
            pace = str(parse_pace(form.text("pace", 32) or DEFAULT_PACE))
        except ValueError as exc:
            return _form(visit, errors={"pace": str(exc)}, status=400)
        options: dict[str, Any] = {"from": form.text("from", 2048) or DEFAULT_URL, "pace": pace}
        import_id, _ = await jobs.create(ctx, visit.account.id, "seller", seller_key=key, options=options)
    elif source == "files":
        errors = {
            name: "Copy it from the application's page on KeyAuth."
            for name in ("name", "ownerid", "secret")
            if not form.text(name, 256)
        }
        if errors:
            return _form(visit, errors=errors, status=400)
        options = {
            "name": form.text("name", 64),
            "ownerid": form.text("ownerid", 64),
            "secret": form.text("secret", 128),
            "version": form.text("version", 5),
            "subscriptions": _subscriptions(form.get("subscriptions")),
        }
        import_id, where = await jobs.create(ctx, visit.account.id, "files", options=options)
        saved = [
            await _save(form.files.get("keys"), where / jobs.KEYS_FILE),
            await _save(form.files.get("users"), where / jobs.USERS_FILE),
        ]
        if not any(saved):
            await jobs.abandon(ctx, import_id, "No file was chosen.")
            return _form(
                visit, errors={"keys": "Choose KeyAuthKeys.json, KeyAuthUsers.json or both."}, status=400
            )
    else:
        import_id, where = await jobs.create(
            ctx, visit.account.id, "dump", options={"app": form.text("app", 64)}
        )
        if not await _save(form.files.get("dump"), where / jobs.DUMP_FILE):
            await jobs.abandon(ctx, import_id, "No file was chosen.")
            return _form(visit, errors={"dump": "Choose the mysqldump file."}, status=400)
    jobs.start_read(ctx, import_id, visit.account.id)
    return visit.redirect(f"{PATH}/{import_id}")


async def _row(visit: Visit) -> jobs.ImportRow:
    _owner(visit)
    row = await jobs.get(visit.services.db, int(visit.request.path_params["import_id"]), visit.account.id)
    if row is None:
        raise errorcodes.KEYAUTH_IMPORT_NOT_FOUND()
    return row


async def view(visit: Visit) -> Response:
    row = await _row(visit)
    report = json.loads(row["report"]) if row["report"] else None
    ctx = context(visit)
    for app in (report or {}).get("applications", []):
        app["invitations"] = jobs.invitations_of(ctx, app) if row["state"] == "done" else {}
    stale = row["state"] in ("reading", "importing") and visit.now() - row["updated_at"] >= jobs.STALE
    return visit.render(
        "apps/keyauth_import_state.html",
        title="Import from KeyAuth",
        job=row,
        report=report,
        stale=stale,
        refresh=REFRESH,
        path=f"{PATH}/{row['id']}",
    )


async def confirm_import(visit: Visit) -> Response:
    row = await _row(visit)
    ctx = context(visit)
    actor = f"{visit.account.username} (dashboard)"
    account_id, ip = visit.account.id, visit.ip

    async def recorded(report: dict[str, Any]) -> None:
        """Each imported application's audit log says who imported it, from what, and the counts."""
        owned = {app["ownerid"]: app["id"] for app in await apps.list_owned(ctx.db, account_id)}
        for entry in report.get("applications", []):
            app_id = owned.get(entry.get("ownerid"))
            if app_id is None:
                continue
            after = {
                "source": row["source"],
                "imported": entry.get("imported"),
                "skipped": entry.get("skipped"),
            }
            await audit.append(
                ctx.db,
                audit.Entry(
                    app_id=app_id,
                    account_id=account_id,
                    actor=actor,
                    action="importkeyauth",
                    target=str(entry.get("name")),
                    before=None,
                    after=after,
                    ip=ip,
                    created_at=ctx.clock.now(),
                ),
            )

    if await jobs.confirm(ctx, row, recorded):
        visit.flash("The import has started.")
    return visit.redirect(f"{PATH}/{row['id']}")


async def resume(visit: Visit) -> Response:
    row = await _row(visit)
    if await jobs.resume_read(context(visit), row):
        visit.flash("The read goes on from where it stopped.")
    return visit.redirect(f"{PATH}/{row['id']}")


ROUTES = [
    Route("/apps/import-keyauth", page(form_page), methods=["GET"]),
    Route("/apps/import-keyauth", page(start, upload=True), methods=["POST"]),
    Route("/apps/import-keyauth/{import_id:int}", page(view), methods=["GET"]),
    Route("/apps/import-keyauth/{import_id:int}/confirm", page(confirm_import), methods=["POST"]),
    Route("/apps/import-keyauth/{import_id:int}/resume", page(resume), methods=["POST"]),
]
