"""The mailer never writes a recipient's address to the log (issue 10 item 19), whatever the SMTP
server answers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from licensegate import mailer
from licensegate.config import Settings
from tests.smtp import free_port

pytestmark = pytest.mark.anyio

RECIPIENT = "victim.person@example.org"


class Refusing:
    """Refuses every recipient, echoing the address back the way many servers do."""

    async def handle_RCPT(  # aiosmtpd calls it by this name
        self, _server: Any, _session: Any, _envelope: Any, address: str, _options: Any
    ) -> str:
        return f"550 5.1.1 <{address}>: Recipient address rejected: user unknown"


async def test_a_refused_recipient_is_not_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mailer, "RETRY_DELAYS", (0.0, 0.0))
    port = free_port()
    controller = Controller(Refusing(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        settings = Settings(data_dir=tmp_path, smtp_host="127.0.0.1", smtp_port=port, smtp_security="none")
        sender = mailer.Mailer(settings)
        with caplog.at_level(logging.DEBUG):
            sender.send_later(RECIPIENT, "Reset your password", "secret link", "password reset")
            await sender.drain(30)
    finally:
        controller.stop()
    logged = [record.getMessage() for record in caplog.records if record.name.startswith("licensegate")]
    assert any("refused the recipient (SMTP 550)" in line for line in logged), logged
    assert any("gave up" in line for line in logged), logged
    assert not [line for line in logged if "victim" in line or "example.org" in line], logged


def test_connection_failures_are_described_without_addresses() -> None:
    assert mailer.describe(ConnectionRefusedError(111, "Connection refused")) == (
        "ConnectionRefusedError: Connection refused"
    )
