"""login versions: a user made by the transaction is not bumped by it

A key's first use makes its user, then grants, binds an HWID and marks the key used in the same
statement; the triggers of 0056 and 0058 bumped that user's version once for each (three
updates of a row nobody could have read yet, each a new row version and its WAL). Versions
only tell a worker that what it read has changed; nothing was read of a user before the
transaction that made it commits. The first-use statement names its user in the
transaction-local setting `licensegate.made_user` (migration 0062's mark), and the bumps of a
user by its HWIDs, its grants and its key now leave that user alone. Every other user is bumped
as before, in that transaction too.

Revision ID: 0063
Revises: 0062
Create Date: 2026-11-28 11:05:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0063"
down_revision = "0062"
branch_labels = None
depends_on = None

BUMP_USER = "UPDATE users SET login_version = login_version + 1 WHERE id"
NOT_MADE = "AND id::text IS DISTINCT FROM current_setting('licensegate.made_user', true)"


def _insertd(not_made: str) -> str:
    return f"BEGIN {BUMP_USER} IN (SELECT user_id FROM new_rows) {not_made}; RETURN NULL; END"


def _key_user(not_made: str) -> str:
    return (
        f"BEGIN IF TG_OP <> 'INSERT' THEN {BUMP_USER} = OLD.used_by_user_id {not_made}; "
        "END IF; IF TG_OP = 'UPDATE' AND NEW.used_by_user_id IS DISTINCT FROM OLD.used_by_user_id THEN "
        f"{BUMP_USER} = NEW.used_by_user_id {not_made}; END IF; RETURN NULL; END"
    )


def _functions(not_made: str) -> dict[str, str]:
    return {
        "lg_bump_users_insertd_login_version": _insertd(not_made),
        "lg_bump_key_user_login_version": _key_user(not_made),
    }


def _replace(not_made: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        return  # SQLite's workers read the versions at every call, and nothing marks a made user
    for name, body in _functions(not_made).items():
        op.execute(f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$")


def upgrade() -> None:
    _replace(NOT_MADE)


def downgrade() -> None:
    _replace("")
