"""Settings from environment variables, with defaults that start a working service on SQLite."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

ENV_PREFIX = "LICENSEGATE_"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class ConfigError(ValueError):
    """A setting has a value the service cannot use."""


def _env(name: str) -> str | None:
    value = os.environ.get(ENV_PREFIX + name)
    if value is None or value.strip() == "":
        return None
    return value.strip()


def _int(name: str, default: int, minimum: int = 0) -> int:
    raw = _env(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{ENV_PREFIX}{name} must be a whole number, got {raw!r}") from exc
    if value < minimum:
        raise ConfigError(f"{ENV_PREFIX}{name} must be at least {minimum}, got {value}")
    return value


def _networks(name: str) -> tuple[IPNetwork, ...]:
    raw = _env(name)
    if raw is None:
        return ()
    nets: list[IPNetwork] = []
    for part in raw.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            nets.append(ipaddress.ip_network(part, strict=False))
        except ValueError as exc:
            raise ConfigError(f"{ENV_PREFIX}{name}: {part!r} is not an IP address or CIDR") from exc
    return tuple(nets)


def _list(name: str) -> tuple[str, ...]:
    raw = _env(name)
    if raw is None:
        return ()
    return tuple(part.strip() for part in raw.replace(";", ",").split(",") if part.strip())


def _choice(name: str, choices: tuple[str, ...], default: str) -> str:
    raw = (_env(name) or default).lower()
    if raw not in choices:
        raise ConfigError(f"{ENV_PREFIX}{name} must be one of {', '.join(choices)}, got {raw!r}")
    return raw


def default_database_url(data_dir: Path) -> str:
    return f"sqlite:///{data_dir / 'licensegate.db'}"


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path = Path("data")
    database_url: str = ""
    redis_url: str | None = None
    redis_prefix: str = "lg"  # namespaces every Redis key, so several deployments can share one server
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    # Request size limits: the whole query string, and a non-upload request body.
    max_query_bytes: int = 16 * 1024
    max_body_bytes: int = 64 * 1024
    # argon2id cost; the default is OWASP's minimum profile (about 22 ms per verify here).
    argon2_time_cost: int = 2
    argon2_memory_kib: int = 19 * 1024
    argon2_parallelism: int = 1
    password_threads: int = 2
    # Seller API requests allowed per application per window.
    seller_rate_limit: int = 3000
    seller_rate_window: int = 60
    # Proxies whose X-Forwarded-For header is believed.
    trusted_proxies: tuple[IPNetwork, ...] = field(default_factory=tuple)
    pg_pool_size: int = 10
    log_level: str = "warning"
    # Files: uploads up to this size; the client API's Download File sends at most client_file_bytes.
    max_upload_bytes: int = 50 * 1024 * 1024
    client_file_bytes: int = 8 * 1024 * 1024
    # Outbound HTTP (files by URL, webhooks, log forwarding).
    outbound_allow: tuple[str, ...] = ()  # hosts or CIDRs that may be reached although internal
    outbound_timeout: int = 10
    outbound_max_bytes: int = 1024 * 1024  # largest reply read from a webhook
    # E-mail (password reset) through SMTP.
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_user: str | None = None
    smtp_password: str | None = None
    smtp_from: str = "licensegate@localhost"
    smtp_security: str = "starttls"  # starttls | tls | none
    public_url: str = "http://127.0.0.1:8000"  # how users reach this service (links in e-mails)

    @classmethod
    def from_env(cls) -> Settings:
        data_dir = Path(_env("DATA_DIR") or "data")
        settings = cls(
            data_dir=data_dir,
            database_url=_env("DATABASE_URL") or default_database_url(data_dir),
            redis_url=_env("REDIS_URL"),
            redis_prefix=_env("REDIS_PREFIX") or "lg",
            host=_env("HOST") or "127.0.0.1",
            port=_int("PORT", 8000, 0),
            workers=_int("WORKERS", 1, 1),
            max_query_bytes=_int("MAX_QUERY_BYTES", 16 * 1024, 1024),
            max_body_bytes=_int("MAX_BODY_BYTES", 64 * 1024, 1024),
            argon2_time_cost=_int("ARGON2_TIME_COST", 2, 1),
            argon2_memory_kib=_int("ARGON2_MEMORY_KIB", 19 * 1024, 8),
            argon2_parallelism=_int("ARGON2_PARALLELISM", 1, 1),
            password_threads=_int("PASSWORD_THREADS", 2, 1),
            seller_rate_limit=_int("SELLER_RATE_LIMIT", 3000, 1),
            seller_rate_window=_int("SELLER_RATE_WINDOW", 60, 1),
            trusted_proxies=_networks("TRUSTED_PROXIES"),
            pg_pool_size=_int("PG_POOL_SIZE", 10, 1),
            log_level=(_env("LOG_LEVEL") or "warning").lower(),
            max_upload_bytes=_int("MAX_UPLOAD_BYTES", 50 * 1024 * 1024, 1024),
            client_file_bytes=_int("CLIENT_FILE_BYTES", 8 * 1024 * 1024, 1024),
            outbound_allow=_list("OUTBOUND_ALLOW"),
            outbound_timeout=_int("OUTBOUND_TIMEOUT", 10, 1),
            outbound_max_bytes=_int("OUTBOUND_MAX_BYTES", 1024 * 1024, 1024),
            smtp_host=_env("SMTP_HOST"),
            smtp_port=_int("SMTP_PORT", 587, 1),
            smtp_user=_env("SMTP_USER"),
            smtp_password=_env("SMTP_PASSWORD"),
            smtp_from=_env("SMTP_FROM") or "licensegate@localhost",
            smtp_security=_choice("SMTP_SECURITY", ("starttls", "tls", "none"), "starttls"),
            public_url=(_env("PUBLIC_URL") or "http://127.0.0.1:8000").rstrip("/"),
        )
        return settings

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]
