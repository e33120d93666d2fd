"""The HTTP server's limits: a real `licensegate serve` keeps answering while thousands of slow or
silent connections are open, and closes those connections once their header or body time is up."""

from __future__ import annotations

import contextlib
import resource
import selectors
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from licensegate import server
from licensegate.config import Settings
from tests import databases
from tests.conftest import serve_live
from tests.live import LiveServer

pytestmark = pytest.mark.server

SLOW = 3000  # connections: a third silent, a third trickling headers, a third trickling a body
TIMEOUT = 4  # seconds, for both the header and the body timeout of the server under test
ANSWER_BOUND = 10.0  # seconds: generous; others must be answered, not quickly measured


def _allow_open_files(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.fail(f"this test needs {needed} open files; the hard limit is {hard} (raise `ulimit -Hn`)")
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def slow_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    # The server process inherits this limit (and raises it further itself).
    _allow_open_files(2 * SLOW + 1024)
    yield from serve_live(
        request,
        tmp_path_factory,
        LICENSEGATE_HEADER_TIMEOUT=str(TIMEOUT),
        LICENSEGATE_BODY_TIMEOUT=str(TIMEOUT),
    )


class SlowClients:
    """Opens connections that send nothing, or one byte of headers or of a body per second."""

    def __init__(self, url: str, count: int) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.address = (host, int(port))
        self.sockets: list[socket.socket] = []
        self.trickling: list[socket.socket] = []
        self.kinds: dict[socket.socket, str] = {}
        self._stop = threading.Event()
        self._count = count

    def open(self) -> None:
        for index in range(self._count):
            sock = socket.socket()
            sock.settimeout(5)
            sock.connect(self.address)
            kind = index % 3
            if kind == 1:  # headers that never end
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                self.trickling.append(sock)
            elif kind == 2:  # a body that never ends
                sock.sendall(
                    b"POST /api/1.0/ HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ntype="
                )
                self.trickling.append(sock)
            self.sockets.append(sock)
            self.kinds[sock] = ("silent", "headers", "body")[kind]
        threading.Thread(target=self._trickle, daemon=True).start()

    def _trickle(self) -> None:
        while not self._stop.wait(1.0):
            for sock in self.trickling:
                with contextlib.suppress(OSError):  # closed by the server, as it should be in time
                    sock.send(b"x")

    def wait_closed_by_server(self, within: float) -> dict[str, int]:
        """Wait until the server has closed every connection; return how many of each kind are
        still open."""
        selector = selectors.DefaultSelector()
        for sock in self.sockets:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        still_open = set(self.sockets)
        deadline = time.monotonic() + within
        while still_open and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=0.5):
                ready = key.fileobj
                assert isinstance(ready, socket.socket)
                try:
                    data = ready.recv(65536)
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    data = b""
                if not data:  # end of stream (a refused body first gets its 400 answer)
                    selector.unregister(ready)
                    still_open.discard(ready)
        selector.close()
        return {
            kind: sum(self.kinds[sock] == kind for sock in still_open)
            for kind in ("silent", "headers", "body")
        }

    def close(self) -> None:
        self._stop.set()
        for sock in self.sockets:
            sock.close()


def test_others_are_answered_while_thousands_of_slow_connections_are_open(slow_server: LiveServer) -> None:
    created = slow_server.create_app("slow-clients", "app")
    slow = SlowClients(slow_server.url, SLOW)
    try:
        slow.open()
        # The client's timeout is the bound: an answer that takes longer fails the test.
        with httpx.Client(base_url=slow_server.url, timeout=ANSWER_BOUND) as http:
            assert http.get("/healthz").status_code == 200
            init = http.post(
                "/api/1.0/", params={"type": "init", "ownerid": created["ownerid"], "name": created["name"]}
            )
            assert init.status_code == 200, init.text
            assert init.json()["success"] is True
        # None of the slow connections outlives its header or body time by much.
        assert slow.wait_closed_by_server(within=TIMEOUT + 20) == {"silent": 0, "headers": 0, "body": 0}
    finally:
        slow.close()
    with httpx.Client(base_url=slow_server.url, timeout=ANSWER_BOUND) as http:
        assert http.get("/healthz").status_code == 200


def test_a_body_cut_short_or_malformed_is_the_clients_fault(slow_server: LiveServer) -> None:
    host, port = slow_server.url.removeprefix("http://").split(":")
    for path in (b"/api/1.0/", b"/api/seller/"):
        # A chunk whose size is not a number.
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                b"POST " + path + b" HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5\r\ntype=\r\nZZ\r\ninit\r\n0\r\n\r\n"
            )
            answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 400 "), answer
        assert b'"error":"incomplete_body"' in answer
        # A client that goes away in the middle of its body.
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                b"POST " + path + b" HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ntype=in"
            )
            time.sleep(0.2)
    time.sleep(0.5)
    log = (slow_server.data_dir / "server.log").read_text()
    assert "ERROR" not in log, log
    assert "Traceback" not in log, log


def test_connections_per_worker_fit_the_open_file_limit() -> None:
    settings = Settings(worker_connections=10_000, pg_pool_size=10)
    assert server.connections_per_worker(settings, 1_000_000) == 10_000
    fitted = server.connections_per_worker(settings, 4096)
    assert fitted == 4096 - server.RESERVED_FILES - 10
    assert server.connections_per_worker(settings, 100) == 16  # never nothing at all
