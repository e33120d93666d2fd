"""The floor under a signed client answer on this machine's HTTP stack: how fast a License Login
re-check could possibly go, measured beside the service's own `/healthz` and re-check.

A bare ASGI application (no Starlette, no database, no rate limits, no metrics, no validation)
is served by what serves the service (`licensegate.server.run`: Granian with the same interface,
loop, HTTP mode, worker count, connection limits and supervising server) and answers, each
under `wrk` like `bench/run.py`'s targets:

- `floor: fixed answer`: a `POST` with a re-check's query string, answered with a fixed JSON body:
  what the stack costs a client call that does nothing;
- `floor: fixed answer, signed`: the same, the body signed as every client answer must be
  (Ed25519 over timestamp and body, `licensegate.signing`);
- `floor: re-check in memory, signed`: the query's pairs parsed, the session looked up in a dict
  of the same `--hot` sessions, its key and HWID compared, the answer built with `orjson` from the
  user's row and signed: a re-check with every check of the real one left out and everything held.

The real service runs beside it (SQLite, seeded like `bench/run.py`'s client targets) for its
`/healthz`, re-check and `check` in the same rounds, so the ratios compare like with like.

    .venv/bin/python bench/floor.py --duration 6 --rounds 2 --output /tmp/floor.md
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import run as bench  # noqa: E402
from bench import targets as goals  # noqa: E402
from licensegate import server  # noqa: E402
from licensegate.config import Settings  # noqa: E402
from licensegate.signing import Signer, new_seed  # noqa: E402

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SESSIONS = 1000
FIXED = orjson.dumps({"success": True, "message": "Logged in!", "nonce": "0" * 32})
JSON_HEADERS = [(b"content-type", b"application/json")]


def floor_sessions() -> dict[str, tuple[str, str, dict[str, Any]]]:
    """The same sessions in every worker and in the load generator (a fixed seed)."""
    draw = random.Random(24)
    held: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for index in range(SESSIONS):
        session = f"{draw.getrandbits(128):032x}"
        key = f"KEY-{draw.getrandbits(64):016x}"
        hwid = f"S-1-5-21-{draw.getrandbits(32)}"
        user = {
            "username": key,
            "subscriptions": [{"subscription": "default", "key": key, "expiry": str(2_000_000_000 + index)}],
            "ip": "127.0.0.1",
            "hwid": hwid,
            "createdate": "1790000000",
            "lastlogin": "1790000000",
        }
        held[session] = (key, hwid, user)
    return held


def create_app(seed: bytes | None = None) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The floor's ASGI application (Granian calls this factory in each worker)."""
    signer = Signer(seed or new_seed())
    held = floor_sessions()

    async def drain(receive: Receive) -> None:
        while True:
            message = await receive()
            if not message.get("more_body"):
                return

    async def answer(send: Send, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def signed(body: bytes) -> list[tuple[bytes, bytes]]:
        timestamp = str(int(time.time())).encode("ascii")
        return [
            *JSON_HEADERS,
            (b"x-signature-timestamp", timestamp),
            (b"x-signature-ed25519", signer.sign(timestamp + body).encode("ascii")),
        ]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        path = scope["path"]
        if path == "/healthz":
            await answer(send, b'{"status":"ok"}', JSON_HEADERS)
            return
        await drain(receive)
        if path == "/fixed":
            await answer(send, FIXED, JSON_HEADERS)
        elif path == "/signed":
            await answer(send, FIXED, signed(FIXED))
        else:  # /recheck
            pairs = dict(
                pair.split("=", 1)
                for pair in scope["query_string"].decode("latin-1").split("&")
                if "=" in pair
            )
            found = held.get(pairs.get("sessionid", ""))
            if found is None or found[0] != pairs.get("key") or found[1] != pairs.get("hwid"):
                body = orjson.dumps({"success": False, "message": "Invalid session"})
            else:
                body = orjson.dumps(
                    {
                        "success": True,
                        "message": "Logged in!",
                        "info": found[2],
                        "nonce": os.urandom(16).hex(),
                    }
                )
            await answer(send, body, signed(body))

    return app


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve_floor(port: int, workers: int) -> None:
    """The floor application, served by what serves the service (`licensegate.server.run`)."""
    server.run(Settings(host="127.0.0.1", port=port, workers=workers), "bench.floor:create_app")


def start_floor(workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__)), "--serve", str(port), "--workers", str(workers)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the floor server did not start")


def floor_targets(url: str) -> list[bench.Target]:
    held = floor_sessions()
    query = "&".join(
        f"{k}={v}" for k, v in {"type": "license", "name": "bench", "ownerid": "0123456789"}.items()
    )
    recheck = [
        f"/recheck?{query}&sessionid={session}&key={key}&hwid={hwid}"
        for session, (key, hwid, _user) in held.items()
    ]
    with httpx.Client(base_url=url, timeout=10) as http:
        assert http.post(recheck[0]).json()["success"] is True
    fixed = [path.replace("/recheck?", "/fixed?", 1) for path in recheck]
    signed = [path.replace("/recheck?", "/signed?", 1) for path in recheck]
    return [
        bench.Target("floor: fixed answer", "POST", lambda: fixed, url=url),
        bench.Target("floor: fixed answer, signed", "POST", lambda: signed, url=url),
        bench.Target("floor: re-check in memory, signed", "POST", lambda: recheck, url=url),
    ]


SERVICE_TARGETS = ("healthz", goals.RECHECK, goals.RECHECK_13, goals.CHECK)


def measure(args: argparse.Namespace) -> tuple[dict[str, list[float]], dict[str, list[float]], str]:
    rps: dict[str, list[float]] = {}
    p99: dict[str, list[float]] = {}
    load_before = "{:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())
    floor, floor_url = start_floor(args.workers)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="lgfloor-") as tmp,
            bench.bench_server("sqlite", Path(tmp), args.workers) as (_url, server),
        ):
            folder = Path(tmp)
            service = [bench.Target("healthz", "GET", lambda: ["/healthz"])]
            service += [t for t in bench.seed_client(server, args) if t.name in SERVICE_TARGETS]
            targets = service + floor_targets(floor_url)
            for target in targets:  # warm-up
                bench.run_wrk(target.url or server.url, target, folder, 3, args.connections, args.threads)
            for _round in range(args.rounds):
                for target in targets:
                    stats = bench.run_wrk(
                        target.url or server.url,
                        target,
                        folder,
                        args.duration,
                        args.connections,
                        args.threads,
                    )
                    rps.setdefault(target.name, []).append(stats["requests"] / (stats["duration_us"] / 1e6))
                    p99.setdefault(target.name, []).append(stats["p99_us"] / 1000)
                    print(f"  {target.name}: {rps[target.name][-1]:,.0f} req/s", file=sys.stderr)
    finally:
        floor.terminate()
        floor.wait(timeout=30)
    load_after = "{:.2f} / {:.2f} / {:.2f}".format(*os.getloadavg())
    return rps, p99, f"{load_before} before, {load_after} after"


def report(
    args: argparse.Namespace, rps: dict[str, list[float]], p99: dict[str, list[float]], load: str
) -> str:
    healthz = statistics.median(rps["healthz"])
    lines = [
        "| server | operation | requests/s | % of the service's /healthz | p99 ms |",
        "|---|---|---|---|---|",
    ]
    for name, values in rps.items():
        where = "floor (bare ASGI)" if name.startswith("floor:") else "licensegate (SQLite)"
        median = statistics.median(values)
        lines.append(
            f"| {where} | {name.removeprefix('floor: ')} | {median:,.0f} | {100 * median / healthz:.1f}% | "
            f"{statistics.median(p99[name]):.2f} |"
        )
    return "\n".join(
        [
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by `bench/floor.py --duration "
            f"{args.duration} --rounds {args.rounds}` ({args.workers} workers, `wrk -t{args.threads} "
            f"-c{args.connections}`, medians of the rounds); {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores; load average (1, 5, 15 min) {load}.",
            "",
            *lines,
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    bench.add_load_arguments(parser)
    parser.add_argument("--serve", type=int, default=0, help=argparse.SUPPRESS)  # the floor's own process
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    if args.serve:
        serve_floor(args.serve, args.workers)
        return 0
    rps, p99, load = measure(args)
    text = report(args, rps, p99, load)
    if args.output is not None:
        args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
