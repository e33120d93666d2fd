"""Runs the HTTP server (Granian) with limits that keep slow or silent clients from using it up.

Granian (through hyper) enforces the header timeout, which also closes idle keep-alive
connections: hyper reuses one timer for "waiting for the next request's headers". It does so only
in pure HTTP/1 mode: in its automatic mode a connection that never sends a byte waits forever to
be classified as HTTP/1 or HTTP/2, so the service speaks HTTP/1.1 only (clients of a licensing
API do; a TLS proxy in front may still offer HTTP/2 to them). The body timeout is enforced by
the application (`app.BodyDeadline`). Each open connection holds one of a worker's
`worker_connections` places and one file descriptor.
"""

from __future__ import annotations

import resource
import sys

from licensegate.config import Settings

# Files a worker opens besides client connections: the database and its log, lock and shared-memory
# files, pooled database connections, Redis, uploads being written, outbound requests.
RESERVED_FILES = 256


def raise_open_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (worker processes inherit
    it) and return the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass  # keep the soft limit; connections are fitted to it below
    return soft


def connections_per_worker(settings: Settings, open_files: int) -> int:
    """`worker_connections`, lowered to what the open-file limit allows a worker."""
    budget = open_files - RESERVED_FILES - settings.pg_pool_size
    return max(16, min(settings.worker_connections, budget))


def run(settings: Settings) -> None:
    from granian.constants import HTTPModes, Interfaces, Loops
    from granian.http import HTTP1Settings
    from granian.server import Server

    open_files = raise_open_file_limit()
    connections = connections_per_worker(settings, open_files)
    if connections < settings.worker_connections:
        print(
            f"licensegate: serving at most {connections} connections per worker instead of "
            f"LICENSEGATE_WORKER_CONNECTIONS={settings.worker_connections}: the open-file limit is "
            f"{open_files} (raise it with `ulimit -n` or LimitNOFILE=)",
            file=sys.stderr,
        )
    Server(
        "licensegate.app:create_app",
        address=settings.host,
        port=settings.port,
        interface=Interfaces.ASGI,
        workers=settings.workers,
        loop=Loops.uvloop,
        factory=True,
        log_level=settings.log_level,  # type: ignore[arg-type]
        log_access=False,
        http=HTTPModes.http1,
        http1_settings=HTTP1Settings(header_read_timeout=settings.header_timeout * 1000, keep_alive=True),
        backlog=settings.backlog,
        backpressure=connections,
    ).serve()
