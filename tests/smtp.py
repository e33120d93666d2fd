"""A real SMTP server on 127.0.0.1 that keeps what it receives, for e-mail tests."""

from __future__ import annotations

import email
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(
        self, _server: Any, _session: Any, envelope: Any
    ) -> str:  # aiosmtpd calls it by this name
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def mail_settings(port: int, public_url: str) -> dict[str, object]:
    """Settings overrides under which the service sends its mail to `smtp_server()` on `port`,
    its links starting with `public_url`."""
    return {
        "smtp_host": "127.0.0.1",
        "smtp_port": port,
        "smtp_security": "none",
        "smtp_from": "noreply@licensegate.test",
        "public_url": public_url,
    }
