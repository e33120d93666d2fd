"""The account page's sessions and sign-in history name a browser and a system, not the raw
User-Agent header (web/useragents.py)."""

from __future__ import annotations

import pytest

from licensegate.web.useragents import describe

CHROME = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
)


@pytest.mark.parametrize(
    ("header", "shown"),
    [
        (CHROME, "Chrome 156 on Linux"),
        (CHROME.replace("Chrome/", "HeadlessChrome/"), "Chrome 156 on Linux"),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91",
            "Edge 120 on Windows",
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.2 Safari/605.1.15",
            "Safari 17 on macOS",
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.2 Mobile/15E148 Safari/604.1",
            "Safari 17 on iOS",
        ),
        (
            "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
            "Firefox 121 on Linux",
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/120.0.6099.144 Mobile Safari/537.36",
            "Chrome 120 on Android",
        ),
        ("curl/8.5.0", "curl 8"),
        ("Mozilla/5.0 (X11; Linux x86_64)", "A browser on Linux"),
        ("", "unknown"),
        (None, "unknown"),
    ],
)
def test_a_user_agent_reads_as_browser_and_system(header: str | None, shown: str) -> None:
    assert describe(header) == shown
