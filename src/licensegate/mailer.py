"""E-mail through SMTP (`LICENSEGATE_SMTP_*`). Messages are sent in the background after the
response, retried a few times, and a failure is logged without the recipient or the contents."""

from __future__ import annotations

import asyncio
import logging
import smtplib
import ssl
from email.message import EmailMessage

from licensegate.config import Settings

log = logging.getLogger("licensegate.mailer")

RETRY_DELAYS = (0.0, 2.0, 10.0)
SMTP_TIMEOUT = 20


def describe(exc: Exception) -> str:
    """What went wrong, without the addresses smtplib puts in its exceptions (a refused
    recipient's text is the address itself, and the server's reply often repeats it)."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = sorted({code for code, _reply in exc.recipients.values()})
        return f"the server refused the recipient (SMTP {', '.join(map(str, codes))})"
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{type(exc).__name__} (SMTP {exc.smtp_code})"
    if isinstance(exc, smtplib.SMTPException):
        return type(exc).__name__
    return f"{type(exc).__name__}: {exc.strerror or exc}" if isinstance(exc, OSError) else type(exc).__name__


class Mailer:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._pending: set[asyncio.Task[None]] = set()
        # How messages went, for the metrics (as `Background.outcomes`).
        self.outcomes: dict[str, int] = {"done": 0, "failed": 0, "given_up": 0, "dropped": 0}

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def configured(self) -> bool:
        return self._settings.smtp_host is not None

    def _send_now(self, message: EmailMessage) -> None:
        s = self._settings
        assert s.smtp_host is not None
        smtp: smtplib.SMTP
        if s.smtp_security == "tls":
            smtp = smtplib.SMTP_SSL(
                s.smtp_host, s.smtp_port, timeout=SMTP_TIMEOUT, context=ssl.create_default_context()
            )
        else:
            smtp = smtplib.SMTP(s.smtp_host, s.smtp_port, timeout=SMTP_TIMEOUT)
        with smtp:
            if s.smtp_security == "starttls":
                smtp.starttls(context=ssl.create_default_context())
            if s.smtp_user is not None:
                smtp.login(s.smtp_user, s.smtp_password or "")
            smtp.send_message(message)

    async def _deliver(self, message: EmailMessage, purpose: str) -> None:
        loop = asyncio.get_running_loop()
        for attempt, delay in enumerate(RETRY_DELAYS, start=1):
            if delay:
                await asyncio.sleep(delay)
            try:
                await loop.run_in_executor(None, self._send_now, message)
                self.outcomes["done"] += 1
                return
            except (OSError, smtplib.SMTPException) as exc:
                self.outcomes["failed"] += 1
                log.warning(
                    "sending a %s e-mail failed (attempt %d of %d): %s",
                    purpose,
                    attempt,
                    len(RETRY_DELAYS),
                    describe(exc),
                )
        self.outcomes["given_up"] += 1
        log.error("gave up sending a %s e-mail after %d attempts", purpose, len(RETRY_DELAYS))

    def send_later(self, to: str, subject: str, text: str, purpose: str) -> None:
        """Queue the message; the caller's response does not wait for the SMTP server."""
        message = EmailMessage()
        message["From"] = self._settings.smtp_from
        message["To"] = to
        message["Subject"] = subject
        message.set_content(text)
        task = asyncio.get_running_loop().create_task(self._deliver(message, purpose))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self, within: float = 15.0) -> None:
        """Wait up to `within` seconds for queued messages (at shutdown, and in tests)."""
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=within)
