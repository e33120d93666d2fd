"""The client's IP address: the connection's peer, unless that peer is a trusted proxy.

`X-Forwarded-For` is believed only when it arrives from a proxy listed in
`LICENSEGATE_TRUSTED_PROXIES`; otherwise anyone could choose the address their IP bans and rate
limits are counted against.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from licensegate.config import IPNetwork


def _parse(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(value.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address, proxies: tuple[IPNetwork, ...]) -> bool:
    return any(address.version == net.version and address in net for net in proxies)


def client_ip(scope: Mapping[str, Any], proxies: tuple[IPNetwork, ...]) -> str:
    client = scope.get("client")
    peer_text = client[0] if client else "0.0.0.0"  # noqa: S104 - a placeholder, never bound
    if not proxies and ":" not in peer_text:
        return peer_text  # an IPv4 peer and nobody to believe: nothing to parse (every request)
    peer = _parse(peer_text)
    if peer is None:
        return peer_text
    if not proxies or not _trusted(peer, proxies):
        return str(peer)
    forwarded: list[str] = []
    for name, value in scope.get("headers", ()):
        if name == b"x-forwarded-for":
            forwarded.extend(part for part in value.decode("latin-1").split(",") if part.strip())
    # Walk from the nearest hop outwards; the first address not ours is the client.
    nearest = peer
    for hop in reversed(forwarded):
        address = _parse(hop)
        if address is None:
            break
        nearest = address
        if not _trusted(address, proxies):
            break
    return str(nearest)


def counted_as(ip: str) -> str:
    """What a rate limit counts an address as: an IPv4 address itself, an IPv6 address its /64
    (one subscriber usually holds a whole /64, so counting single IPv6 addresses would let one
    caller spread over 2**64 of them)."""
    if ":" not in ip:
        return ip
    try:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    except ValueError:
        return ip
