"""Settings from environment variables, with defaults that start a working service on SQLite.

Each setting is declared once, as a field of `Settings` made by `setting()`: its type (the
annotation), default, bounds or choices and a one-line description. Its variable is
`LICENSEGATE_` + the field name in capitals. Parsing, validation and the table in
docs/operations.md (written by `licensegate reference`, checked by a test) all come from there.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import Field, dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any, get_type_hints

ENV_PREFIX = "LICENSEGATE_"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class ConfigError(ValueError):
    """A setting has a value the service cannot use."""


@dataclass(frozen=True, slots=True)
class Rule:
    """How one setting is read and documented, beside its type and default."""

    doc: str
    minimum: int | None = None
    choices: tuple[str, ...] = ()
    shown: str | None = None  # the default as the documentation shows it, when not the value itself


def setting(
    default: Any,
    doc: str,
    *,
    minimum: int | None = None,
    choices: tuple[str, ...] = (),
    shown: str | None = None,
) -> Any:
    """Declare a field of `Settings` (typed `Any` so that each field keeps its own annotation)."""
    return field(default=default, metadata={"rule": Rule(doc, minimum, choices, shown)})


def default_database_url(data_dir: Path) -> str:
    return f"sqlite:///{data_dir / 'licensegate.db'}"


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path = setting(  # noqa: RUF009 - setting() returns a dataclasses.Field
        Path("data"), "folder for the default SQLite database and uploaded files"
    )
    database_url: str = setting(
        "",
        "`sqlite:///relative/path.db`, `sqlite:////absolute/path.db` or "
        "`postgresql://user:pass@host:5432/db`",
        shown="sqlite:///data/licensegate.db",  # empty means: licensegate.db in data_dir
    )
    redis_url: str | None = setting(
        None, "e.g. `redis://127.0.0.1:6379/0`; shares rate-limit counters between workers and machines"
    )
    redis_prefix: str = setting("lg", "prefix of every Redis key, so deployments can share one Redis")
    redis_timeout_ms: int = setting(
        250,
        "milliseconds the rate limiter waits for Redis; past it (or at once when Redis is unreachable) "
        "it counts in-process until Redis answers again",
        minimum=10,
    )
    redis_retry: int = setting(
        5, "seconds between attempts to reach Redis again while the in-process counters stand in", minimum=1
    )
    host: str = setting("127.0.0.1", "address to listen on")
    port: int = setting(8000, "port to listen on", minimum=0)
    workers: int = setting(1, "worker processes (about one per core)", minimum=1)
    backlog: int = setting(
        2048,
        "connections the operating system queues until a worker accepts them (the listen backlog; "
        "Linux caps it at `net.core.somaxconn`)",
        minimum=128,
    )
    worker_connections: int = setting(
        10_000,
        "open connections each worker process serves at once; more wait in the backlog. Each takes "
        "a file descriptor: `serve` raises its open-file limit as far as allowed and lowers this to fit",
        minimum=16,
    )
    scheduling: str = setting(
        "normal",
        "`batch`: every process and thread of the service runs under Linux's SCHED_BATCH policy, so "
        "one that wakes does not preempt one that is running: fewer context switches under load, "
        'worth it where they are costly, as on some virtual machines (see "Throughput and scheduling")',
        choices=("normal", "batch"),
    )
    header_timeout: int = setting(
        15,
        "seconds a connection may take to send a request's headers, counted from when it opens or "
        "its previous answer was sent (so also how long an idle keep-alive connection stays open)",
        minimum=1,
    )
    body_timeout: int = setting(
        20,
        "seconds a request body may take to arrive in full (uploads: one more second per 64 KiB "
        "declared); a slower body is refused with 400 `incomplete_body`",
        minimum=1,
    )
    max_query_bytes: int = setting(
        16 * 1024, "largest query string accepted (414 `uri_too_long` above)", minimum=1024
    )
    max_header_bytes: int = setting(
        32 * 1024,
        "largest total size of a request's headers accepted by the APIs (431 `headers_too_large` above)",
        minimum=4096,
    )
    max_body_bytes: int = setting(
        64 * 1024,
        "largest request body accepted, except file uploads and operations the reference gives a larger "
        "limit (400 `request_too_large` above)",
        minimum=1024,
    )
    argon2_time_cost: int = setting(2, "argon2id passes", minimum=1)
    argon2_memory_kib: int = setting(
        19 * 1024, "argon2id memory (19 MiB: OWASP's minimum profile, about 22 ms per check)", minimum=8
    )
    argon2_parallelism: int = setting(1, "argon2id lanes", minimum=1)
    password_threads: int = setting(
        2, "threads per worker that hash and verify passwords, off the event loop", minimum=1
    )
    password_queue: int = setting(
        64,
        "password checks that may wait for a thread per worker, shared equally between applications "
        "when full; past it a login is refused at once with 429 `busy` and `Retry-After`",
        minimum=1,
    )
    seller_rate_limit: int = setting(
        3000, "seller API requests allowed per application per window", minimum=1
    )
    seller_rate_window: int = setting(60, "that window, in seconds", minimum=1)
    client_address_limit: int = setting(
        300,
        "client API requests one address may make to one application per window (an IPv6 address "
        "counts with its whole /64); past it that address is answered 429 with `Retry-After`, others not",
        minimum=1,
    )
    client_session_limit: int = setting(
        120, "client API requests one client session may make per window; past it 429", minimum=1
    )
    client_limit_window: int = setting(
        60, "that window (of the address and session limits), in seconds", minimum=1
    )
    seller_key_failures: int = setting(
        20,
        "wrong seller keys one address may present per window; past it every seller API request "
        "from that address is answered 429 with `Retry-After` (a right key included) until the window ends",
        minimum=1,
    )
    seller_key_failure_window: int = setting(600, "that window, in seconds", minimum=1)
    login_address_limit: int = setting(
        100,
        "refused client sign-in attempts (Login, register, License Login, 2FA codes; every Forgot "
        "Password request) one address may make at one application per window, whatever the username "
        "or key; successful sign-ins do not count, so users sharing an address are not held back",
        minimum=1,
    )
    login_address_window: int = setting(600, "that window, in seconds", minimum=1)
    login_lock_failures: int = setting(
        10,
        "wrong passwords in a row (from any address) that lock a user's password sign-in; an unknown "
        "username is refused the same way after as many",
        minimum=1,
    )
    login_lock_seconds: int = setting(
        300,
        "how long the first lock-out lasts; each further one in a row lasts twice as long as the one before",
        minimum=1,
    )
    login_lock_max: int = setting(3600, "the longest a lock-out lasts, in seconds", minimum=1)
    license_file_ttl: int = setting(
        30 * 86400,
        "how long a signed license file stays valid offline, in seconds, for applications that set "
        "none of their own (`setlicensefiles`); at least one hour",
        minimum=3600,
    )
    license_file_cooldown: int = setting(
        3600,
        "seconds a user waits between license files a client asks for, for applications that set "
        "none of their own (the seller's own issuing is not limited)",
        minimum=0,
    )
    log_lines_per_session: int = setting(
        100, "client log lines (`log`) one client session may store; more are refused", minimum=1
    )
    tamper_reports_per_session: int = setting(
        10, "tamper reports (`tamper`) one client session may store; more are refused", minimum=1
    )
    trusted_proxies: tuple[IPNetwork, ...] = setting(
        (), "comma-separated IPs/CIDRs of reverse proxies whose `X-Forwarded-For` is believed"
    )
    pg_pool_size: int = setting(10, "PostgreSQL connections per worker process", minimum=1)
    pg_timeout: int = setting(
        5,
        "seconds a request waits for PostgreSQL: for a connection, and for each statement's answer; "
        "then it is answered 503 with `Retry-After`",
        minimum=1,
    )
    pg_statement_timeout: int = setting(
        30,
        "seconds PostgreSQL lets one statement run (its `statement_timeout`); bulk deletes may use "
        "all of it, other statements get `LICENSEGATE_PG_TIMEOUT`",
        minimum=1,
    )
    ready_timeout: int = setting(
        2,
        "seconds `/readyz` waits for the database's answer (and Redis's, within "
        "`LICENSEGATE_REDIS_TIMEOUT_MS`) before it reports the check failed",
        minimum=1,
    )
    sqlite_wal_bytes: int = setting(
        64 * 1024 * 1024,
        "size SQLite's write-ahead log file is cut to whenever a write starts the log over, and above "
        "which it is emptied once writes pause and its contents are in the database file",
        minimum=1024 * 1024,
    )
    log_level: str = setting(
        "warning", "what the service logs", choices=("debug", "info", "warning", "error")
    )
    access_log: str = setting(
        "off",
        "`on`: one JSON line per request on stderr (time, request id, interface, operation type, "
        "method, path without query string, status, duration, client address; never a secret)",
        choices=("off", "on"),
    )
    metrics_token: str | None = setting(
        None,
        "when set, `GET /metrics` answers only requests with `Authorization: Bearer <this token>` "
        "(401 otherwise); unset = it answers anyone who reaches it",
    )
    public_url: str = setting(
        "http://127.0.0.1:8000", "how end users reach the service; password-reset links start with it"
    )
    smtp_host: str | None = setting(
        None,
        "SMTP server for password-reset, e-mail-change and team-invitation mail; unset = Forgot "
        "Password answers 403 `email_not_configured`, dashboard accounts cannot change their address, "
        "and a team invitation link is only shown (once) to the owner to pass on",
    )
    smtp_port: int = setting(587, "the SMTP server's port", minimum=1)
    smtp_security: str = setting(
        "starttls",
        "how SMTP is encrypted; `tls` means implicit TLS, usually on port 465",
        choices=("starttls", "tls", "none"),
    )
    smtp_user: str | None = setting(None, "SMTP login name, when the server wants one")
    smtp_password: str | None = setting(None, "SMTP password, when the server wants one")
    smtp_from: str = setting("licensegate@localhost", "the sender address")
    files_dir: Path | None = setting(  # noqa: RUF009 - setting() returns a dataclasses.Field
        None,
        "folder for files' content that every node mounts (a shared folder); unset = in the "
        "database on PostgreSQL, `files` in the data folder on SQLite",
    )
    max_upload_bytes: int = setting(
        50 * 1024 * 1024,
        "largest file the seller API and the dashboard accept (50 MiB)",
        minimum=1024,
    )
    client_file_bytes: int = setting(
        8 * 1024 * 1024, "largest file the client API's Download File sends", minimum=1024
    )
    outbound_allow: tuple[str, ...] = setting(
        (),
        "comma-separated hosts or CIDRs that outbound requests (files by URL, webhooks, log forwarding) "
        "may reach although they are internal",
    )
    outbound_timeout: int = setting(10, "seconds an outbound request may take in all", minimum=1)
    outbound_max_bytes: int = setting(1024 * 1024, "largest reply read from a webhook", minimum=1024)
    event_timeout: int = setting(10, "seconds an event webhook delivery may take in all", minimum=1)
    event_retry_hours: int = setting(
        48, "hours an event delivery is retried (exponential backoff with jitter) before it fails", minimum=1
    )
    event_alert_failures: int = setting(
        10, "consecutive failed deliveries to an event webhook before its owner is e-mailed", minimum=1
    )
    event_log_days: int = setting(30, "days event deliveries and their attempts are kept", minimum=1)
    event_expiring_days: int = setting(
        3, "days before a subscription runs out that `subscription.expiring_soon` is sent", minimum=1
    )
    event_batch: int = setting(20, "event deliveries one worker makes at once", minimum=1)
    event_poll_ms: int = setting(
        1000, "milliseconds a worker waits before looking again when no event delivery is due", minimum=10
    )
    shutdown_drain: int = setting(
        15,
        "seconds a stopping worker waits for e-mail and other work still under way after responses, "
        "then drops it",
        minimum=0,
    )
    heartbeat_sweep_seconds: int = setting(
        5,
        "seconds between a worker's sweeps for sessions that missed their heartbeats (a silent "
        "session ends at most this long after its application's interval and grace)",
        minimum=1,
    )
    recheck_sessions: int = setting(
        10_000,
        "logged-in sessions a worker holds so that a re-check or check reads only their login "
        "versions (one indexed query) instead of the rows behind them (about 5 KB each); 0 holds none",
        minimum=0,
    )
    recheck_confirm: str = setting(
        "notify",
        "PostgreSQL: how a worker confirms a held session: `notify` (no query while the database's "
        "announcements vouch for it; a change made through another node is seen once announced, "
        "within milliseconds, docs/design.md) or `query` (its login versions read at every call: "
        "seen at once everywhere). SQLite always queries",
        choices=("notify", "query"),
    )
    count_flush_seconds: int = setting(
        5,
        "seconds between a worker's writes of the logins it counted for the overview's charts (a "
        "worker that crashes loses at most this long's counts)",
        minimum=1,
    )
    overview_inline_rows: int = setting(
        50_000,
        "keys plus users below which an application's overview counts them by status (and the "
        "expiries to come) on each view; at or above it, it shows the counts a background refresh "
        "made, with their time",
        minimum=0,
    )
    overview_refresh_minutes: int = setting(
        5,
        "minutes between background refreshes of a large application's overview counts, done only "
        "while someone has looked at its overview within the last hour",
        minimum=1,
    )
    deployment_key: str | None = setting(
        None,
        "the deployment key (64 hex) every secret at rest is sealed under; unset = the key file "
        "`deployment.key` in the data folder, made on first start",
    )
    deployment_old_keys: tuple[str, ...] = setting(
        (), "comma-separated older deployment keys still accepted for opening values, during a rotation"
    )
    dashboard_idle_timeout: int = setting(
        3600, "seconds without a request after which a dashboard session ends", minimum=60
    )
    dashboard_session_lifetime: int = setting(
        12 * 3600, "seconds after sign-in at which a dashboard session ends, however active", minimum=300
    )
    dashboard_signup: str = setting(
        "off", "`on`: anyone who reaches the dashboard can create an owner account", choices=("off", "on")
    )
    dashboard_signin_limit: int = setting(
        10, "dashboard sign-in attempts (passwords and codes) per username per window", minimum=1
    )
    dashboard_signin_address_limit: int = setting(
        50, "dashboard sign-in attempts per address per window", minimum=1
    )
    dashboard_signin_window: int = setting(900, "that window, in seconds", minimum=1)
    web_loader_port: int = setting(
        1337,
        "the local port the customer panel's page looks for the desktop web loader on "
        "(`http://localhost:<port>/handshake`; KeyAuth's loaders listen on 1337)",
        minimum=1,
    )

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", default_database_url(self.data_dir))
        object.__setattr__(self, "public_url", self.public_url.rstrip("/"))
        if not 1 <= self.web_loader_port <= 65535:
            raise ConfigError(
                f"LICENSEGATE_WEB_LOADER_PORT must be a TCP port (1 to 65535), got {self.web_loader_port}"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Read every declared setting from `environ`; an unusable value raises `ConfigError`
        with a message that names the variable."""
        values: dict[str, Any] = {}
        for declared, parse in _declarations():
            raw = environ.get(env_name(declared))
            if raw is not None and raw.strip():
                values[declared.name] = parse(env_name(declared), raw.strip(), declared.metadata["rule"])
        return cls(**values)

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def env_name(declared: Field[Any]) -> str:
    return ENV_PREFIX + declared.name.upper()


# Reading a variable's text, by the field's type.


def _whole_number(name: str, raw: str, rule: Rule) -> int:
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from exc
    if rule.minimum is not None and value < rule.minimum:
        raise ConfigError(f"{name} must be at least {rule.minimum}, got {value}")
    return value


def _text(name: str, raw: str, rule: Rule) -> str:
    if not rule.choices:
        return raw
    value = raw.lower()
    if value not in rule.choices:
        raise ConfigError(f"{name} must be one of {', '.join(rule.choices)}, got {raw!r}")
    return value


def _items(raw: str) -> Iterator[str]:
    return (part.strip() for part in raw.replace(";", ",").split(",") if part.strip())


def _names(_name: str, raw: str, _rule: Rule) -> tuple[str, ...]:
    return tuple(_items(raw))


def _networks(name: str, raw: str, _rule: Rule) -> tuple[IPNetwork, ...]:
    nets: list[IPNetwork] = []
    for part in _items(raw):
        try:
            nets.append(ipaddress.ip_network(part, strict=False))
        except ValueError as exc:
            raise ConfigError(f"{name}: {part!r} is not an IP address or CIDR") from exc
    return tuple(nets)


def _path(_name: str, raw: str, _rule: Rule) -> Path:
    return Path(raw)


Parser = Callable[[str, str, Rule], object]

PARSERS: dict[object, Parser] = {
    int: _whole_number,
    str: _text,
    str | None: _text,
    Path: _path,
    Path | None: _path,
    tuple[str, ...]: _names,
    tuple[IPNetwork, ...]: _networks,
}


@cache
def _declarations() -> tuple[tuple[Field[Any], Parser], ...]:
    hints = get_type_hints(Settings)
    return tuple((declared, PARSERS[hints[declared.name]]) for declared in fields(Settings))


def declared() -> tuple[Field[Any], ...]:
    """Every setting, in declaration order."""
    return tuple(declared for declared, _ in _declarations())


def shown_default(declared: Field[Any]) -> str:
    rule: Rule = declared.metadata["rule"]
    if rule.shown is not None:
        return rule.shown
    if declared.default in (None, ()):
        return "unset"
    return str(declared.default)


def markdown_table() -> str:
    """The settings table of docs/operations.md."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for each in declared():
        rule: Rule = each.metadata["rule"]
        default = shown_default(each)
        default = default if default == "unset" else f"`{default}`"
        meaning = rule.doc
        if rule.choices:
            meaning += f" (one of {', '.join(f'`{choice}`' for choice in rule.choices)})"
        lines.append(f"| `{env_name(each)}` | {default} | {meaning} |")
    return "\n".join(lines) + "\n"


TABLE_START = "<!-- settings table: written by `licensegate reference` from src/licensegate/config.py -->\n"
TABLE_END = "<!-- end of settings table -->\n"


def with_markdown_table(page: str) -> str:
    """`page` (docs/operations.md) with its settings table rewritten from the declarations."""
    before, start, rest = page.partition(TABLE_START)
    _, end, after = rest.partition(TABLE_END)
    if not (start and end):
        raise ConfigError(
            f"the settings table's markers are missing: {TABLE_START.strip()} ... {TABLE_END.strip()}"
        )
    return before + TABLE_START + "\n" + markdown_table() + "\n" + TABLE_END + after
