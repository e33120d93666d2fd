"""users imported from KeyAuth: their SHA-1 e-mail and their appended HWID string

What an imported KeyAuth user needs beyond an ordinary user (see docs/clients.md, "Users imported
from KeyAuth"):

- `users.password_hash` takes KeyAuth's bcrypt hash as it is (`$2y$10$...`; `$2a$`/`$2b$` too):
  no new column, the prefix tells it from argon2id. The first successful check re-hashes it with
  argon2id. NULL keeps its meaning (the next login sets it) for users not made by a License Login.
- `users.email_sha1`: KeyAuth keeps only the SHA-1 hex of the lower-cased address; Forgot Password
  matches it by hashing while `email` is NULL. Indexed by (app_id, email_sha1) like `email_lower`.
- `user_hwids.appended`: 1 marks KeyAuth's HWID string (every HWID it appended, no separator),
  matched by containment; it stays one row, so resets, lists and the HWID limit treat it as one.

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-27 23:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("email_sha1", sa.Text(), nullable=True))
    op.create_index(op.f("ix_users_app_id_email_sha1"), "users", ["app_id", "email_sha1"], unique=False)
    op.add_column("user_hwids", sa.Column("appended", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    # Dropped in place: a batch copy of `users` on SQLite would drop the old table, and with it
    # (ON DELETE CASCADE) every user's grants, HWIDs and variables.
    op.execute("ALTER TABLE user_hwids DROP COLUMN appended")
    op.drop_index(op.f("ix_users_app_id_email_sha1"), table_name="users")
    op.execute("ALTER TABLE users DROP COLUMN email_sha1")
