"""Every outbound HTTP request the service makes goes through this module (files fetched by URL,
the client API's Webhook, log forwarding), so the rules against server-side request forgery live
in one place:

- only `http` and `https` URLs;
- the host is resolved once and the request is refused when any of its addresses is internal
  (loopback, private, link-local, multicast, reserved, unspecified, shared 100.64/10, IPv6
  unique-local or site-local, or an IPv4 address embedded in IPv6 in one of those), unless the
  operator allows that host name or address in `settings.outbound_allow`;
- the connection goes to the address that was checked (the URL carries the IP, the Host header
  and the TLS server name carry the host name), so a second DNS answer cannot steer it elsewhere;
- redirects are followed here, at most `MAX_REDIRECTS`, and every hop is checked again;
- one overall time limit covers resolution, every hop and reading the reply;
- the reply is read as a stream and cut off past the caller's size limit.

Failures raise `OutboundRefused` (the target is not allowed, or the URL is unusable) or
`OutboundFailed` (the target could not be reached or answered badly). Both carry a message a
person understands, naming the host but never the rest of the URL, and a stable `error` code.
Callers that must hide even the host (the client API's Webhook) show their own text keyed by
`error`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import BinaryIO

import httpx

from licensegate import __version__
from licensegate.config import Settings

# httpx logs every request's full URL at INFO (and httpcore its headers at DEBUG); the URLs this
# module requests can carry secrets (a webhook's stored seller key, a Discord token), so those
# loggers stay quiet whatever level the service logs at.
for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).setLevel(logging.WARNING)

DEFAULT_USER_AGENT = f"licensegate/{__version__}"
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
SCHEMES = frozenset({"http", "https"})
# Headers that must not follow a redirect to another origin.
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_HOST_NAME = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?")
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598)
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # embeds an IPv4 address in its last 32 bits

# A TLS context that replaces the default one (tests install one that trusts their own CA).
tls_context: ssl.SSLContext | None = None


class OutboundError(Exception):
    """Base of both outbound failures: `message` for a person, `error` for a program."""

    def __init__(self, message: str, error: str) -> None:
        super().__init__(message)
        self.message = message
        self.error = error


class OutboundRefused(OutboundError):
    """The request was not made: the URL is unusable or its target is not allowed."""


class OutboundFailed(OutboundError):
    """The request was made (or attempted) and did not produce an acceptable reply."""


@dataclass(frozen=True, slots=True)
class OutboundReply:
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    content: bytes
    url: str  # the URL that answered (after redirects), without credentials

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def text(self) -> str:
        """The content decoded with the charset the reply declares (UTF-8 otherwise)."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = part.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class Target:
    """A URL whose host has been resolved and found allowed."""

    url: httpx.URL
    host: str  # ASCII (IDNA) host name or IP literal, lower-case, without brackets
    port: int
    addresses: tuple[IPAddress, ...]
    literal: bool  # the URL names an IP address rather than a host name


# --- what may be reached ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AllowList:
    hosts: frozenset[str]
    networks: tuple[IPNetwork, ...]

    def allows_host(self, host: str) -> bool:
        return _normal_host(host) in self.hosts

    def allows_address(self, address: IPAddress) -> bool:
        candidates: list[IPAddress] = [address]
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            candidates.append(address.ipv4_mapped)
        return any(a in net for a in candidates for net in self.networks if a.version == net.version)


@lru_cache(maxsize=16)
def allow_list(entries: tuple[str, ...]) -> AllowList:
    """`settings.outbound_allow`: host names (exact, case-insensitive), IP addresses or CIDRs."""
    hosts: set[str] = set()
    networks: list[IPNetwork] = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text.strip("[]"), strict=False))
        except ValueError:
            hosts.add(_normal_host(text))
    return AllowList(frozenset(hosts), tuple(networks))


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def blocked_reason(address: IPAddress) -> str | None:
    """Why an address counts as internal (None for a public address)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            inner = blocked_reason(embedded)
            return f"{inner} IPv4 address inside IPv6" if inner else None
        if address.is_site_local:
            return "site-local"
        if address in _UNIQUE_LOCAL:
            return "unique-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED:
        return "shared (carrier-grade NAT)"
    if address.is_reserved:
        return "reserved"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "non-public"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, NAT64 or 6to4 IPv6 address leads to."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


# --- URLs and resolution ---------------------------------------------------------------------


def parse_url(url: str) -> httpx.URL:
    """An absolute http(s) URL with a usable host, or OutboundRefused."""
    try:
        parsed = httpx.URL(url)
        host = parsed.raw_host.decode("ascii")
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise OutboundRefused("The URL is not valid.", "invalid_url") from exc
    if parsed.scheme not in SCHEMES:
        raise OutboundRefused("Only http:// and https:// URLs can be requested.", "unsupported_scheme")
    if not host:
        raise OutboundRefused("The URL names no host.", "invalid_url")
    if _literal_address(host) is None and not _HOST_NAME.fullmatch(host):
        raise OutboundRefused("The URL's host name is not valid.", "invalid_url")
    return parsed


def short_url(url: str) -> str:
    """`scheme://host[:port]/path` of a URL: no credentials, query string or fragment ("" when
    the URL is not a usable http(s) URL)."""
    try:
        parsed = parse_url(url)
    except OutboundError:
        return ""
    host = parsed.raw_host.decode("ascii")
    if ":" in host:
        host = f"[{host}]"
    port = f":{parsed.port}" if parsed.port is not None else ""
    return f"{parsed.scheme}://{host}{port}{parsed.raw_path.split(b'?', 1)[0].decode('ascii')}"


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def getaddrinfo(host: str, port: int) -> Sequence[str]:
    """The addresses a host name resolves to (tests replace this to stay off the network)."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [str(info[4][0]) for info in infos]


async def _resolve(host: str, port: int) -> tuple[IPAddress, ...]:
    try:
        answers = await getaddrinfo(host, port)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundFailed(f"The host name '{host}' cannot be resolved.", "host_not_found") from exc
    found: list[IPAddress] = []
    for answer in answers:
        address = ipaddress.ip_address(answer.split("%", 1)[0])
        if address not in found:
            found.append(address)
    if not found:
        raise OutboundFailed(f"The host name '{host}' cannot be resolved.", "host_not_found")
    return tuple(found)


async def _check(allow: AllowList, url: httpx.URL) -> Target:
    host = url.raw_host.decode("ascii").lower()
    port = url.port or (443 if url.scheme == "https" else 80)
    literal = _literal_address(host)
    addresses = (literal,) if literal is not None else await _resolve(host, port)
    if not allow.allows_host(host):
        for address in addresses:
            reason = blocked_reason(address)
            if reason is not None and not allow.allows_address(address):
                where = f"'{host}'" if literal is None else "this URL"
                raise OutboundRefused(
                    f"Requests to {where} are not allowed: it leads to {address}, a {reason} address "
                    "(an operator may allow it with LICENSEGATE_OUTBOUND_ALLOW).",
                    "target_not_allowed",
                )
    return Target(url=url, host=host, port=port, addresses=addresses, literal=literal is not None)


async def check(
    settings: Settings,
    url: str,
    *,
    timeout: float | None = None,  # noqa: ASYNC109 - default from settings
) -> Target:
    """Parse, resolve and check a URL without requesting it (e.g. when a webhook is saved)."""
    parsed = parse_url(url)
    limit = settings.outbound_timeout if timeout is None else timeout
    try:
        async with asyncio.timeout(limit):
            return await _check(allow_list(settings.outbound_allow), parsed)
    except TimeoutError as exc:
        raise OutboundFailed(
            f"Resolving '{parsed.host}' took longer than {limit:g} seconds.", "timeout"
        ) from exc


# --- the request -----------------------------------------------------------------------------


_default_tls: ssl.SSLContext | None = None


def _tls() -> ssl.SSLContext:
    global _default_tls
    if tls_context is not None:
        return tls_context
    if _default_tls is None:
        _default_tls = httpx.create_ssl_context()  # certifi's CA bundle, loaded once
    return _default_tls


async def request(
    settings: Settings,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    max_bytes: int,
    timeout: float | None = None,  # noqa: ASYNC109 - defaults from settings, named in messages
    sink: BinaryIO | None = None,
) -> OutboundReply:
    """Make one request under the rules above and return the final reply, whatever its status.

    `headers` may set `User-Agent` (default `DEFAULT_USER_AGENT`). `max_bytes` bounds the
    (decoded) reply; `timeout` (default `settings.outbound_timeout`) bounds the whole call. With
    a `sink` (a file) the final reply's content is written there as it arrives instead of being
    kept in memory (the reply's `content` is then empty).
    """
    current = parse_url(url)
    limit = float(settings.outbound_timeout if timeout is None else timeout)
    allow = allow_list(settings.outbound_allow)
    sent: dict[str, str] = {"user-agent": DEFAULT_USER_AGENT}
    for name, value in (headers or {}).items():
        sent[name.lower()] = value
    for name in ("host", "content-length", "transfer-encoding"):
        sent.pop(name, None)  # the host comes from the URL, the framing from the body
    method = method.upper()
    try:
        async with asyncio.timeout(limit):
            for hop in range(MAX_REDIRECTS + 1):
                target = await _check(allow, current)
                reply = await _send(target, method, sent, body, max_bytes, limit, sink)
                if isinstance(reply, OutboundReply):
                    return reply
                if hop == MAX_REDIRECTS:
                    break
                following = _follow(current, reply.location)
                # As browsers do: 303, and 301/302 after a POST, continue as a GET without a body.
                if method != "HEAD" and (
                    reply.status == 303 or (reply.status in (301, 302) and method == "POST")
                ):
                    method = "GET"
                    body = None
                    sent.pop("content-type", None)
                if _origin(following) != _origin(current):
                    for name in CREDENTIAL_HEADERS:
                        sent.pop(name, None)
                current = following
    except TimeoutError as exc:
        raise OutboundFailed(f"'{current.host}' did not answer within {limit:g} seconds.", "timeout") from exc
    raise OutboundFailed(
        f"'{current.host}' redirected more than {MAX_REDIRECTS} times.", "too_many_redirects"
    )


@dataclass(frozen=True, slots=True)
class _Redirect:
    status: int
    location: str


def _follow(current: httpx.URL, location: str) -> httpx.URL:
    try:
        joined = str(current.join(location))
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise OutboundFailed(f"'{current.host}' redirected to an invalid URL.", "invalid_response") from exc
    return parse_url(joined)


def _origin(url: httpx.URL) -> tuple[str, bytes, int | None]:
    return (url.scheme, url.raw_host.lower(), url.port)


async def _send(
    target: Target,
    method: str,
    headers: dict[str, str],
    body: bytes | None,
    max_bytes: int,
    limit: float,
    sink: BinaryIO | None = None,
) -> OutboundReply | _Redirect:
    """Send to the checked addresses in turn (the next one only when connecting fails); return
    the reply, or the redirect to follow."""
    url = target.url
    host_header = url.netloc.decode("ascii").rpartition("@")[2]
    extensions = {"sni_hostname": target.host} if url.scheme == "https" and not target.literal else {}
    failure: Exception | None = None
    for address in target.addresses:
        # A new client per connection: no pooled connection is reused for another host name.
        async with httpx.AsyncClient(
            trust_env=False, follow_redirects=False, timeout=limit, verify=_tls()
        ) as client:
            outgoing = client.build_request(
                method,
                url.copy_with(host=str(address)),
                headers={**headers, "host": host_header},
                content=body,
                extensions=extensions,
            )
            try:
                response = await client.send(outgoing, stream=True)
            except httpx.ConnectError as exc:
                failure = exc
                continue
            except httpx.TimeoutException as exc:
                raise TimeoutError from exc
            except httpx.HTTPError as exc:
                raise OutboundFailed(
                    f"The request to '{url.host}' failed: {_reason(exc)}", "connection_failed"
                ) from exc
            try:
                location = response.headers.get("location")
                if response.status_code in REDIRECT_STATUSES and location:
                    return _Redirect(response.status_code, location)
                content = await _read(response, url.host, max_bytes, sink)
                return OutboundReply(
                    status=response.status_code,
                    headers={name.lower(): value for name, value in response.headers.items()},
                    content=content,
                    url=str(url.copy_with(userinfo=b"")),  # never the URL's credentials
                )
            finally:
                await response.aclose()
    raise OutboundFailed(
        f"Could not connect to '{url.host}': {_reason(failure)}", "connection_failed"
    ) from failure


async def _read(response: httpx.Response, host: str, max_bytes: int, sink: BinaryIO | None = None) -> bytes:
    too_large = OutboundFailed(
        f"The reply from '{host}' is larger than the limit of {max_bytes} bytes.", "response_too_large"
    )
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes and not response.headers.get("content-encoding"):
        raise too_large
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():  # decoded, so a compressed bomb is counted
            size += len(chunk)
            if size > max_bytes:
                raise too_large
            if sink is None:
                chunks.append(chunk)
            else:
                await asyncio.to_thread(sink.write, chunk)
    except httpx.TimeoutException as exc:
        raise TimeoutError from exc
    except httpx.DecodingError as exc:
        raise OutboundFailed(f"The reply from '{host}' cannot be decoded.", "invalid_response") from exc
    except httpx.HTTPError as exc:
        raise OutboundFailed(
            f"The reply from '{host}' was cut short: {_reason(exc)}", "connection_failed"
        ) from exc
    return b"".join(chunks)


def _reason(exc: Exception | None) -> str:
    text = str(exc).strip() if exc is not None else ""
    return text[:200] if text else "the connection was refused or reset"
