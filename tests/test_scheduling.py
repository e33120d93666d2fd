"""`LICENSEGATE_SCHEDULING=batch`: a real `licensegate serve` puts itself under Linux's SCHED_BATCH
before it starts its workers, so every process and thread of the service runs under it (each
inherits it from the thread that made it), and the service answers as before."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from licensegate import server
from tests import databases
from tests.conftest import serve_live
from tests.live import LiveServer

pytestmark = pytest.mark.server

POLICY = 38  # /proc/<pid>/task/<tid>/stat: the scheduling policy, counted after the command's ")"


def policies(pid: int) -> dict[int, int]:
    """Each thread of a process and its scheduling policy."""
    found: dict[int, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        found[int(task.name)] = int(fields[POLICY])
    return found


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def batch_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    yield from serve_live(request, tmp_path_factory, LICENSEGATE_SCHEDULING="batch")


def test_every_thread_of_every_worker_runs_under_batch(batch_server: LiveServer) -> None:
    answer = httpx.get(f"{batch_server.url}/readyz", timeout=30)
    assert answer.status_code == 200, answer.text
    workers = batch_server.worker_pids()
    assert len(workers) == 2
    for pid in [batch_server.process.pid, *workers]:
        threads = policies(pid)
        assert len(threads) > 1 or pid == batch_server.process.pid
        assert set(threads.values()) == {os.SCHED_BATCH}, (pid, threads)


def test_normal_leaves_the_policy_as_it_was() -> None:
    before = policies(os.getpid())
    server.schedule("normal")
    assert policies(os.getpid()) == before


def test_batch_puts_the_calling_thread_under_it() -> None:
    # In a thread of its own: the policy is the calling thread's, and it ends with the thread.
    seen: list[tuple[str, int]] = []

    def run() -> None:
        seen.append((server.schedule("batch"), os.sched_getscheduler(0)))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [("batch", os.SCHED_BATCH)]


def test_a_refused_batch_is_said_and_leaves_the_normal_policy(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*_args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_setscheduler", refuse)
    before = policies(os.getpid())
    assert server.schedule("batch") == "normal"
    assert policies(os.getpid()) == before
    said = capsys.readouterr().err
    assert "LICENSEGATE_SCHEDULING=batch was refused (Operation not permitted)" in said
    assert "serving under the normal policy" in said


def test_a_system_without_batch_serves_under_its_normal_policy_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delattr(os, "SCHED_BATCH")
    assert server.schedule("batch") == "normal"
    assert capsys.readouterr().err == ""
