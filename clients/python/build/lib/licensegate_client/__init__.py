"""licensegate-client: a small typed Python client for licensegate's client API (every dialect),
verifying every answer (Ed25519 signature, freshness, `clientnonce`), and license files offline.

    from licensegate_client import Client
"""

from __future__ import annotations

from licensegate_client.client import (
    DIALECTS,
    Answer,
    Client,
    ClientError,
    Dialect,
    Entitlement,
    TamperedAnswer,
    WebLoader,
    origin_of,
    verify_answer,
    verify_license_file,
)
from licensegate_client.licensefile import LicenseFile, LicenseFileError

__version__ = "0.1.0"
__all__ = [
    "DIALECTS",
    "Answer",
    "Client",
    "ClientError",
    "Dialect",
    "Entitlement",
    "LicenseFile",
    "LicenseFileError",
    "TamperedAnswer",
    "WebLoader",
    "__version__",
    "origin_of",
    "verify_answer",
    "verify_license_file",
]
