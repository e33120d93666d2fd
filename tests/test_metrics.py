"""The sum of the workers' snapshots: counters and histograms of every worker, even one that
stopped; gauges only of workers still running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from licensegate import metrics


def a_dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def snapshot_of(pid: int, requests: int, in_use: int, seconds: float) -> dict[str, object]:
    counts = metrics.RequestMetrics()
    for _ in range(requests):
        counts.observe("client", "license", 200, seconds)
    readings = [("licensegate_db_connections", ("in_use",), float(in_use))]
    outcomes = [("licensegate_background_jobs_total", ("done",), 2.0)]
    snap = metrics.Snapshots(None, counts, lambda: readings, lambda: outcomes).snapshot()
    snap["pid"] = pid
    read_back: dict[str, object] = json.loads(json.dumps(snap))  # as read back from its file
    return read_back


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_counts_add_up_and_gauges_come_from_running_workers_only() -> None:
    running = snapshot_of(os.getpid(), 3, in_use=1, seconds=0.0002)
    stopped = snapshot_of(a_dead_pid(), 4, in_use=5, seconds=0.3)
    found = samples(metrics.exposition([running, stopped]))
    labels = (("interface", "client"), ("status", "200"), ("type", "license"))
    assert found[("licensegate_requests_total", labels)] == 7
    histogram = (("interface", "client"), ("type", "license"))

    def bucket(le: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        return (
            "licensegate_request_duration_seconds_bucket",
            (("interface", "client"), ("le", le), ("type", "license")),
        )

    assert found[("licensegate_request_duration_seconds_count", histogram)] == 7
    assert found[bucket("0.0005")] == 3
    assert found[bucket("0.5")] == 7
    assert found[bucket("+Inf")] == 7
    assert abs(found[("licensegate_request_duration_seconds_sum", histogram)] - 1.2006) < 1e-9
    assert found[("licensegate_background_jobs_total", (("outcome", "done"),))] == 4
    assert found[("licensegate_db_connections", (("state", "in_use"),))] == 1  # the stopped one's 5 left out
    assert found[("licensegate_worker_processes", ())] == 1


def test_snapshots_meet_in_the_folder(tmp_path: Path) -> None:
    counts = metrics.RequestMetrics()
    counts.observe("seller", "add", 200, 0.01)
    mine = metrics.Snapshots(tmp_path, counts, list, list)
    (tmp_path / "worker-1.json").write_text(json.dumps(snapshot_of(a_dead_pid(), 2, 0, 0.001)))
    (tmp_path / "worker-2.json").write_text("{not json")  # a torn file is skipped, never fatal
    gathered = mine.gather()
    assert (tmp_path / f"worker-{os.getpid()}.json").exists()
    assert len(gathered) == 2


def test_label_values_are_escaped() -> None:
    counts = metrics.RequestMetrics()
    counts.observe("other", 'a"b\\c\nd', 404, 0.001)
    snap = metrics.Snapshots(None, counts, list, list).snapshot()
    found = samples(metrics.exposition([snap]))
    assert (
        found[
            ("licensegate_requests_total", (("interface", "other"), ("status", "404"), ("type", 'a"b\\c\nd')))
        ]
        == 1
    )


def test_the_serve_process_counts_restarts_and_is_no_worker() -> None:
    running = snapshot_of(os.getpid(), 1, in_use=0, seconds=0.001)
    assert samples(metrics.exposition([running]))[("licensegate_worker_restarts_total", ())] == 0
    server = metrics.server_snapshot([("licensegate_worker_restarts_total", (), 2.0)])
    found = samples(metrics.exposition([running, json.loads(json.dumps(server))]))
    assert found[("licensegate_worker_restarts_total", ())] == 2
    assert found[("licensegate_worker_processes", ())] == 1
