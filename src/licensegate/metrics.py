"""Prometheus metrics of a whole `serve` (every worker process), and the access log.

Each worker counts its requests in plain dictionaries (about a microsecond a request; the
multiprocess mode of the usual client library writes a memory-mapped file on every update and cost
about 25 microseconds). Once a second, at shutdown, and before answering `/metrics`, a worker writes
a snapshot of its counts and of its present state (database connections in use, password checks
and Redis calls under way, background jobs) to `<folder>/worker-<pid>.json`, in a private folder
`serve` makes for this run (`FOLDER_VARIABLE`). `/metrics`, whichever worker answers it, adds up
the counters and histograms of every snapshot (a worker that stopped keeps its counts: counters
never go back) and the gauges of workers still running. Another worker's counts are at most about
a second old. Without the folder (a process not started by `serve`), only its own counts show.
The `serve` process itself writes `SERVER_FILE` there: the workers it replaced after their death.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger("licensegate.metrics")

TYPE_KEY = "licensegate.type"  # where an endpoint notes the operation's declared type in the ASGI scope
FOLDER_VARIABLE = "LICENSEGATE_RUN_METRICS_DIR"  # set by `serve` for its workers; not a setting
SERVER_FILE = "server.json"  # the `serve` process's own counts (server.py), beside the workers'
SNAPSHOT_SECONDS = 1.0
# Upper bounds of the latency histogram's buckets, in seconds.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

Labels = tuple[str, ...]
# A gauge reading: its name, its labels, its value.
Reading = tuple[str, Labels, float]

# name -> (type, help, label names)
FAMILIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "licensegate_requests_total": (
        "counter",
        "Requests answered, by interface (client, seller, dashboard, other), operation type and status.",
        ("interface", "type", "status"),
    ),
    "licensegate_request_duration_seconds": (
        "histogram",
        "Time from a request's arrival to its answer, by interface and operation type.",
        ("interface", "type"),
    ),
    "licensegate_background_jobs_total": (
        "counter",
        "Background jobs (e-mail, log forwarding, ...) by outcome: done, failed (an attempt), "
        "given_up (after the last attempt), dropped (too many waiting).",
        ("outcome",),
    ),
    "licensegate_credits_spent_total": (
        "counter",
        "Usage credits the clients' `spend` calls took (refused spends take none).",
        (),
    ),
    "licensegate_named_limit_refusals_total": (
        "counter",
        "Client calls refused by a named rate limit (429 `named_limit_exceeded`), by whose: user or key.",
        ("owner",),
    ),
    "licensegate_background_jobs_pending": ("gauge", "Background jobs under way or waiting to retry.", ()),
    "licensegate_db_connections": (
        "gauge",
        "Database connections of the workers: in_use, open, and max (the pool's size).",
        ("state",),
    ),
    "licensegate_password_checks": (
        "gauge",
        "Password checks (argon2id) running on the hashing threads, and queued for one.",
        ("state",),
    ),
    "licensegate_ratelimit_calls_in_flight": (
        "gauge",
        "Rate-limit calls waiting for Redis (0 without Redis).",
        (),
    ),
    "licensegate_worker_processes": ("gauge", "Worker processes running.", ()),
    "licensegate_worker_restarts_total": (
        "counter",
        "Workers that died (killed, crashed) and were replaced by a new one.",
        (),
    ),
}


class RequestMetrics:
    """The counts of one worker process."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, int], int] = {}
        # (interface, type) -> bucket counts (the last one +Inf), then the sum and the count.
        self.latency: dict[tuple[str, str], list[float]] = {}

    def observe(self, interface: str, type_: str, status: int, seconds: float) -> None:
        key = (interface, type_, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        histogram = self.latency.get((interface, type_))
        if histogram is None:
            histogram = self.latency[(interface, type_)] = [0.0] * (len(BUCKETS) + 3)
        histogram[bisect.bisect_left(BUCKETS, seconds)] += 1
        histogram[-2] += seconds
        histogram[-1] += 1


class Snapshots:
    """Where this worker writes its snapshot and reads every worker's."""

    def __init__(
        self,
        folder: Path | None,
        metrics: RequestMetrics,
        gauges: Callable[[], Iterable[Reading]],
        counters: Callable[[], Iterable[Reading]],
    ) -> None:
        self.folder = folder
        self.metrics = metrics
        self.gauges = gauges  # this worker's present state
        self.counters = counters  # counts kept elsewhere (background jobs)

    def snapshot(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "requests": [[*key, count] for key, count in self.metrics.requests.items()],
            "latency": [[*key, values] for key, values in self.metrics.latency.items()],
            "counters": [[name, list(labels), value] for name, labels, value in self.counters()],
            "gauges": [[name, list(labels), value] for name, labels, value in self.gauges()],
        }

    def write(self) -> None:
        if self.folder is None:
            return
        path = self.folder / f"worker-{os.getpid()}.json"
        # Its own temporary file per thread: `gather` (on the event loop) may write while
        # `keep_writing` (on a thread) does, and one's rename would take the other's file away.
        temporary = path.with_suffix(f".{threading.get_ident()}.tmp")
        temporary.write_bytes(orjson.dumps(self.snapshot()))
        os.replace(temporary, path)

    def gather(self) -> list[dict[str, Any]]:
        """Every worker's snapshot (this one's fresh)."""
        if self.folder is None:
            return [self.snapshot()]
        self.write()
        found = []
        for path in [*sorted(self.folder.glob("worker-*.json")), self.folder / SERVER_FILE]:
            with contextlib.suppress(OSError, orjson.JSONDecodeError):
                found.append(orjson.loads(path.read_bytes()))
        return found

    async def keep_writing(self) -> None:
        """For as long as the worker runs (cancelled at shutdown, after a last write); the first
        write at once, so a worker just started counts among those running."""
        try:
            while True:
                try:
                    await asyncio.to_thread(self.write)
                except OSError as exc:
                    log.warning("cannot write this worker's metrics: %s", exc)
                await asyncio.sleep(SNAPSHOT_SECONDS)
        finally:
            with contextlib.suppress(OSError):
                self.write()


def server_snapshot(counters: Iterable[Reading]) -> dict[str, Any]:
    """A snapshot of the `serve` process: counters only; it is no worker."""
    return {
        "pid": os.getpid(),
        "role": "server",
        "requests": [],
        "latency": [],
        "counters": [[name, list(labels), value] for name, labels, value in counters],
        "gauges": [],
    }


def process_alive(pid: int) -> bool:
    """Whether a process `pid` runs (on this machine)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(names: Iterable[str], values: Iterable[object]) -> str:
    pairs = [f'{name}="{_escape(str(value))}"' for name, value in zip(names, values, strict=True)]
    return "{" + ",".join(pairs) + "}" if pairs else ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def exposition(snapshots: list[dict[str, Any]]) -> str:
    """The Prometheus text format (0.0.4) of the sum of `snapshots`."""
    requests: dict[tuple[str, ...], float] = {}
    latency: dict[tuple[str, ...], list[float]] = {}
    counters: dict[str, dict[tuple[str, ...], float]] = {}
    gauges: dict[str, dict[tuple[str, ...], float]] = {}
    live = 0
    for snap in snapshots:
        for interface, type_, status, count in snap["requests"]:
            counted: tuple[str, ...] = (interface, type_, str(status))
            requests[counted] = requests.get(counted, 0) + count
        for interface, type_, values in snap["latency"]:
            into = latency.setdefault((interface, type_), [0.0] * len(values))
            for index, value in enumerate(values):
                into[index] += value
        for name, labels, value in snap["counters"]:
            family = counters.setdefault(name, {})
            family[tuple(labels)] = family.get(tuple(labels), 0) + value
        if snap.get("role") != "server" and process_alive(int(snap["pid"])):
            live += 1
            for name, labels, value in snap["gauges"]:
                family = gauges.setdefault(name, {})
                family[tuple(labels)] = family.get(tuple(labels), 0) + value
    gauges["licensegate_worker_processes"] = {(): live}
    lines: list[str] = []

    def head(name: str) -> tuple[str, ...]:
        kind, text, names = FAMILIES[name]
        lines.append(f"# HELP {name} {text}")
        lines.append(f"# TYPE {name} {kind}")
        return names

    names = head("licensegate_requests_total")
    for key, count in sorted(requests.items()):
        lines.append(f"licensegate_requests_total{_labels(names, key)} {_number(count)}")
    names = head("licensegate_request_duration_seconds")
    for key, values in sorted(latency.items()):
        cumulative = 0.0
        for bound, count in zip((*BUCKETS, float("inf")), values, strict=False):
            cumulative += count
            le = "+Inf" if bound == float("inf") else repr(bound)
            labels = _labels((*names, "le"), (*key, le))
            lines.append(f"licensegate_request_duration_seconds_bucket{labels} {_number(cumulative)}")
        lines.append(f"licensegate_request_duration_seconds_sum{_labels(names, key)} {_number(values[-2])}")
        lines.append(f"licensegate_request_duration_seconds_count{_labels(names, key)} {_number(values[-1])}")
    for name in FAMILIES:
        if name in ("licensegate_requests_total", "licensegate_request_duration_seconds"):
            continue
        family = counters.get(name) or gauges.get(name) or {}
        names = head(name)
        if not family and not names:
            family = {(): 0}  # nothing counted yet, or no worker has it: zero, not absent
        for labels, value in sorted(family.items()):
            lines.append(f"{name}{_labels(names, labels)} {_number(value)}")
    return "\n".join(lines) + "\n"


def interface_of(path: str) -> str:
    if path.startswith("/api/"):
        return "seller" if path.startswith("/api/seller") else "client"
    if path.startswith("/dashboard"):
        return "dashboard"
    return "other"


_second: list[Any] = [-1, ""]  # the last whole second formatted, and its text


def _timestamp() -> str:
    """Now in UTC as ISO 8601 with milliseconds (the second's text made once a second)."""
    now = time.time()
    second = int(now)
    if second != _second[0]:
        _second[:] = [second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))]
    return f"{_second[1]}.{int((now - second) * 1000):03d}Z"


def access_line(
    *,
    request_id: str,
    interface: str,
    type_: str,
    method: str,
    path: str,
    status: int,
    seconds: float,
    client: str,
    worker: int,
) -> bytes:
    """One access-log line: JSON, with no secret (the path without its query string, the
    operation's declared type, never a parameter)."""
    return orjson.dumps(
        {
            "time": _timestamp(),
            "request_id": request_id,
            "interface": interface,
            "type": type_,
            "method": method,
            "path": path,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
            "client": client,
            "worker": worker,
        },
        option=orjson.OPT_APPEND_NEWLINE,
    )


def run_folder() -> Path | None:
    folder = os.environ.get(FOLDER_VARIABLE, "").strip()
    return Path(folder) if folder else None


def now() -> float:
    return time.perf_counter()
