"""A small HTTP server on the loopback interface for tests of outbound requests, and guards that
keep those tests off every other network.

`LocalServer` runs in a thread and answers each path with a configured `Reply` (status, headers,
body; optionally slow to start, held until the test releases it, slow to send, or without a
Content-Length), and records every request it receives and every reply it starts.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate import outbound


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line
    # Held: no status line until the test sets this event (or `hold_at_most` seconds pass, so a
    # test that never releases it still ends).
    held: threading.Event | None = None
    hold_at_most: float = 8.0
    trickle: float = 0.0  # seconds between single bytes of the body
    chunked: bool = False  # no Content-Length: send the body in chunks


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Tests send many requests at once (event deliveries, 7 per node): the default backlog of 5
    # refused some on a loaded machine.
    request_queue_size = 128
    owner: LocalServer


class _IPv6Server(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _answer(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            # The sender died mid-request (a test kills it): a real receiver never sees such a
            # request, so it is not recorded, and there is no one left to answer.
            self.close_connection = True
            return
        owner.requests.append(
            Seen(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
        )
        reply = owner.routes.get(self.path.split("?", 1)[0], Reply(404, b"no such path"))
        if reply.delay and owner.stopping.wait(reply.delay):
            return
        if reply.held is not None:
            reply.held.wait(reply.hold_at_most)
            if owner.stopping.is_set():
                return
        owner.answered.append(self.path)
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        # The client may give up (a size or time limit): expected in these tests.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._body(reply, owner)

    def _body(self, reply: Reply, owner: LocalServer) -> None:
        if reply.trickle:
            for index in range(len(reply.body)):
                piece = reply.body[index : index + 1]
                self.wfile.write(b"1\r\n" + piece + b"\r\n" if reply.chunked else piece)
                self.wfile.flush()
                if owner.stopping.wait(reply.trickle):
                    return
        elif reply.chunked:
            step = 64 * 1024
            for start in range(0, len(reply.body), step):
                piece = reply.body[start : start + step]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        else:
            self.wfile.write(reply.body)
        if reply.chunked:
            self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _answer


class LocalServer:
    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Reply] = {}
        self.requests: list[Seen] = []
        self.answered: list[str] = []  # paths whose reply has begun, in order
        self.stopping = threading.Event()
        server_class = _IPv6Server if ":" in host else _Server
        self._server = server_class((host, 0), _Handler)
        self._server.owner = self
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.host = host
        self.port: int = self._server.server_address[1]
        self.scheme = "https" if tls is not None else "http"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def url(self, path: str = "/", host: str | None = None) -> str:
        name = host or (f"[{self.host}]" if ":" in self.host else self.host)
        return f"{self.scheme}://{name}:{self.port}{path}"

    def reply(self, path: str, body: bytes = b"", status: int = 200, **options: Any) -> None:
        self.routes[path] = Reply(status=status, body=body, **options)

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = Reply(status=status, headers={"Location": location})

    def start(self) -> LocalServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def serving(host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> Iterator[LocalServer]:
    server = LocalServer(host, tls).start()
    try:
        yield server
    finally:
        server.stop()


# --- staying off the network -------------------------------------------------------------------


class FakeDNS:
    """Replaces the outbound module's resolver: names in `names` resolve to the given addresses;
    IP literals in any spelling resolve without a lookup; everything else does not resolve."""

    def __init__(self, names: dict[str, Sequence[str]] | None = None) -> None:
        self.names: dict[str, Sequence[str]] = {"localhost": ("127.0.0.1",)}
        self.names.update(names or {})
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        name = host.lower().rstrip(".")
        if name in self.names:
            return list(self.names[name])
        # Numeric forms only (127.1, 0x7f.0.0.1, 2130706433, ...): never a query on the network.
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
        return [str(info[4][0]) for info in infos]


LOOPBACK = ("127.", "::1", "[::1]")


def keep_off_the_network(monkeypatch: pytest.MonkeyPatch, dns: FakeDNS | None = None) -> FakeDNS:
    """Install a fake resolver and make any connection to a non-loopback address fail the test."""
    resolver = dns or FakeDNS()
    monkeypatch.setattr(outbound, "getaddrinfo", resolver)
    original = httpx.AsyncHTTPTransport.handle_async_request

    async def guarded(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if not host.startswith(LOOPBACK):
            raise AssertionError(f"a test tried to connect to {host}")
        return await original(self, request)

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", guarded)
    return resolver


# --- TLS for the local server ------------------------------------------------------------------


@dataclass
class LocalCA:
    server_context: ssl.SSLContext
    client_context: ssl.SSLContext


def make_tls(folder: Path, host_name: str) -> LocalCA:
    """A throw-away CA and a certificate for `host_name`, made with the openssl command."""
    ca_key, ca_cert = folder / "ca.key", folder / "ca.pem"
    key, csr, cert = folder / "server.key", folder / "server.csr", folder / "server.pem"
    ext = folder / "ext.cnf"
    ext.write_text(f"subjectAltName=DNS:{host_name}\n")
    openssl = "openssl"
    run = [
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(ca_key),
            "-out",
            str(ca_cert),
        ],
        [openssl, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr)],
        [
            openssl,
            "x509",
            "-req",
            "-in",
            str(csr),
            "-CA",
            str(ca_cert),
            "-CAkey",
            str(ca_key),
            "-out",
            str(cert),
        ],
    ]
    extra = [
        ["-days", "2", "-subj", "/CN=licensegate test CA"],
        ["-subj", f"/CN={host_name}"],
        ["-CAcreateserial", "-days", "2", "-extfile", str(ext)],
    ]
    for command, options in zip(run, extra, strict=True):
        subprocess.run([*command, *options], check=True, capture_output=True, timeout=60)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(ca_cert))
    return LocalCA(server_context=server, client_context=client)
