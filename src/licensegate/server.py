"""Runs the HTTP server (Granian) with limits that keep slow or silent clients from using it up.

Granian (through hyper) enforces the header timeout, which also closes idle keep-alive
connections: hyper reuses one timer for "waiting for the next request's headers". It does so only
in pure HTTP/1 mode: in its automatic mode a connection that never sends a byte waits forever to
be classified as HTTP/1 or HTTP/2, so the service speaks HTTP/1.1 only (clients of a licensing
API do; a TLS proxy in front may still offer HTTP/2 to them). The body timeout is enforced by
the application (`app.BodyDeadline`). Each open connection holds one of a worker's
`worker_connections` places and one file descriptor.

A worker that dies (killed by the kernel's out-of-memory killer, a crash) is replaced by a new one
while the others keep answering (Granian's `respawn_failed_workers`); each replacement is said on
stderr and counted in `/metrics` (`licensegate_worker_restarts_total`, through a file in the run's
metrics folder, `metrics.SERVER_FILE`). Granian gives up, and `serve` exits with status 1, when a
worker dies again within 5.5 s of being replaced (a crash loop: a service manager's restart is
then the better remedy).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

import orjson

from licensegate import metrics
from licensegate.config import Settings

# Granian's read buffer for a request line and its headers (its default, named here: docs/operations.md
# states it). Over it, hyper answers an empty 431 itself; under it the service sees the request and
# answers oversized headers in the path's dialect (`LICENSEGATE_MAX_HEADER_BYTES`, far lower).
HEAD_BUFFER_BYTES = 8192 + 4096 * 100

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


def schedule(policy: str) -> str:
    """Put this thread under `policy` before the workers start: processes and threads inherit it
    from the thread that makes them. Under `batch` (SCHED_BATCH) a thread that wakes waits for the
    running one's time slice instead of preempting it: a worker hands each request between its
    HTTP thread and its Python thread, and on a virtual machine a wake-up that preempts across
    cores costs tens of microseconds (docs/operations.md). Needs no privilege on Linux; a system
    without the policy (not Linux) or one that refuses it (a sandbox's filter) leaves the service
    under its normal one, which serves the same, only slower there. Returns the policy in force."""
    if policy != "batch":
        return "normal"
    batch = getattr(os, "SCHED_BATCH", None)
    if batch is None or not hasattr(os, "sched_setscheduler"):
        return "normal"  # not Linux: nothing to say at every start
    try:
        os.sched_setscheduler(0, batch, os.sched_param(0))
    except OSError as exc:
        print(
            f"licensegate: LICENSEGATE_SCHEDULING=batch was refused ({exc.strerror or exc}); "
            "serving under the normal policy",
            file=sys.stderr,
        )
        return "normal"
    return "batch"


def connections_per_worker(settings: Settings, open_files: int) -> int:
    """`worker_connections`, lowered to what the open-file limit allows a worker."""
    budget = open_files - RESERVED_FILES - settings.pg_pool_size
    return max(16, min(settings.worker_connections, budget))


def how_it_ended(exitcode: int | None) -> str:
    """A dead process's end in words, from `multiprocessing`'s exit code (negative: a signal)."""
    if exitcode is None:
        return "ended"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name}"
    return f"exited with status {exitcode}"


class Restarts:
    """The workers this `serve` replaced, written where every worker's `/metrics` reads them."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.count = 0

    def record(self, number: int, old_pid: int | None, exitcode: int | None, new_pid: int | None) -> None:
        self.count += 1
        print(
            f"licensegate: worker-{number} (pid {old_pid}) {how_it_ended(exitcode)}; "
            f"started worker-{number} again (pid {new_pid})",
            file=sys.stderr,
            flush=True,
        )
        if self.folder is None:
            return
        snapshot = metrics.server_snapshot([("licensegate_worker_restarts_total", (), float(self.count))])
        path = self.folder / metrics.SERVER_FILE
        temporary = path.with_suffix(".tmp")
        try:
            temporary.write_bytes(orjson.dumps(snapshot))
            os.replace(temporary, path)
        except OSError as exc:
            print(f"licensegate: cannot write the count of worker restarts: {exc}", file=sys.stderr)


def supervising_server(restarts: Restarts) -> Any:
    """Granian's server class, telling `restarts` of each worker it replaces after its death."""
    # The process-based server (what `granian.server.Server` is on a Python with the GIL): its
    # workers are processes, which is what a killed worker means here.
    from granian.server.mp import MPServer

    class Supervising(MPServer):
        def _respawn_workers(self, workers: list[int], *args: Any, **kwargs: Any) -> None:
            # Granian also respawns live workers (a reload); only the dead ones are counted.
            dead = {
                idx: (self.wrks[idx].inner.pid, self.wrks[idx].inner.exitcode)
                for idx in workers
                if not self.wrks[idx].inner.is_alive()
            }
            super()._respawn_workers(workers, *args, **kwargs)
            for idx, (pid, exitcode) in dead.items():
                restarts.record(idx + 1, pid, exitcode, self.wrks[idx].inner.pid)

    return Supervising


SERVICE_APP = "licensegate.app:create_app"


def run(settings: Settings, application: str = SERVICE_APP) -> None:
    """Serve `application` (the import path of an ASGI application's factory: the service's own
    unless a benchmark puts a bare one in its place) with the settings' address, workers and limits."""
    from granian.constants import HTTPModes, Interfaces, Loops
    from granian.http import HTTP1Settings

    open_files = raise_open_file_limit()
    connections = connections_per_worker(settings, open_files)
    if connections < settings.worker_connections:
        print(
            f"licensegate: serving at most {connections} connections per worker instead of "
            f"LICENSEGATE_WORKER_CONNECTIONS={settings.worker_connections}: the open-file limit is "
            f"{open_files} (raise it with `ulimit -n` or LimitNOFILE=)",
            file=sys.stderr,
        )
    schedule(settings.scheduling)
    server_class = supervising_server(Restarts(metrics.run_folder()))
    server_class(
        application,
        address=settings.host,
        port=settings.port,
        interface=Interfaces.ASGI,
        workers=settings.workers,
        loop=Loops.uvloop,
        factory=True,
        log_level=settings.log_level,
        log_access=False,
        http=HTTPModes.http1,
        http1_settings=HTTP1Settings(
            header_read_timeout=settings.header_timeout * 1000,
            keep_alive=True,
            max_buffer_size=HEAD_BUFFER_BYTES,
        ),
        backlog=settings.backlog,
        backpressure=connections,
        respawn_failed_workers=True,
    ).serve()
