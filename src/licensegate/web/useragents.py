"""A browser's User-Agent header as a person reads it: "Chrome 156 on Linux".

Deliberately simple: the browsers and systems people sign in with, recognised by the tokens
their headers carry (the order matters: Edge and Opera also say Chrome, Chrome also says Safari,
Android also says Linux). Anything else keeps its first product token, so nothing is hidden.
"""

from __future__ import annotations

import re

# (name, pattern whose group 1 is the major version), the first match wins.
BROWSERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Edge", re.compile(r"\bEdg(?:e|A|iOS)?/(\d+)")),
    ("Opera", re.compile(r"\bOPR/(\d+)")),
    ("Samsung Internet", re.compile(r"\bSamsungBrowser/(\d+)")),
    ("Firefox", re.compile(r"\b(?:Firefox|FxiOS)/(\d+)")),
    ("Chromium", re.compile(r"\bChromium/(\d+)")),
    ("Chrome", re.compile(r"\b(?:HeadlessChrome|Chrome|CriOS)/(\d+)")),
    ("Safari", re.compile(r"\bVersion/(\d+)[.\d]* (?:Mobile/\S+ )?Safari/")),
)
# (name, pattern), the first match wins.
SYSTEMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Android", re.compile(r"\bAndroid\b")),
    ("iOS", re.compile(r"\b(?:iPhone|iPad|iPod)\b")),
    ("Windows", re.compile(r"\bWindows\b")),
    ("ChromeOS", re.compile(r"\bCrOS\b")),
    ("macOS", re.compile(r"\bMac OS X\b|\bMacintosh\b")),
    ("Linux", re.compile(r"\bLinux\b|\bX11\b")),
)
PRODUCT = re.compile(r"^([A-Za-z][\w.-]*)(?:/(\d+))?")


def describe(user_agent: str | None) -> str:
    """ "Chrome 156 on Linux"; "curl 8" for a tool; "unknown" without a header."""
    text = (user_agent or "").strip()
    if not text:
        return "unknown"
    browser = next(
        (f"{name} {found.group(1)}" for name, pattern in BROWSERS if (found := pattern.search(text))), None
    )
    system = next((name for name, pattern in SYSTEMS if pattern.search(text)), None)
    if browser is None:
        product = PRODUCT.match(text)
        if product is None or product.group(1) == "Mozilla":
            browser = "A browser" if system else text[:40]
        else:
            browser = f"{product.group(1)} {product.group(2)}" if product.group(2) else product.group(1)
    return f"{browser} on {system}" if system else browser
