"""The guarded outbound HTTP module, against a local server on 127.0.0.1.

Every test here runs with a fake resolver and a guard that fails the test on any connection to
an address outside the loopback range, so refusals are proven to happen before connecting.
"""

from __future__ import annotations

import gzip
import ipaddress
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate import outbound
from licensegate.config import Settings
from tests.httpservers import FakeDNS, LocalServer, keep_off_the_network, make_tls, serving

pytestmark = pytest.mark.anyio

LOCAL = Settings(outbound_allow=("127.0.0.1",))
STRICT = Settings()  # nothing internal allowed


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    return keep_off_the_network(monkeypatch)


@pytest.fixture
def server(dns: FakeDNS) -> Iterator[LocalServer]:
    with serving() as running:
        yield running


async def get(settings: Settings, url: str, **options: Any) -> outbound.OutboundReply:
    options.setdefault("max_bytes", 1024 * 1024)
    return await outbound.request(settings, options.pop("method", "GET"), url, **options)


async def refused(settings: Settings, url: str, error: str, **options: Any) -> outbound.OutboundRefused:
    with pytest.raises(outbound.OutboundRefused) as caught:
        await get(settings, url, **options)
    assert caught.value.error == error
    assert caught.value.message
    return caught.value


async def failed(settings: Settings, url: str, error: str, **options: Any) -> outbound.OutboundFailed:
    with pytest.raises(outbound.OutboundFailed) as caught:
        await get(settings, url, **options)
    assert caught.value.error == error
    assert caught.value.message
    return caught.value


# --- plain requests ----------------------------------------------------------------------------


async def test_get_returns_status_headers_content_and_url(server: LocalServer) -> None:
    server.reply("/hello", b"hi there", headers={"Content-Type": "text/plain; charset=utf-8", "X-A": "1"})
    reply = await get(LOCAL, server.url("/hello?x=1"))
    assert (reply.status, reply.content, reply.text()) == (200, b"hi there", "hi there")
    assert reply.ok
    assert reply.headers["x-a"] == "1"
    assert reply.url == server.url("/hello?x=1")
    seen = server.requests[0]
    assert (seen.method, seen.path) == ("GET", "/hello?x=1")
    assert seen.headers["host"] == f"127.0.0.1:{server.port}"
    assert seen.headers["user-agent"] == outbound.DEFAULT_USER_AGENT


async def test_post_sends_the_body_and_headers_and_a_chosen_user_agent(server: LocalServer) -> None:
    server.reply("/hook", b'{"ok":true}', status=201)
    reply = await get(
        LOCAL,
        server.url("/hook"),
        method="POST",
        body=b"a=1&b=2",
        headers={"Content-Type": "application/x-www-form-urlencoded", "User-Agent": "my-agent/2"},
    )
    assert (reply.status, reply.content) == (201, b'{"ok":true}')
    seen = server.requests[0]
    assert (seen.method, seen.body) == ("POST", b"a=1&b=2")
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert seen.headers["user-agent"] == "my-agent/2"


async def test_an_error_status_is_a_reply_not_an_exception(server: LocalServer) -> None:
    reply = await get(LOCAL, server.url("/missing"))
    assert (reply.status, reply.ok) == (404, False)


async def test_a_caller_cannot_set_the_host_header(server: LocalServer) -> None:
    server.reply("/", b"ok")
    await get(LOCAL, server.url("/"), headers={"Host": "evil.example"})
    assert server.requests[0].headers["host"] == f"127.0.0.1:{server.port}"


async def test_credentials_in_the_url_are_sent_but_never_returned(server: LocalServer) -> None:
    server.reply("/private", b"ok")
    url = server.url("/private").replace("://", "://alice:s3cret@")
    reply = await get(LOCAL, url)
    assert server.requests[0].headers["authorization"].startswith("Basic ")
    assert "s3cret" not in reply.url
    assert "alice" not in reply.url


async def test_text_uses_the_declared_charset() -> None:
    reply = outbound.OutboundReply(
        200, {"content-type": "text/plain; charset=latin-1"}, "é".encode("latin-1"), "http://x/"
    )
    assert reply.text() == "é"
    unknown = outbound.OutboundReply(200, {"content-type": "text/plain; charset=nope"}, b"ok", "http://x/")
    assert unknown.text() == "ok"


async def test_a_closed_port_is_connection_failed(dns: FakeDNS) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    await failed(LOCAL, f"http://127.0.0.1:{port}/", "connection_failed")


# --- what may be reached -----------------------------------------------------------------------


async def test_loopback_is_refused_unless_allowed_and_nothing_is_sent(server: LocalServer) -> None:
    error = await refused(STRICT, server.url("/"), "target_not_allowed")
    assert "loopback" in error.message
    assert server.requests == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://10.0.0.1/", "private"),
        ("http://172.16.5.4/", "private"),
        ("http://192.168.1.1:8080/admin", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://0.0.0.0:8000/", "unspecified"),
        ("http://100.64.0.1/", "shared"),
        ("http://224.0.0.1/", "multicast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://255.255.255.255/", "reserved"),
        ("http://127.0.0.1/", "loopback"),
        ("http://127.1/", "loopback"),
        ("http://2130706433/", "loopback"),
        ("http://0x7f.0.0.1/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("http://[::]/", "unspecified"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fc00::1]/", "unique-local"),
        ("http://[fd12:3456::1]/", "unique-local"),
        ("http://[fec0::1]/", "site-local"),
        ("http://[ff02::1]/", "multicast"),
        ("http://[::ffff:127.0.0.1]/", "loopback IPv4 address inside IPv6"),
        ("http://[::ffff:10.0.0.1]/", "private IPv4 address inside IPv6"),
        ("http://[::ffff:169.254.169.254]/", "link-local IPv4 address inside IPv6"),
        ("http://[64:ff9b::a9fe:a9fe]/", "link-local IPv4 address inside IPv6"),
        ("http://[2002:a00:1::1]/", "private IPv4 address inside IPv6"),
    ],
)
async def test_internal_addresses_are_refused_before_connecting(
    dns: FakeDNS, monkeypatch: pytest.MonkeyPatch, url: str, reason: str
) -> None:
    attempts: list[str] = []

    async def connect(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
        attempts.append(str(request.url))
        raise AssertionError("a refused target was connected to")

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", connect)
    error = await refused(STRICT, url, "target_not_allowed")
    assert f"a {reason}" in error.message
    assert attempts == []


async def test_only_the_allowed_address_is_allowed(dns: FakeDNS) -> None:
    await refused(LOCAL, "http://127.0.0.2/", "target_not_allowed")
    await refused(LOCAL, "http://10.0.0.1/", "target_not_allowed")
    await refused(LOCAL, "http://[::1]/", "target_not_allowed")


async def test_a_name_resolving_to_an_internal_address_is_refused(dns: FakeDNS) -> None:
    dns.names["intranet.example"] = ("10.1.2.3",)
    dns.names["mixed.example"] = ("93.184.216.34", "192.168.0.10")
    error = await refused(STRICT, "https://intranet.example/x", "target_not_allowed")
    assert "'intranet.example'" in error.message
    assert "10.1.2.3" in error.message
    # One internal address among public ones is enough to refuse.
    await refused(STRICT, "https://mixed.example/", "target_not_allowed")


async def test_localhost_is_refused(dns: FakeDNS) -> None:
    await refused(STRICT, "http://localhost/", "target_not_allowed")
    await refused(STRICT, "http://LOCALHOST./", "target_not_allowed")


async def test_an_allowed_host_name_may_be_internal_and_matches_case_insensitively(
    server: LocalServer, dns: FakeDNS
) -> None:
    dns.names["svc.internal"] = ("127.0.0.1",)
    server.reply("/", b"inside")
    allowed = Settings(outbound_allow=("SVC.Internal",))
    reply = await get(allowed, server.url("/", host="svc.INTERNAL"))
    assert reply.content == b"inside"
    assert server.requests[0].headers["host"] == f"svc.internal:{server.port}"
    # The allowance is for that name only.
    dns.names["other.internal"] = ("127.0.0.1",)
    await refused(allowed, server.url("/", host="other.internal"), "target_not_allowed")


async def test_an_allowed_network_admits_its_addresses(server: LocalServer) -> None:
    server.reply("/", b"ok")
    reply = await get(Settings(outbound_allow=("127.0.0.0/8",)), server.url("/"))
    assert reply.content == b"ok"
    # IPv4-mapped IPv6 spelling of an allowed address is allowed too.
    assert outbound.allow_list(("127.0.0.0/8",)).allows_address(ipaddress.ip_address("::ffff:127.0.0.1"))


async def test_an_unknown_host_name_fails_as_host_not_found(dns: FakeDNS) -> None:
    await failed(STRICT, "http://no-such-host.invalid/", "host_not_found")


async def test_the_host_is_resolved_once_and_the_checked_address_is_used(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DNS answer that changes (rebinding) cannot steer the connection: the address that was
    checked is the one connected to, and there is no second lookup."""
    answers = iter([("127.0.0.1",), ("10.0.0.1",)])
    calls: list[str] = []

    async def rebinding(host: str, port: int) -> Sequence[str]:
        calls.append(host)
        return next(answers)

    monkeypatch.setattr(outbound, "getaddrinfo", rebinding)
    server.reply("/", b"first answer")
    reply = await get(LOCAL, server.url("/", host="rebind.example"))
    assert reply.content == b"first answer"
    assert calls == ["rebind.example"]
    assert server.requests[0].headers["host"] == f"rebind.example:{server.port}"


async def test_check_resolves_without_requesting(server: LocalServer, dns: FakeDNS) -> None:
    dns.names["svc.example"] = ("127.0.0.1",)
    target = await outbound.check(LOCAL, server.url("/p", host="svc.example"))
    assert (target.host, target.port, target.literal) == ("svc.example", server.port, False)
    assert target.addresses == (ipaddress.ip_address("127.0.0.1"),)
    assert server.requests == []
    with pytest.raises(outbound.OutboundRefused):
        await outbound.check(STRICT, "http://169.254.169.254/")


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::200e"]
)
def test_public_addresses_are_not_blocked(address: str) -> None:
    assert outbound.blocked_reason(ipaddress.ip_address(address)) is None


def test_the_allow_list_reads_names_addresses_and_networks() -> None:
    allow = outbound.allow_list(("Example.COM.", "[::1]", "10.0.0.0/8", " ", "192.168.1.5"))
    assert allow.allows_host("example.com")
    assert allow.allows_host("EXAMPLE.com.")
    assert not allow.allows_host("sub.example.com")
    for address in ("::1", "10.9.8.7", "192.168.1.5"):
        assert allow.allows_address(ipaddress.ip_address(address))
    assert not allow.allows_address(ipaddress.ip_address("192.168.1.6"))


# --- URLs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("ftp://example.com/file", "unsupported_scheme"),
        ("file:///etc/passwd", "unsupported_scheme"),
        ("gopher://example.com/", "unsupported_scheme"),
        ("javascript:alert(1)", "unsupported_scheme"),
        ("data:text/plain,hi", "unsupported_scheme"),
        ("//example.com/no-scheme", "unsupported_scheme"),
        ("not a url", "unsupported_scheme"),
        ("http:///no-host", "invalid_url"),
        ("http://exa mple.com/", "invalid_url"),
        ("http://bad\nhost/", "invalid_url"),
        ("http://[::1/", "invalid_url"),
    ],
)
async def test_unusable_urls_are_refused(dns: FakeDNS, url: str, error: str) -> None:
    await refused(LOCAL, url, error)


def test_short_url_keeps_scheme_host_port_and_path_only() -> None:
    assert outbound.short_url("https://u:p@Example.com:8443/a/b?token=x#f") == "https://example.com:8443/a/b"
    assert outbound.short_url("http://[::1]/x?y") == "http://[::1]/x"
    assert outbound.short_url("http://[broken") == ""


# --- redirects ---------------------------------------------------------------------------------


async def test_redirects_are_followed_and_rechecked(server: LocalServer) -> None:
    server.redirect("/a", "/b")
    server.redirect("/b", server.url("/c"), status=301)
    server.reply("/c", b"arrived")
    reply = await get(LOCAL, server.url("/a"))
    assert (reply.status, reply.content, reply.url) == (200, b"arrived", server.url("/c"))
    assert [seen.path for seen in server.requests] == ["/a", "/b", "/c"]


async def test_a_redirect_to_an_internal_target_is_refused(server: LocalServer) -> None:
    for location in ("http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/"):
        server.redirect("/go", location)
        await refused(LOCAL, server.url("/go"), "target_not_allowed")


async def test_a_redirect_to_another_scheme_is_refused(server: LocalServer) -> None:
    server.redirect("/go", "file:///etc/passwd")
    await refused(LOCAL, server.url("/go"), "unsupported_scheme")


async def test_more_than_five_redirects_fail(server: LocalServer) -> None:
    server.redirect("/loop", "/loop")
    await failed(LOCAL, server.url("/loop"), "too_many_redirects")
    assert len(server.requests) == outbound.MAX_REDIRECTS + 1
    # Exactly five are fine.
    for hop in range(5):
        server.redirect(f"/r{hop}", f"/r{hop + 1}")
    server.reply("/r5", b"end")
    assert (await get(LOCAL, server.url("/r0"))).content == b"end"


async def test_303_turns_a_post_into_a_get_and_307_keeps_it(server: LocalServer) -> None:
    server.redirect("/see-other", "/target", status=303)
    server.redirect("/temporary", "/target", status=307)
    server.reply("/target", b"done")
    await get(LOCAL, server.url("/see-other"), method="POST", body=b"payload")
    await get(LOCAL, server.url("/temporary"), method="POST", body=b"payload")
    after_303, after_307 = server.requests[1], server.requests[3]
    assert (after_303.method, after_303.body) == ("GET", b"")
    assert (after_307.method, after_307.body) == ("POST", b"payload")


async def test_credentials_do_not_follow_a_redirect_to_another_host(
    server: LocalServer, dns: FakeDNS
) -> None:
    dns.names["elsewhere.example"] = ("127.0.0.1",)
    server.redirect("/start", server.url("/end", host="elsewhere.example"))
    server.reply("/end", b"ok")
    await get(LOCAL, server.url("/start"), headers={"Authorization": "Bearer t", "Cookie": "c=1"})
    first, second = server.requests
    assert first.headers["authorization"] == "Bearer t"
    assert "authorization" not in second.headers
    assert "cookie" not in second.headers
    assert second.headers["host"] == f"elsewhere.example:{server.port}"


# --- time and size limits ----------------------------------------------------------------------


async def test_a_slow_server_times_out_quickly(server: LocalServer) -> None:
    server.reply("/slow", b"late", delay=5)
    error = await failed(LOCAL, server.url("/slow"), "timeout", timeout=0.3)
    assert "0.3 seconds" in error.message
    assert server.answered == []  # given up on before the server began its reply


async def test_the_time_limit_covers_a_slowly_sent_body(server: LocalServer) -> None:
    server.reply("/trickle", b"x" * 100, trickle=0.05)  # 5 s for the whole body, a byte every 0.05 s
    error = await failed(LOCAL, server.url("/trickle"), "timeout", timeout=0.5)
    assert "0.5 seconds" in error.message
    assert server.answered == ["/trickle"]  # the reply had begun: the limit covers the body too


async def test_the_default_time_limit_comes_from_the_settings(server: LocalServer) -> None:
    server.reply("/slow", b"late", delay=5)
    error = await failed(
        Settings(outbound_allow=("127.0.0.1",), outbound_timeout=1), server.url("/slow"), "timeout"
    )
    assert "within 1 seconds" in error.message
    assert server.answered == []


async def test_a_reply_larger_than_the_limit_is_cut_off(server: LocalServer) -> None:
    server.reply("/declared", b"x" * 2000)
    server.reply("/chunked", b"y" * 200_000, chunked=True)
    server.reply("/exact", b"z" * 1000)
    error = await failed(LOCAL, server.url("/declared"), "response_too_large", max_bytes=1000)
    assert "1000 bytes" in error.message
    await failed(LOCAL, server.url("/chunked"), "response_too_large", max_bytes=1000)
    assert (await get(LOCAL, server.url("/exact"), max_bytes=1000)).content == b"z" * 1000


async def test_a_compressed_reply_is_measured_after_decoding(server: LocalServer) -> None:
    server.reply("/bomb", gzip.compress(b"\0" * 1_000_000), headers={"Content-Encoding": "gzip"})
    await failed(LOCAL, server.url("/bomb"), "response_too_large", max_bytes=100_000)


# --- TLS and IPv6 ------------------------------------------------------------------------------


async def test_https_uses_the_host_name_for_sni_and_certificate_checks(
    dns: FakeDNS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        ca = make_tls(tmp_path, "secure.test")
    except (OSError, Exception) as exc:  # no openssl command on this machine
        pytest.skip(f"cannot make a test certificate: {exc}")
    monkeypatch.setattr(outbound, "tls_context", ca.client_context)
    dns.names["secure.test"] = ("127.0.0.1",)
    with serving(tls=ca.server_context) as server:
        server.reply("/", b"secret page")
        reply = await get(LOCAL, server.url("/", host="secure.test"))
        assert reply.content == b"secret page"
        assert server.requests[0].headers["host"] == f"secure.test:{server.port}"
        # The certificate names secure.test, not the address: asking for the address fails.
        await failed(LOCAL, server.url("/"), "connection_failed")


async def test_ipv6_loopback_can_be_allowed(dns: FakeDNS) -> None:
    try:
        running = LocalServer("::1").start()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:
        running.reply("/", b"v6")
        await refused(LOCAL, running.url("/"), "target_not_allowed")
        reply = await get(Settings(outbound_allow=("::1",)), running.url("/"))
        assert reply.content == b"v6"
    finally:
        running.stop()


def test_http_client_loggers_never_log_request_urls() -> None:
    import logging

    import licensegate.outbound  # noqa: F401  (its import sets the levels)

    for name in ("httpx", "httpcore"):
        assert logging.getLogger(name).getEffectiveLevel() >= logging.WARNING
