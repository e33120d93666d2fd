"""Driving Debian's Chromium with Playwright against a real `licensegate serve`.

Playwright's own browser download is never used: `launch(executable_path=/usr/bin/chromium)`
(installed by scripts/browser). Every page a test opens can be audited with axe-core (from npm,
in .cache/npm): no serious or critical violation is allowed. Console messages reporting a
Content-Security-Policy violation fail the test too, since every script and style must come from
our own files. With LICENSEGATE_SCREENSHOTS=1 audited pages are saved under docs/dashboard/.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from licensegate.domain import totp

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
AXE = REPO / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = REPO / "docs" / "dashboard"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BLOCKING = ("serious", "critical")
SETUP_LINK = re.compile(r"(http://\S+/dashboard/setup\?token=\S+)")


def launch() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists() or not AXE.exists():
        raise RuntimeError("Chromium or axe-core is missing: run scripts/browser (scripts/test does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def screenshots_wanted() -> bool:
    return os.environ.get("LICENSEGATE_SCREENSHOTS", "") == "1"


@dataclass
class Tab:
    """One browser tab (its own context: its own cookies) on the dashboard at `base`."""

    context: BrowserContext
    page: Page
    base: str
    problems: list[str] = field(default_factory=list)
    shots: bool = False

    def goto(self, path: str) -> Page:
        self.page.goto(self.base + path)
        return self.page

    def audit(self, name: str) -> None:
        """axe-core over the page as it is now; and its screenshot, when asked for."""
        page = self.page
        page.wait_for_load_state("load")
        if page.evaluate("() => typeof window.axe === 'undefined'"):
            page.evaluate(AXE.read_text() + "\n;0")
        violations: list[dict[str, Any]] = page.evaluate(
            """async () => {
                const result = await axe.run(document, {resultTypes: ['violations']});
                return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                    nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}));
            }"""
        )
        blocking = [v for v in violations if v["impact"] in BLOCKING]
        assert not blocking, f"accessibility violations on {name} ({page.url}): {blocking}"
        self.check_console()
        if self.shots:
            SHOTS.mkdir(parents=True, exist_ok=True)
            # caret="initial": hiding the caret injects a style element, which the CSP refuses.
            page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True, caret="initial")

    def add_security_key(self) -> None:
        """A virtual security key (CTAP2 over USB, verifying its user) that this tab's pages can
        register and sign in with, through Chromium's WebAuthn emulation."""
        cdp = self.context.new_cdp_session(self.page)
        cdp.send("WebAuthn.enable")
        cdp.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "transport": "usb",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": True,
                }
            },
        )

    def check_console(self) -> None:
        assert not self.problems, f"console errors on {self.page.url}: {self.problems}"

    def status_text(self) -> str:
        return self.page.locator("#flash").inner_text()


def open_tab(browser: Browser, base: str, *, javascript: bool = True, shots: bool = False) -> Tab:
    context = browser.new_context(
        viewport={"width": 1280, "height": 820}, java_script_enabled=javascript, color_scheme="light"
    )
    page = context.new_page()
    tab = Tab(context, page, base, shots=shots)

    def on_console(message: Any) -> None:
        text = message.text
        # A page answered with an error status (a refused form is a 400) logs a failed
        # resource; that is expected. Script errors and CSP violations are not.
        if text.startswith("Failed to load resource: the server responded with a status of 4"):
            return
        if message.type == "error" or "Content Security Policy" in text:
            tab.problems.append(text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: tab.problems.append(f"page error: {error}"))
    return tab


def current_code(secret: str, now: float) -> str:
    """The TOTP code an authenticator app shows at `now` (within the ±1 window even if the step
    ends before the server checks it). `next_code` later is a later step: a code works once."""
    return totp.code_at(secret, totp.step_of(int(now)))


def next_code(secret: str, now: float) -> str:
    """A TOTP code an authenticator app would show (the next step's: within the ±1 window, and
    later than any step used before it, since a code works once)."""
    return totp.code_at(secret, totp.step_of(int(now)) + 1)


def setup_link(log: Path) -> str:
    found = SETUP_LINK.search(log.read_text())
    assert found, "the server printed no setup link"
    return found.group(1)
