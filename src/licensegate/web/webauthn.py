"""The WebAuthn relying party the dashboard is: named by `LICENSEGATE_PUBLIC_URL`."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from licensegate.domain.passkeys import RelyingParty
from licensegate.web.visit import Visit


def relying_party(visit: Visit) -> RelyingParty:
    parts = urlsplit(visit.services.settings.public_url)
    return RelyingParty(id=parts.hostname or "localhost", origin=f"{parts.scheme}://{parts.netloc}")


def passkeys_possible(visit: Visit) -> str:
    """Why security keys cannot work here ('' when they can): browsers scope them to a host name,
    never to an IP address, and to the origin the dashboard is configured under."""
    rp = relying_party(visit)
    try:
        ipaddress.ip_address(rp.id)
    except ValueError:
        pass
    else:
        return (
            f"Security keys need the dashboard to be reached by a host name, not the address {rp.id}: "
            "set LICENSEGATE_PUBLIC_URL (e.g. http://localhost:8000) and open the dashboard there."
        )
    here = f"{visit.request.url.scheme}://{visit.request.headers.get('host', '')}"
    if here.lower() != rp.origin.lower():
        return f"Security keys work only at {rp.origin}, the address this service is configured for."
    return ""
