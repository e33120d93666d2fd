"""The schema of every concept, as SQLAlchemy metadata: the source Alembic migrations come from.

The request path never uses SQLAlchemy; it runs plain SQL through `store.database`.
Conventions: times are Unix seconds (BIGINT), flags are 0/1 integers, strings are TEXT (lengths
are enforced where input arrives, so an over-long value is a 400, not a database error).
"""

from __future__ import annotations

import sqlalchemy as sa

from licensegate.store import loginversions
from licensegate.store.apps import CLIENT_RATE_LIMIT

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _pk() -> sa.Column[int]:
    return sa.Column("id", _ID, primary_key=True, autoincrement=True)


def _ref(table: str, *, ondelete: str = "CASCADE", nullable: bool = False, name: str = "") -> sa.Column[int]:
    return sa.Column(
        name or f"{table.rstrip('s')}_id",
        sa.BigInteger,
        sa.ForeignKey(f"{table}.id", ondelete=ondelete),
        nullable=nullable,
    )


def _flag(name: str, default: int) -> sa.Column[int]:
    return sa.Column(name, sa.Integer, nullable=False, server_default=str(default))


def _int(name: str, default: int) -> sa.Column[int]:
    return sa.Column(name, sa.Integer, nullable=False, server_default=str(default))


def _time(name: str, nullable: bool = True) -> sa.Column[int]:
    return sa.Column(name, sa.BigInteger, nullable=nullable)


def _text(name: str, nullable: bool = True, default: str | None = None) -> sa.Column[str]:
    if default is not None:
        return sa.Column(name, sa.Text, nullable=False, server_default=default)
    return sa.Column(name, sa.Text, nullable=nullable)


def _banned_only(name: str, *columns: str) -> sa.Index:
    """An index of the banned rows alone (few of a table, read by the lists' "banned" filter)."""
    banned = sa.text("banned_reason IS NOT NULL")
    return sa.Index(name, *columns, sqlite_where=banned, postgresql_where=banned)


# --- owners and their teams -------------------------------------------------------------------

accounts = sa.Table(
    "accounts",
    metadata,
    _pk(),
    _text("username", nullable=False),
    _text("email"),
    _text("password_hash"),
    _text("role", nullable=False),  # seller | reseller | manager
    _text("ownerid"),  # sellers only: the 10-character id clients send as `ownerid`
    _ref("accounts", nullable=True, name="parent_id"),  # the seller a reseller/manager belongs to
    _flag("disabled", 0),
    _time("created_at", nullable=False),
    _time("last_login_at"),
    # Dashboard second factor: the TOTP secret (sealed with the deployment key) once confirmed,
    # the last time step accepted (a code works once), and an enrolment waiting for its first code.
    _text("totp_secret"),
    _time("totp_last_step"),
    _text("totp_pending_secret"),
    _time("totp_pending_expires"),
    sa.UniqueConstraint("username"),
    sa.UniqueConstraint("ownerid"),
)

apps = sa.Table(
    "apps",
    metadata,
    _pk(),
    _ref("accounts"),
    _text("ownerid", nullable=False),  # copy of the owner account's ownerid, for the client lookup
    _text("name", nullable=False),
    _text("secret", nullable=False),  # 64 hex for 1.0/1.2 clients, sealed (secretbox; see appkeys)
    _text("signing_key"),  # Ed25519 seed, sealed; NULL until provisioned (apps made before 0002)
    _text("public_key"),  # the Ed25519 public key integrators paste into a client, 64 hex
    _text("version", default="1.0"),
    _text("download_link"),
    _flag("enabled", 1),
    _time("paused_at"),
    _flag("hwid_lock", 1),
    _flag("force_hwid", 0),
    _int("min_hwid_length", 0),
    _int("max_hwids", 1),
    _int("hwid_reset_cooldown", 604800),
    _int("session_seconds", 21600),
    _int("min_username_length", 1),
    _flag("hash_check", 0),
    _flag("seller_log", 0),
    _text("log_webhook_url"),  # Discord-compatible URL client logs are forwarded to
    _text("tamper_action", default="log"),  # log | ban
    # Client API requests per window per application, all addresses together: far above what the
    # per-address limit lets one caller send (SQLite databases made before migration 0007 keep
    # 1200 in the column's DDL; every INSERT names the value).
    _int("client_rate_limit", CLIENT_RATE_LIMIT),
    _int("client_rate_window", 60),
    _int("auth_rate_limit", 30),  # login-type attempts per window per (app, credential, IP)
    _int("auth_rate_window", 60),
    _int("chat_history", 50),
    _int("log_retention_days", 30),  # client logs and tamper reports older than this are deleted
    _flag("token_validation", 0),  # init must present a valid `token` and `thash`
    _flag("case_insensitive_usernames", 0),  # usernames compare by their case fold (users.username_key)
    _text("web_loader_download"),  # the web loader program's download link (KeyAuth's `webdownload`)
    _flag("customer_panel", 0),  # 1: end users may sign in to the customer panel
    # Signed license files: validity and the wait between a user's files (NULL: the deployment's
    # LICENSEGATE_LICENSE_FILE_TTL / _COOLDOWN).
    sa.Column("license_file_ttl", sa.Integer),
    sa.Column("license_file_cooldown", sa.Integer),
    _flag("seats", 0),  # 1 once a seat rule exists: its logins count seats (domain.seats)
    _flag("named_limits", 0),  # 1 once a named rate limit exists (domain.namedlimits)
    # Heartbeats (domain.heartbeats): a logged-in session that does not beat (login, check,
    # heartbeat) for interval + grace seconds is ended; 0: sessions need not beat.
    _int("heartbeat_interval", 0),
    _int("heartbeat_grace", 0),
    _time("created_at", nullable=False),
    _time("updated_at", nullable=False),
    # Bumped by a trigger in the transaction of every change of the application's logins (see
    # LOGIN_VERSION_TRIGGERS below).
    sa.Column("login_version", sa.BigInteger, nullable=False, server_default="0"),
    sa.UniqueConstraint("account_id", "name"),
    sa.UniqueConstraint("ownerid", "name"),
    sa.UniqueConstraint("secret"),
    sa.Index(None, "name"),  # a mistyped ownerid's nearest application (domain.apps.meant_by_client)
)

app_hashes = sa.Table(
    "app_hashes",
    metadata,
    _pk(),
    _ref("apps"),
    _text("hash", nullable=False),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("app_id", "hash"),
)

app_messages = sa.Table(
    "app_messages",
    metadata,
    _ref("apps"),
    _text("name", nullable=False),
    _text("text", nullable=False),
    sa.PrimaryKeyConstraint("app_id", "name"),
)

seller_keys = sa.Table(
    "seller_keys",
    metadata,
    _pk(),
    _ref("apps"),
    # NULL: the application owner's key; otherwise the reseller or manager account it acts as.
    _ref("accounts", nullable=True),
    _text("key_hash", nullable=False),  # SHA-256 of the key; the key itself is never stored
    _text("prefix", nullable=False),  # first characters, so a person can tell keys apart
    _text("name", default=""),
    sa.Column("permissions", sa.BigInteger, nullable=False),
    _time("created_at", nullable=False),
    _time("last_used_at"),
    _text("last_used_ip"),  # the address of the call that last wrote `last_used_at`
    sa.UniqueConstraint("key_hash"),
)

team_members = sa.Table(
    "team_members",
    metadata,
    sa.Column(
        "account_id",
        sa.BigInteger,
        sa.ForeignKey("accounts.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    _ref("apps"),
    sa.Column("permissions", sa.BigInteger, nullable=False, server_default="0"),
    _text("key_levels", default=""),  # resellers: allowed levels, comma-separated; empty = any
    _int("balance_day", 0),
    _int("balance_week", 0),
    _int("balance_month", 0),
    _int("balance_three_month", 0),
    _int("balance_six_month", 0),
    _int("balance_year", 0),
    _int("balance_lifetime", 0),
    sa.Index(None, "app_id"),
)

# Every change of a reseller's balance (the newest 1,000 per reseller are kept): the bucket, the
# units added (negative: spent or taken away), the bucket's balance after it, who made it and why.
balance_history = sa.Table(
    "balance_history",
    metadata,
    _pk(),
    _ref("accounts"),
    _time("at", nullable=False),
    _text("bucket", nullable=False),
    _int("amount", 0),
    _int("balance_after", 0),
    _text("actor", nullable=False),
    _text("reason", nullable=False),
    sa.Index(None, "account_id", "id"),
)

# A signed-in browser: only the SHA-256 of its cookie token is kept. `expires_at` is the absolute
# end; `last_seen_at` drives the idle timeout. `pending` = 1 while the password is checked but the
# second factor is not yet; `challenge` is the WebAuthn challenge this session was last sent.
dashboard_sessions = sa.Table(
    "dashboard_sessions",
    metadata,
    _pk(),
    _ref("accounts"),
    _text("token_hash", nullable=False),
    _text("ip"),
    _time("created_at", nullable=False),
    _time("expires_at", nullable=False),
    sa.Column("last_seen_at", sa.BigInteger, nullable=False, server_default="0"),
    _flag("pending", 0),
    _text("user_agent"),
    _text("challenge"),
    _time("challenge_expires"),
    sa.UniqueConstraint("token_hash"),
    sa.Index(None, "account_id"),
)

# Single-use recovery codes of an account's second factor; only their SHA-256 is kept.
recovery_codes = sa.Table(
    "recovery_codes",
    metadata,
    _pk(),
    _ref("accounts"),
    _text("code_hash", nullable=False),
    _time("created_at", nullable=False),
    _time("used_at"),
    sa.UniqueConstraint("code_hash"),
    sa.Index(None, "account_id"),
)

# WebAuthn credentials (security keys, passkeys) registered to an account.
passkeys = sa.Table(
    "passkeys",
    metadata,
    _pk(),
    _ref("accounts"),
    _text("credential_id", nullable=False),  # base64url
    _text("public_key", nullable=False),  # COSE key, base64url
    sa.Column("sign_count", sa.BigInteger, nullable=False, server_default="0"),
    _text("transports", default=""),
    _text("name", nullable=False),
    _time("created_at", nullable=False),
    _time("last_used_at"),
    sa.UniqueConstraint("credential_id"),
    sa.Index(None, "account_id"),
)

# Every attempt to sign in to an account (the newest 1,000 per account are kept): when, from
# where, the browser, and how it ended (signed_in, wrong_password, wrong_code, locked_out).
signin_history = sa.Table(
    "signin_history",
    metadata,
    _pk(),
    _ref("accounts"),
    _time("at", nullable=False),
    _text("ip"),
    _text("user_agent"),
    _text("result", nullable=False),
    sa.Index(None, "account_id", "id"),
)

# A change of an account's e-mail address waiting for the link sent to the new address to be
# opened; only the link's SHA-256 is kept, and the row goes when it is used.
email_changes = sa.Table(
    "email_changes",
    metadata,
    _pk(),
    _ref("accounts"),
    _text("token_hash", nullable=False),
    _text("new_email", nullable=False),
    _time("created_at", nullable=False),
    _time("expires_at", nullable=False),
    sa.UniqueConstraint("token_hash"),
    sa.Index(None, "account_id"),
)

# A team account's invitation link, with which it chooses its own password (one per account,
# single-use, expiring); only the link's SHA-256 is kept.
team_invitations = sa.Table(
    "team_invitations",
    metadata,
    _pk(),
    _ref("accounts"),
    _text("token_hash", nullable=False),
    _time("created_at", nullable=False),
    _time("expires_at", nullable=False),
    sa.UniqueConstraint("token_hash"),
    sa.Index(None, "account_id"),
)

# Imports from KeyAuth started on the dashboard: the state a page shows after a reload, and what
# lets another worker take over a read whose worker stopped (`updated_at` goes stale). The seller
# key is sealed; the read's checkpoint and uploaded files live in the job's folder.
keyauth_imports = sa.Table(
    "keyauth_imports",
    metadata,
    _pk(),
    _ref("accounts"),
    _text("source", nullable=False),  # seller, files, dump
    _text("state", nullable=False),  # reading, read, importing, done, failed
    _int("done", 0),
    sa.Column("total", sa.Integer, nullable=True),
    _text("stage"),  # the importer's latest step, shown while it runs
    _text("sellerkey_sealed"),
    _text("options", default="{}"),  # JSON: API address, app identity, ...
    _text("report"),  # JSON: the dry-run report, then the import's
    _text("error"),
    _time("created_at", nullable=False),
    _time("updated_at", nullable=False),
    sa.Index(None, "account_id", "id"),
)

# One-time links that let someone create an account (the first-run owner); only digests kept.
setup_links = sa.Table(
    "setup_links",
    metadata,
    _pk(),
    _text("token_hash", nullable=False),
    _text("purpose", nullable=False),  # owner
    _time("created_at", nullable=False),
    _time("expires_at", nullable=False),
    _time("used_at"),
    sa.UniqueConstraint("token_hash"),
)

# --- licensing --------------------------------------------------------------------------------

subscriptions = sa.Table(
    "subscriptions",
    metadata,
    _pk(),
    _ref("apps"),
    _text("name", nullable=False),
    _text("level", nullable=False),
    _time("paused_at"),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("app_id", "name"),
    sa.Index(None, "app_id", "level"),
)

users = sa.Table(
    "users",
    metadata,
    _pk(),
    _ref("apps"),
    _text("username", nullable=False),
    # argon2id, or an imported KeyAuth user's bcrypt hash ($2y$/$2a$/$2b$), verified and re-hashed
    # with argon2id at its first successful check; NULL until set (the first login sets it).
    _text("password_hash"),
    _text("email"),
    _text("email_lower"),
    # An imported KeyAuth user's address as KeyAuth keeps it: the SHA-1 hex of the lower-cased
    # address, matched by hashing while `email` is NULL (setting an address clears it).
    _text("email_sha1"),
    _text("banned_reason"),
    _time("created_at", nullable=False),
    _time("last_login_at"),
    _text("last_ip"),
    _text("created_by", default="SellerAPI"),
    _ref("accounts", ondelete="SET NULL", nullable=True, name="owner_account_id"),
    _flag("hwid_lock", 1),  # 0 exempts this user from the application's HWID lock
    _time("hwid_reset_at"),
    sa.Column("hwid_cooldown", sa.Integer),  # per-user override of the app's reset cooldown
    _text("otp_secret"),
    _flag("otp_enabled", 0),
    _time("otp_last_step"),
    _text("otp_pending_secret"),
    _time("otp_pending_expires"),
    # Sign-in throttling (domain.lockout): failed password checks since the last success or lock,
    # the end of the current lock-out, and how many lock-outs came in a row (each doubles the next).
    _int("failed_logins", 0),
    _time("locked_until"),
    _int("lockouts", 0),
    _text("username_fold"),  # NFKC, case-folded
    # What logins look a name up by, unique per application: the name itself, or its fold while
    # the application compares names case-insensitively.
    _text("username_key"),
    _time("license_file_at"),  # when a client last got a license file (its cooldown)
    # Bumped by a trigger in the transaction of every change of the user's logins.
    sa.Column("login_version", sa.BigInteger, nullable=False, server_default="0"),
    sa.UniqueConstraint("app_id", "username"),
    sa.Index(None, "app_id", "username_key", unique=True),
    # No index by address: one is only compared on the user a name found (store.passwordreset),
    # and each index costs every new user a write (migration 0059 dropped two).
    sa.Index(None, "app_id", "owner_account_id"),
    # The dashboard's Users list: newest first, the banned alone (a partial index), search by
    # address, and by the start of a username on PostgreSQL, whose collation may not order names
    # byte by byte (LIKE 'prefix%' uses text_pattern_ops; SQLite's unique index serves a range).
    sa.Index(None, "app_id", "id"),
    _banned_only("ix_users_app_id_banned", "app_id", "id"),
    # The banned alone by username: a page is one seek, not a sort of every banned user.
    _banned_only("ix_users_banned_username", "app_id", "username"),
    sa.Index(None, "app_id", "last_ip"),
    sa.Index(None, "app_id", "created_at"),  # the list's "created" range, and its count
    # The users people named (not a License Login's, named by their key), by name: the users
    # online are looked for among them when an application has many sessions (store.sessions).
    sa.Index(
        "ix_users_named",
        "app_id",
        "username",
        sqlite_where=sa.text("created_by <> 'license'"),
        postgresql_where=sa.text("created_by <> 'license'::text"),  # as PostgreSQL spells it back
    ),
    sa.Index(
        "ix_users_app_id_username_pattern",
        "app_id",
        "username",
        postgresql_ops={"username": "text_pattern_ops"},
    ).ddl_if(dialect="postgresql"),
)

license_keys = sa.Table(
    "license_keys",
    metadata,
    _pk(),
    _ref("apps"),
    _text("key", nullable=False),
    _text("level", nullable=False),
    sa.Column("duration", sa.BigInteger, nullable=False),  # seconds; the clock starts at redemption
    _text("note"),
    _text("status", default="unused"),  # unused | used
    _text("banned_reason"),  # not NULL = banned
    _text("generated_by", default="SellerAPI"),
    _ref("accounts", ondelete="SET NULL", nullable=True, name="generated_by_account_id"),
    _time("created_at", nullable=False),
    _time("used_at"),
    _ref("users", ondelete="SET NULL", nullable=True, name="used_by_user_id"),
    _text("used_by"),
    sa.UniqueConstraint("app_id", "key"),
    # The dashboard's list pages by keyset in each of these orders (newest, by status, by level):
    # an index per order makes any page one index seek. The unique (app_id, key) serves "by key".
    sa.Index(None, "app_id", "id"),
    sa.Index(None, "app_id", "status", "id"),
    sa.Index(None, "app_id", "level", "id"),
    # Its filters: who generated a key (a rare creator is a seek, not a scan of every key) and
    # when it was created (a range, and its count).
    sa.Index(None, "app_id", "generated_by", "id"),
    sa.Index(None, "app_id", "created_at"),
    sa.Index(None, "app_id", "generated_by_account_id"),
    sa.Index(None, "used_by_user_id"),
    # The overview counts keys by status from (app_id, status, id) and the banned ones from here.
    _banned_only("ix_license_keys_banned", "app_id", "status"),
    # The list's banned keys by key: a page is one seek, not a sort of every banned key.
    _banned_only("ix_license_keys_banned_key", "app_id", "key"),
    # "Note contains" on PostgreSQL: trigrams answer a substring (no B-tree does); pg_trgm.
    sa.Index(
        "ix_license_keys_note_trigram",
        "note",
        postgresql_using="gin",
        postgresql_ops={"note": "gin_trgm_ops"},
    ).ddl_if(dialect="postgresql"),
    # ... and on SQLite, which has no trigrams: the notes in id order, scanned without the table.
    sa.Index("ix_license_keys_note_scan", "app_id", "id", "note").ddl_if(dialect="sqlite"),
)

user_hwids = sa.Table(
    "user_hwids",
    metadata,
    _pk(),
    _ref("users"),
    _text("hwid", nullable=False),
    _time("created_at", nullable=False),
    # 1: an imported KeyAuth HWID string, every HWID KeyAuth appended with no separator; a device
    # matches it when its HWID is contained in it (as KeyAuth matches). Never split.
    _flag("appended", 0),
    sa.UniqueConstraint("user_id", "hwid"),
    sa.Index(None, "hwid"),  # the Users list's search by HWID
)

user_subscriptions = sa.Table(
    "user_subscriptions",
    metadata,
    _pk(),
    _ref("users"),
    _ref("subscriptions"),
    _time("expires_at", nullable=False),
    _time("paused_at"),  # set while this user's time is frozen
    _ref("license_keys", ondelete="SET NULL", nullable=True, name="key_id"),
    _time("created_at", nullable=False),
    sa.Index(None, "user_id"),
    sa.Index(None, "subscription_id"),
    # Only grants from a key: with every grant counted, SQLite's statistics over mostly NULL
    # key_ids made it scan all grants for each key of a list page.
    sa.Index(
        "ix_user_subscriptions_key_id",
        "key_id",
        sqlite_where=sa.text("key_id IS NOT NULL"),
        postgresql_where=sa.text("key_id IS NOT NULL"),
    ),
    # The overview: grants expiring in a range, and users with time left, read from the index alone.
    sa.Index("ix_user_subscriptions_expiry", "subscription_id", "expires_at", "user_id"),
)

# Named features (issue 21): attached to subscriptions (every live grant of one gives them) and,
# as extras, to single keys and users. `metadata` is the seller's JSON text (at most 16 KB).
entitlements = sa.Table(
    "entitlements",
    metadata,
    _pk(),
    _ref("apps"),
    _text("code", nullable=False),
    _text("name", nullable=False),
    _text("metadata"),
    _time("created_at", nullable=False),
    _time("updated_at", nullable=False),
    sa.UniqueConstraint("app_id", "code"),
)


def _attached(table: str, owner: str, column: str) -> sa.Table:
    """One kind of attachment: (owner row, entitlement), each once."""
    return sa.Table(
        table,
        metadata,
        _ref(owner, name=column),
        _ref("entitlements"),
        _time("created_at", nullable=False),
        sa.PrimaryKeyConstraint(column, "entitlement_id"),
        sa.Index(None, "entitlement_id"),
    )


subscription_entitlements = _attached("subscription_entitlements", "subscriptions", "subscription_id")
key_entitlements = _attached("key_entitlements", "license_keys", "key_id")
user_entitlements = _attached("user_entitlements", "users", "user_id")

# Usage credits (domain.credits): a balance of a user or of a key (exactly one owner), spent by
# the client's `spend`, topped up to `refill_amount` at each refill boundary it passed (applied
# when read: `refilled_at` is the last boundary applied, so two readers apply it once).
credit_balances = sa.Table(
    "credit_balances",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("users", nullable=True),
    _ref("license_keys", nullable=True, name="key_id"),
    sa.Column("balance", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("spent", sa.BigInteger, nullable=False, server_default="0"),  # in all, for the seller
    sa.Column("refill_amount", sa.BigInteger),  # NULL: no refill
    _text("refill_period"),  # day | week (Mondays) | month (the 1st)
    sa.Column("refill_minute", sa.Integer, nullable=False, server_default="0"),  # UTC minute of the day
    _time("refilled_at", nullable=False),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("user_id"),
    sa.UniqueConstraint("key_id"),
    sa.Index(None, "app_id", "id"),
)

# Named rate limits (domain.namedlimits): requests per window the seller sets on a user or a key,
# counted (like the address and application limits) by the rate limiter, per user or per key.
named_limits = sa.Table(
    "named_limits",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("users", nullable=True),
    _ref("license_keys", nullable=True, name="key_id"),
    _text("name", nullable=False),
    sa.Column("max_requests", sa.Integer, nullable=False),
    sa.Column("window_seconds", sa.Integer, nullable=False),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("user_id", "name"),
    sa.UniqueConstraint("key_id", "name"),
    sa.Index(None, "app_id", "id"),
)

# Seats (domain.seats): how many machines (distinct HWIDs among live sessions) and concurrent
# sessions a user may hold, set on a subscription, a key or a user (the most specific wins).
seat_rules = sa.Table(
    "seat_rules",
    metadata,
    _pk(),
    _ref("apps"),
    _text("owner", nullable=False),  # sub | key | user
    sa.Column("owner_id", sa.BigInteger, nullable=False),
    sa.Column("max_machines", sa.Integer),  # NULL: no limit
    sa.Column("max_sessions", sa.Integer),  # NULL: no limit
    _text("count_by", default="user"),  # user | key: whose sessions count
    _text("overage", default="refuse"),  # refuse | end_oldest | allow
    _int("overage_percent", 0),  # with `allow`: how far over the limits a login may go
    _time("created_at", nullable=False),
    sa.UniqueConstraint("owner", "owner_id"),
    sa.Index(None, "app_id", "id"),
)

tokens = sa.Table(
    "tokens",
    metadata,
    _pk(),
    _ref("apps"),
    _text("token_hash", nullable=False),  # SHA-256 of the token: the lookup
    _text("token_sealed", nullable=False),  # the token itself, sealed, so the seller can ship it
    _text("kind", nullable=False),  # user | license
    _text("assigned", nullable=False),  # the username or the key it belongs to
    _ref("users", nullable=True),
    _ref("license_keys", nullable=True, name="license_key_id"),
    _text("banned_reason"),
    _text("file_hash"),  # bound at the token's first use
    _time("used_at"),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("token_hash"),
    sa.Index(None, "app_id", "assigned"),
    sa.Index(None, "user_id"),
    sa.Index(None, "license_key_id"),
)

# Every signed license file issued: its serial, whom and what machine it is for, when it ends.
license_files = sa.Table(
    "license_files",
    metadata,
    _pk(),
    _ref("apps"),
    _text("serial", nullable=False),
    _ref("users", ondelete="SET NULL", nullable=True),
    _ref("license_keys", ondelete="SET NULL", nullable=True, name="key_id"),
    _text("username", nullable=False),
    _text("hwid"),
    _text("kid", nullable=False),
    _flag("encrypted", 0),
    _text("issued_by", nullable=False),  # client | the seller's actor
    _time("issued_at", nullable=False),
    _time("expires_at", nullable=False),
    sa.UniqueConstraint("serial"),
    sa.Index(None, "app_id", "id"),
    sa.Index(None, "user_id"),
)

# An application's earlier signing keys (public halves), so files they signed keep verifying.
app_key_history = sa.Table(
    "app_key_history",
    metadata,
    _pk(),
    _ref("apps"),
    _text("kid", nullable=False),
    _text("public_key", nullable=False),
    _time("retired_at", nullable=False),
    sa.Index(None, "app_id", "id"),
)

# The deployment's own Ed25519 key: it signs answers that name no known application.
signing_keys = sa.Table(
    "signing_keys",
    metadata,
    sa.Column("name", sa.Text, primary_key=True),
    _text("signing_key", nullable=False),  # sealed seed
    _text("public_key", nullable=False),
    _time("created_at", nullable=False),
)

# Which deployment key the database's secrets are sealed under: its public id (never the key), so
# a process holding another key refuses to work on the database (`domain/deploymentkey.py`).
deployment_key = sa.Table(
    "deployment_key",
    metadata,
    sa.Column("name", sa.Text, primary_key=True),  # one row: "current"
    _text("key_id", nullable=False),
    _time("recorded_at", nullable=False),
)

# --- client sessions ---------------------------------------------------------------------------

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),
    _ref("apps"),
    _ref("users", nullable=True),
    _text("credential"),
    _flag("validated", 0),
    _time("created_at", nullable=False),
    _time("expires_at", nullable=False),
    _text("ip"),
    _text("hwid"),
    _text("os"),
    _text("architecture"),
    _text("device"),
    _text("cpu_cores"),
    _text("ram"),
    _text("client_version"),
    _text("client_token"),  # the `token` a License Login sent
    _text("enckey"),  # API 1.2 / legacy 1.0: the key the client sent at init, sealed
    _int("log_lines", 0),  # client log lines this session stored (its quota counts them)
    _int("tamper_reports", 0),  # tamper reports this session stored
    _time("last_beat_at"),  # the last login, check or heartbeat, while its application wants beats
    # What the last login or heartbeat answered (entitlement codes, credit balance), as JSON: the
    # next heartbeat answers what changed since (domain.heartbeats.changes).
    _text("beat_state"),
    # Bumped by a trigger in the transaction of every change of what a worker holds of it (see
    # LOGIN_COLUMNS).
    sa.Column("login_version", sa.BigInteger, nullable=False, server_default="0"),
    # When it opened in nanoseconds (wall clock; `created_at` is in seconds): which of sessions
    # opened in one second is the oldest (seats' end_oldest). NULL: opened before it was recorded.
    sa.Column("opened_ns", sa.BigInteger),
    # Who is online (logged in, unexpired), counted and named from the index alone (migration 0055).
    sa.Index(None, "app_id", "validated", "expires_at", "user_id"),
    sa.Index(None, "app_id", "ip"),
    sa.Index(None, "user_id"),
    # The Sessions page's order, newest first: a page, deep or not, is one seek (migration 0055).
    sa.Index(None, "app_id", "created_at", "id"),
)

# Why a session a ban or a pause ended ended (domain.heartbeats): the program's next call with
# it is refused `session_not_found` with the ban's reason or the pause, not a bare "not found".
# Kept until the session would have expired.
ended_sessions = sa.Table(
    "ended_sessions",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),  # the session's id as `sessions` keyed it
    _ref("apps"),
    _text("reason", nullable=False),  # banned | paused
    _text("detail"),  # the ban's reason
    _time("expires_at", nullable=False),
    sa.Index(None, "expires_at"),
)

password_resets = sa.Table(
    "password_resets",
    metadata,
    _pk(),
    _ref("users"),
    _text("token_hash", nullable=False),
    _time("created_at", nullable=False),
    _time("expires_at", nullable=False),
    _time("used_at"),
    sa.UniqueConstraint("token_hash"),
)

# --- variables, chat, files, webhooks ---------------------------------------------------------

global_vars = sa.Table(
    "global_vars",
    metadata,
    _pk(),
    _ref("apps"),
    _text("name", nullable=False),
    _text("value", nullable=False),
    _flag("authed", 1),  # 1: only a logged-in session may read it
    _time("created_at", nullable=False),
    _time("updated_at", nullable=False),
    sa.UniqueConstraint("app_id", "name"),
)

user_vars = sa.Table(
    "user_vars",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("users"),
    _text("name", nullable=False),
    _text("value", nullable=False),
    _flag("read_only", 0),
    _time("created_at", nullable=False),
    _time("updated_at", nullable=False),
    sa.UniqueConstraint("user_id", "name"),
    # The dashboard's search, each in id order for keyset paging: all, by name, by value prefix
    # (text_pattern_ops: PostgreSQL answers a LIKE 'prefix%' from it whatever the collation).
    sa.Index(None, "app_id", "id"),
    sa.Index(None, "app_id", "name", "id"),
    sa.Index(None, "app_id", "value", "id", postgresql_ops={"value": "text_pattern_ops"}),
)

chat_channels = sa.Table(
    "chat_channels",
    metadata,
    _pk(),
    _ref("apps"),
    _text("name", nullable=False),
    _int("delay_seconds", 0),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("app_id", "name"),
)

chat_messages = sa.Table(
    "chat_messages",
    metadata,
    _pk(),
    _ref("chat_channels", name="channel_id"),
    _text("author", nullable=False),
    _text("role", nullable=False),  # user | developer
    _text("message", nullable=False),
    _time("created_at", nullable=False),
    sa.Index(None, "channel_id", "id"),
)

chat_mutes = sa.Table(
    "chat_mutes",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("users"),
    _time("until", nullable=False),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("app_id", "user_id"),
)

files = sa.Table(
    "files",
    metadata,
    _pk(),
    _ref("apps"),
    _text("file_id", nullable=False),  # the public id clients ask for
    _text("name", nullable=False),
    _text("url"),  # files added by URL
    _text("storage_key"),  # uploaded files: SHA-256 of the content, the name on disk
    sa.Column("size", sa.BigInteger),
    _flag("authed", 1),
    _time("created_at", nullable=False),
    _time("updated_at", nullable=False),
    sa.Column("downloads", sa.BigInteger, nullable=False, server_default="0"),  # Download File answers
    _time("downloaded_at"),  # the latest of them
    sa.UniqueConstraint("app_id", "file_id"),
    sa.Index(None, "storage_key"),
)

# File content kept in the database (PostgreSQL deployments without a shared folder): one row
# per content (content-addressed, like the folder) and its bytes in chunks of up to 1 MiB, so no
# statement moves a whole file.
file_blobs = sa.Table(
    "file_blobs",
    metadata,
    sa.Column("storage_key", sa.Text, primary_key=True),  # SHA-256 of the content
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("chunks", sa.Integer, nullable=False),
    _time("created_at", nullable=False),
)

file_chunks = sa.Table(
    "file_chunks",
    metadata,
    sa.Column(
        "storage_key",
        sa.Text,
        sa.ForeignKey("file_blobs.storage_key", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("seq", sa.Integer, primary_key=True),  # 0, 1, ... in order
    sa.Column("data", sa.LargeBinary, nullable=False),
)

webhooks = sa.Table(
    "webhooks",
    metadata,
    _pk(),
    _ref("apps"),
    _text("webid", nullable=False),
    _text("base_url", nullable=False),  # may hold secrets: never shown to client API callers
    _text("user_agent", default="licensegate"),
    _flag("authed", 1),
    # 0: imported from KeyAuth without its full URL (its seller API shows only a short link); the
    # client's Webhook call is refused until the seller enters the URL again, which sets it to 1.
    _flag("enabled", 1),
    _time("created_at", nullable=False),
    sa.UniqueConstraint("app_id", "webid"),
)

# The delivery log: every call made to a webhook (a client's Webhook call or the dashboard's test),
# the most recent `domain.webhooks.KEPT_DELIVERIES` per application. Never the URL, the request
# or the reply: the webhook's id, the outcome, and an error or a short excerpt of a failed reply.
webhook_deliveries = sa.Table(
    "webhook_deliveries",
    metadata,
    _pk(),
    _ref("apps"),
    _text("webid", nullable=False),  # no foreign key: the entry outlives a deleted webhook
    _text("source", nullable=False),  # client | test
    _text("method", nullable=False),  # GET | POST
    sa.Column("status", sa.Integer),  # the target's HTTP status; NULL when no reply came
    sa.Column("duration_ms", sa.Integer, nullable=False),
    _text("error_code"),  # outbound's code (timeout, connection_failed, ...) when it failed
    _text("error"),  # what failed, for a person: names the host at most, never the URL
    _text("excerpt"),  # the start of a non-2xx reply (a few hundred characters at most)
    _time("created_at", nullable=False),
    sa.Index(None, "app_id", "id"),
    sa.Index(None, "app_id", "webid", "id"),
)

loader_buttons = sa.Table(
    "loader_buttons",
    metadata,
    _pk(),
    _ref("apps"),
    _text("value", nullable=False),
    _text("text", nullable=False),
    _int("position", 0),  # the customer panel's order (ties: oldest first)
    sa.UniqueConstraint("app_id", "value"),
)

# An end user signed in to the customer panel of one application. The browser holds a random
# token (256 bits); only its SHA-256 is kept. `handoff_hash` is the SHA-256 of the one web-loader
# token the session has issued (single use: cleared when a client login consumes it).
panel_sessions = sa.Table(
    "panel_sessions",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("users"),
    _text("token_hash", nullable=False),
    _text("ip"),
    _text("user_agent"),
    _time("created_at", nullable=False),
    _time("expires_at", nullable=False),
    _time("last_seen_at", nullable=False),
    _text("handoff_hash"),
    _time("handoff_expires"),
    sa.UniqueConstraint("token_hash"),
    sa.UniqueConstraint("handoff_hash"),
    sa.Index(None, "user_id"),
    sa.Index(None, "expires_at"),
)

# --- protection -------------------------------------------------------------------------------

blacklist = sa.Table(
    "blacklist",
    metadata,
    _pk(),
    _ref("apps"),
    _text("kind", nullable=False),  # hwid | ip (one address) | cidr (a range): canonical text
    _text("value", nullable=False),
    _text("reason"),
    _time("created_at", nullable=False),
    # Where the entry came from: the ban of this user added it (0: added directly), so lifting
    # that ban removes it and nothing else; and who added it (an actor as the audit log names
    # one, `client program`, `tamper detection`; NULL: before this was recorded).
    sa.Column("banned_user_id", sa.BigInteger, nullable=False, server_default="0"),
    _text("added_by"),
    sa.UniqueConstraint("app_id", "kind", "value", "banned_user_id"),
)

whitelist = sa.Table(
    "whitelist",
    metadata,
    _pk(),
    _ref("apps"),
    _text("value", nullable=False),  # an IP address or CIDR range
    _time("created_at", nullable=False),
    sa.UniqueConstraint("app_id", "value"),
)

# --- logs -------------------------------------------------------------------------------------


def _search_trigram(table: str, *columns: str) -> sa.Index:
    """A log page's search on PostgreSQL: trigrams answer "holds this text" in any of `columns`
    (pg_trgm; SQLite, which has none, reads the rows newest first)."""
    return sa.Index(
        f"ix_{table}_search_trigram",
        *columns,
        postgresql_using="gin",
        postgresql_ops=dict.fromkeys(columns, "gin_trgm_ops"),
    ).ddl_if(dialect="postgresql")


client_logs = sa.Table(
    "client_logs",
    metadata,
    _pk(),
    _ref("apps"),
    _text("credential"),
    _text("pcuser"),
    _text("message", nullable=False),
    _text("ip"),
    _time("created_at", nullable=False),
    sa.Index(None, "app_id", "created_at"),
    sa.Index(None, "app_id", "ip", "created_at"),  # the Logs page's address filter, newest first
    sa.Index(None, "app_id", "credential", "created_at"),  # a user's or key's timeline
    _search_trigram("client_logs", "message", "pcuser"),
)

tamper_logs = sa.Table(
    "tamper_logs",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("users", ondelete="SET NULL", nullable=True),
    _text("credential"),
    _text("hwid"),
    _text("ip"),
    _text("reason", nullable=False),
    _text("details"),
    _time("created_at", nullable=False),
    sa.Index(None, "app_id", "created_at"),
    sa.Index(None, "user_id", "created_at"),  # a user's timeline
    sa.Index(None, "app_id", "credential", "created_at"),  # a key's timeline
    sa.Index(None, "app_id", "ip", "created_at"),  # the Tamper logs page's address filter
    _search_trigram("tamper_logs", "reason", "details", "hwid"),
)

# On SQLite, each log table's search is served by an FTS5 trigram table (migration 0043) that
# SQLAlchemy cannot declare: `<table>_search`, its triggers, and FTS5's own `<table>_search_*`.
SQLITE_SEARCH_INDEXES = ("client_logs_search", "tamper_logs_search")

# What the overview's charts count per day (UTC days: Unix seconds // 86400): logins by outcome
# (`kind` 'login', `outcome` the refusal's error code or 'success'), counted in memory by each
# worker and added every few seconds; new users ('user') and redeemed keys ('key') added as they
# are written. A counter is `store.overview.SLOTS` rows (`slot`), added up when read: each new user
# adds to one picked at random, so concurrent first uses do not wait for each other's commit on
# one row (migration 0061).
daily_counts = sa.Table(
    "daily_counts",
    metadata,
    _ref("apps"),
    sa.Column("day", sa.Integer, nullable=False),
    _text("kind", nullable=False),
    _text("outcome", nullable=False),
    sa.Column("count", sa.BigInteger, nullable=False),
    _int("slot", 0),
    sa.PrimaryKeyConstraint("app_id", "day", "kind", "outcome", "slot"),
)

# The overview's status counts and expiries of a large application, as last computed (the
# background refresh keeps them fresh while someone looks at it): domain/overview.py.
overview_snapshots = sa.Table(
    "overview_snapshots",
    metadata,
    _ref("apps"),
    sa.Column("computed_at", sa.BigInteger, nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    _text("figures", nullable=False),
    sa.Column("viewed_at", sa.BigInteger, nullable=False),
    sa.Column("claimed_at", sa.BigInteger, nullable=False),
    sa.PrimaryKeyConstraint("app_id"),
)

# Whose turn a periodic job that looks at a whole table is (store/turns.py): one worker of one
# node takes it per interval, instead of every worker of every node doing the same work.
periodic_turns = sa.Table(
    "periodic_turns",
    metadata,
    _text("name", nullable=False),  # the job's name
    sa.Column("taken_at", sa.BigInteger, nullable=False),  # when its last run began or ended
    # How far its last run reached, in the job's own terms (the sweep for users without time:
    # the time up to which it looked at grants running out); NULL until one run has finished.
    sa.Column("reached", sa.BigInteger, nullable=True),
    sa.PrimaryKeyConstraint("name"),
)

# Users whose time an operation took away without ending their sessions (a key's deletion takes
# the grants it made): the next sweep ends those of them left with no time (store/sessions.py).
# No foreign key: a user deleted meanwhile is simply not found.
time_checks = sa.Table(
    "time_checks",
    metadata,
    sa.Column("user_id", sa.BigInteger, nullable=False),
    sa.PrimaryKeyConstraint("user_id"),
)

# The audit log outlives what it describes, so it holds ids without foreign keys.
audit_log = sa.Table(
    "audit_log",
    metadata,
    _pk(),
    sa.Column("app_id", sa.BigInteger),
    sa.Column("account_id", sa.BigInteger),
    _text("actor", nullable=False),
    _text("action", nullable=False),
    _text("target"),
    _text("before"),
    _text("after"),
    _text("ip"),
    _time("created_at", nullable=False),
    _text("prev_hash"),
    _text("entry_hash"),
    sa.Index(None, "app_id", "id"),
    sa.Index(None, "app_id", "target", "created_at"),  # a user's timeline
    # The Audit log page's filters, each paged by id.
    sa.Index(None, "app_id", "actor", "id"),
    sa.Index(None, "app_id", "action", "id"),
    sa.Index(None, "app_id", "target", "id"),
)

seller_log = sa.Table(
    "seller_log",
    metadata,
    _pk(),
    _ref("apps"),
    _text("ip"),
    _text("operation", nullable=False),
    _text("params", nullable=False),  # JSON, with secrets removed
    sa.Column("status", sa.Integer, nullable=False),  # the HTTP status the call was answered with
    _time("created_at", nullable=False),
    # The seller key that called (no foreign key: the entry outlives a revoked key) and its name
    # then; NULL: a call signed in to an account (the dashboard, the command line).
    sa.Column("key_id", sa.BigInteger),
    _text("key_name"),
    sa.Index(None, "app_id", "id"),
    # The Seller log page's filters, each paged by id.
    sa.Index(None, "app_id", "operation", "id"),
    sa.Index(None, "app_id", "status", "id"),
    sa.Index(None, "app_id", "key_id", "id"),
)

# --- event webhooks (issue 22) ------------------------------------------------------------------

event_endpoints = sa.Table(
    "event_endpoints",
    metadata,
    _pk(),
    _ref("apps"),
    _text("url", nullable=False),  # sealed: a Discord or Slack URL carries its token
    _text("url_shown", nullable=False),  # scheme://host/path, never the query or credentials
    _text("events", nullable=False),  # "*" (every event not opt-in) and/or ",name,name,"
    _text("format", nullable=False),  # json | discord | slack
    _flag("enabled", 1),
    _flag("include_keys", 0),  # payloads carry full license keys
    _int("failures", 0),  # consecutive failed attempts
    _time("alerted_at"),  # the owner was e-mailed about these failures (cleared by a success)
    _text("disabled_reason"),  # why delivery stopped (410 Gone), for the dashboard
    _time("created_at", nullable=False),
    _time("updated_at", nullable=False),
    sa.Index(None, "app_id", "id"),
)

events = sa.Table(
    "events",
    metadata,
    _pk(),
    _ref("apps"),
    _text("event_id", nullable=False),  # the public id and idempotency id ("evt_" + 24 hex)
    _text("name", nullable=False),
    _text("payload", nullable=False),  # JSON of the event's data
    _text("license_key"),  # the full key, sent only to endpoints that include keys
    _time("created_at", nullable=False),
    sa.UniqueConstraint("event_id"),
    sa.Index(None, "app_id", "id"),
    sa.Index(None, "created_at"),
)

event_deliveries = sa.Table(
    "event_deliveries",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("events", name="event_id"),
    _ref("event_endpoints", name="endpoint_id"),
    _text("state", nullable=False),  # pending | delivered | failed
    _int("attempts", 0),
    _time("due_at", nullable=False),  # when pending: the next attempt (a claim moves it past its lease)
    sa.Column("last_status", sa.Integer),
    _time("started_at", nullable=False),  # retries stop after the retry window from here
    _time("finished_at"),
    sa.Index(None, "state", "due_at"),
    sa.Index(None, "app_id", "state", "id"),
    sa.Index(None, "event_id"),
    sa.Index(None, "endpoint_id", "state"),
)

event_attempts = sa.Table(
    "event_attempts",
    metadata,
    _pk(),
    _ref("apps"),
    _ref("event_deliveries", name="delivery_id"),
    sa.Column("status", sa.Integer),  # the receiver's HTTP status; NULL when no reply came
    sa.Column("duration_ms", sa.Integer, nullable=False),
    _text("outcome", nullable=False),  # delivered | retry | failed | disabled
    _text("excerpt"),  # the first 2 KB of the answer
    _text("error"),  # what failed, for a person: names the host at most, never the URL
    _time("created_at", nullable=False),
    sa.Index(None, "app_id", "id"),
    sa.Index(None, "delivery_id", "id"),
    sa.Index(None, "created_at"),
)

event_notices = sa.Table(
    "event_notices",
    metadata,
    _ref("user_subscriptions", name="grant_id"),
    _text("kind", nullable=False),  # expiring_soon | expired
    _time("expires_at", nullable=False),  # the expiry noticed: a grant extended later is noticed again
    sa.PrimaryKeyConstraint("grant_id", "kind", "expires_at"),
)


# --- login versions (migrations 0056, 0058) -----------------------------------------------------
# What a worker holds of a logged-in session (domain/recheck.py) is trusted while the login
# versions of its application, its user and itself are unchanged. Triggers bump them in the
# transaction of every change that can refuse or change a login, whatever makes it (the seller
# API, the dashboard, the importer, hand-written SQL): any change of an `apps` row or of its owner
# account's name; any row of the tables below; a change of one of the "login" columns of `users`,
# `sessions` and `license_keys` (a key bumps the user it was redeemed by). A session's own
# version is its own row's (bumping its user's there would lock the user's row at every login,
# and two logins of one user, each holding the share lock `store.sessions.validate` takes, would
# deadlock on PostgreSQL); a session ended is a session not found. Every column of those three
# tables is named once, in store/loginversions.py (the PostgreSQL adapter reads the lists at run
# time, where this module and SQLAlchemy are not imported), so a new column is either read by
# logins (and its trigger made again by a migration) or left out on purpose:
# tests/store/test_login_versions.py checks both.
LOGIN_COLUMNS, NOT_LOGIN_COLUMNS = loginversions.LOGIN_COLUMNS, loginversions.NOT_LOGIN_COLUMNS
# Tables any row change of which bumps the application's version, and its user's version.
LOGIN_APP_TABLES = ("subscriptions", "blacklist", "whitelist", "seat_rules")
LOGIN_USER_TABLES = ("user_hwids", "user_subscriptions")
# The triggers the migrations make (0056, 0058): on PostgreSQL the tables above bump by statement
# (with transition tables), on SQLite by row; either way one trigger per event.
LOGIN_VERSION_TRIGGERS = frozenset(
    {
        "apps_login_version",
        "users_login_version",
        "accounts_login_version",
        "sessions_login_version",
        "license_keys_login_version_update",
        "license_keys_login_version_delete",
    }
    | {
        f"{table}_login_version_{event}"
        for table in (*LOGIN_APP_TABLES, *LOGIN_USER_TABLES)
        for event in ("insert", "update", "delete")
    }
)
