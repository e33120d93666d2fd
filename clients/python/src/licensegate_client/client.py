"""A small typed Python client for licensegate's client API, in every dialect it speaks.

    async with Client("https://licenses.example.com", ownerid="Ab12Cd34Ef", name="MyApp",
                      public_key="<64 hex from create-app>") as app:
        await app.init(ver="1.0")
        answer = await app.license("XXXX-XXXX", hwid="S-1-5-21-...")
        if answer.success: ...

Every answer is checked before it is returned: its Ed25519 signature over `timestamp || body`
against the application's public key (or the deployment's, for answers that name no known
application), the timestamp's freshness, and — unless `bind=False` — that the answer echoes the
`clientnonce` this request carried, so an answer recorded earlier and replayed to another request
is rejected. On `/api/1.2/` the HMAC `signature` header is checked as well when the secret is
given. A check that fails raises `TamperedAnswer`; business failures are answers
(`success` false), not exceptions.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson

from licensegate_client.licensefile import DEFAULT_SKEW, LicenseFile, LicenseFileError, key_id
from licensegate_client.licensefile import read as read_license_file
from licensegate_client.signing import hmac_hex, verify

__all__ = [
    "Answer",
    "Client",
    "ClientError",
    "Entitlement",
    "LicenseFile",
    "LicenseFileError",
    "TamperedAnswer",
    "key_id",
    "verify_answer",
    "verify_license_file",
]

Dialect = Literal["1.0", "1.1", "1.2", "1.3"]
DIALECTS: tuple[Dialect, ...] = ("1.0", "1.1", "1.2", "1.3")
MAX_AGE = 25  # seconds an answer may be old (KeyAuth's Python library allows 25)
MAX_AHEAD = 25  # seconds an answer may be ahead of this machine's clock


class ClientError(Exception):
    """The service could not be reached or answered something that is not an answer."""


class TamperedAnswer(ClientError):
    """An answer failed verification: forged, altered, replayed or stale."""


@dataclass(frozen=True)
class Answer:
    """One verified answer."""

    status: int
    body: dict[str, Any]
    raw: bytes
    headers: Mapping[str, str] = field(repr=False)

    @property
    def success(self) -> bool:
        return self.body.get("success") is True

    @property
    def message(self) -> str:
        return str(self.body.get("message", ""))

    @property
    def code(self) -> int | None:
        code = self.body.get("code")
        return code if isinstance(code, int) else None

    @property
    def error(self) -> str | None:
        return self.body.get("error")

    def __getitem__(self, name: str) -> Any:
        return self.body[name]

    @property
    def entitlements(self) -> list[Entitlement]:
        """The entitlements a login, Upgrade or Get Entitlements answered (none otherwise)."""
        return [
            Entitlement(str(item["code"]), str(item.get("name", "")), dict(item.get("metadata") or {}))
            for item in self.body.get("entitlements") or ()
            if isinstance(item, dict) and "code" in item
        ]

    def has(self, code: str) -> bool:
        """Whether the answer grants the entitlement `code`."""
        return any(item.code == code for item in self.entitlements)

    @property
    def credits(self) -> int | None:
        """The credit balance: what a login answered (`credits.balance`), or what a spend left
        (`balance`, also on a `credits_exhausted` refusal); None when the answer has none."""
        given = self.body.get("credits")
        value = given.get("balance") if isinstance(given, dict) else self.body.get("balance")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def retry_after(self) -> int | None:
        """On a 429 (a rate limit, a named limit of the user or key: `answer["limit"]` names it),
        the seconds to wait before calling again; None otherwise."""
        value = self.headers.get("retry-after", "")
        return int(value) if value.isdigit() else None

    @property
    def changed(self) -> list[str]:
        """What a heartbeat answered changed since the session's previous heartbeat (or its
        login): `entitlements`, `credits`; the codes are in `answer["entitlements_added"]` and
        `answer["entitlements_removed"]`. Empty for other answers."""
        return [str(item) for item in self.body.get("changed") or ()]

    @property
    def ended(self) -> str | None:
        """Why the session was ended, on a `session_not_found` refusal: `banned` (the ban's
        reason in `answer["reason"]`, the application's message in `answer.message`) or
        `paused`; None otherwise. The program should stop."""
        value = self.body.get("ended")
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Entitlement:
    """A named feature the user may use (metadata only from Get Entitlements and license files)."""

    code: str
    name: str
    metadata: dict[str, Any] = field(default_factory=dict)


def verify_answer(
    raw: bytes,
    headers: Mapping[str, str],
    public_keys: tuple[str, ...],
    *,
    now: float,
    clientnonce: str | None,
    max_age: int = MAX_AGE,
    max_ahead: int = MAX_AHEAD,
) -> dict[str, Any]:
    """Check one answer's signature, freshness and nonce binding; return its JSON body."""
    timestamp = headers.get("x-signature-timestamp", "")
    signature = headers.get("x-signature-ed25519", "")
    if not timestamp or not signature:
        raise TamperedAnswer("the answer carries no signature")
    if not timestamp.isdigit() or not 9 <= len(timestamp) <= 13:
        raise TamperedAnswer("the answer's timestamp is malformed")
    age = now - int(timestamp)
    if age > max_age or -age > max_ahead:
        raise TamperedAnswer(f"the answer's timestamp is {int(age)} s away from this machine's clock")
    signed = timestamp.encode("ascii") + raw
    if not any(verify(key, signature, signed) for key in public_keys):
        raise TamperedAnswer("the answer's signature does not verify")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ClientError(f"the answer is not JSON: {raw[:80]!r}") from exc
    if not isinstance(body, dict):
        raise ClientError("the answer is not a JSON object")
    if clientnonce is not None and body.get("clientnonce") != clientnonce:
        raise TamperedAnswer("the answer does not echo this request's clientnonce (replayed?)")
    return body


def verify_license_file(
    text: str,
    trusted: Mapping[str, str],
    *,
    ownerid: str,
    name: str,
    hwid: str | None,
    license_key: str | None = None,
    now: float | None = None,
    skew: int = DEFAULT_SKEW,
) -> LicenseFile:
    """Verify a signed license file without the server (docs/offline.md): its signature by one of
    the `trusted` public keys (key id -> 64 hex, shipped with the program; build it with
    `key_id(public_key)` or from the seller API's `fetchlicensekeys`), that it is this
    application's, bound to this machine's `hwid`, and not expired (allowing `skew` seconds of
    clock difference). An encrypted file needs the `license_key` too. Raises
    `LicenseFileError`, whose `reason` is one of `malformed`, `unknown_key`, `tampered`,
    `cannot_decrypt`, `wrong_application`, `wrong_hwid`, `expired`, `not_yet_valid`."""
    return read_license_file(
        text,
        trusted,
        ownerid=ownerid,
        name=name,
        hwid=hwid,
        now=time.time() if now is None else now,
        license_key=license_key,
        skew=skew,
    )


class Client:
    """One program instance of one application: it keeps the session `init` opened."""

    def __init__(
        self,
        base_url: str,
        *,
        ownerid: str,
        name: str,
        public_key: str,
        dialect: Dialect = "1.3",
        secret: str | None = None,
        deployment_public_key: str | None = None,
        bind: bool = True,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
        timeout: float = 10.0,
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {DIALECTS}")
        self.ownerid = ownerid
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.dialect: Dialect = dialect
        self.path = f"{base_url.rstrip('/')}/api/{dialect}/"
        self.public_keys = (public_key,) + ((deployment_public_key,) if deployment_public_key else ())
        self.secret = secret
        self.bind = bind
        self.clock = clock
        self.sessionid: str | None = None
        self.enckey: str | None = None  # API 1.2: the client's half of the HMAC key, sent at init
        self._own_http = http is None
        self._http = http or httpx.AsyncClient(timeout=timeout)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own_http:
            await self._http.aclose()

    # --- the wire ------------------------------------------------------------------------------

    async def call(self, type_: str, /, **params: str | int | None) -> Answer:
        """Any operation by its `type`; None values are left out. Returns the verified answer."""
        values = {"type": type_, "ownerid": self.ownerid, "name": self.name}
        if self.sessionid is not None and type_ != "init":
            values["sessionid"] = self.sessionid
        values.update({k: str(v) for k, v in params.items() if v is not None})
        clientnonce = secrets.token_hex(16) if self.bind else None
        if clientnonce is not None:
            values["clientnonce"] = clientnonce
        try:
            if self.dialect == "1.0":  # the interface document's dialect: the query string
                response = await self._http.post(self.path, params=values)
            else:
                response = await self._http.post(self.path, data=values)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach the service: {exc}") from exc
        raw = response.content
        body = verify_answer(
            raw, response.headers, self.public_keys, now=self.clock(), clientnonce=clientnonce
        )
        if self.dialect == "1.2" and self.secret is not None and self._signed_by_app(raw, response.headers):
            self._check_hmac(type_, raw, response.headers)
        return Answer(response.status_code, body, raw, response.headers)

    def _signed_by_app(self, raw: bytes, headers: Mapping[str, str]) -> bool:
        """Whether the application's key signed it (answers that name no known application are
        signed by the deployment's key and carry no HMAC: there is no secret to key it with)."""
        timestamp = headers.get("x-signature-timestamp", "")
        return verify(self.public_keys[0], headers.get("x-signature-ed25519", ""), timestamp.encode() + raw)

    def _check_hmac(self, type_: str, raw: bytes, headers: Mapping[str, str]) -> None:
        assert self.secret is not None
        sent = headers.get("signature", "")
        keys = (
            [self.secret]
            if type_ == "init" or self.enckey is None
            else [f"{self.enckey}-{self.secret}", self.secret]
        )
        if not any(secrets.compare_digest(sent, hmac_hex(key, raw)) for key in keys):
            raise TamperedAnswer("the answer's HMAC signature does not verify")

    # --- operations ----------------------------------------------------------------------------

    async def init(
        self,
        ver: str | None = None,
        hash: str | None = None,
        token: str | None = None,
        thash: str | None = None,
    ) -> Answer:
        """Open a session (kept for the calls that follow)."""
        enckey = secrets.token_hex(16) if self.dialect == "1.2" else None
        answer = await self.call("init", ver=ver, hash=hash, token=token, thash=thash, enckey=enckey)
        if answer.success:
            self.sessionid = answer.body["sessionid"]
            self.enckey = enckey
        return answer

    async def license(self, key: str, hwid: str | None = None, code: str | None = None) -> Answer:
        return await self.call("license", key=key, hwid=hwid, code=code)

    async def login(
        self, username: str, password: str, hwid: str | None = None, code: str | None = None
    ) -> Answer:
        return await self.call("login", username=username, **{"pass": password}, hwid=hwid, code=code)

    async def login_with_token(self, username: str, token: str, hwid: str | None = None) -> Answer:
        """Login with the web loader's one-time token (from the customer panel) instead of a
        password; `WebLoader` calls it when the panel hands a token over."""
        return await self.call("login", username=username, token=token, hwid=hwid)

    async def register(
        self, username: str, password: str, key: str, email: str | None = None, hwid: str | None = None
    ) -> Answer:
        return await self.call(
            "register", username=username, **{"pass": password}, key=key, email=email, hwid=hwid
        )

    async def upgrade(self, username: str, key: str) -> Answer:
        return await self.call("upgrade", username=username, key=key)

    async def entitlements(self) -> Answer:
        """Get Entitlements: the logged-in user's, with their metadata (`answer.entitlements`)."""
        return await self.call("entitlements")

    async def spend(self, cost: int = 1) -> Answer:
        """Spend Credits: take `cost` credits of the session's balance, atomically; what is left
        is `answer.credits` (refused with `credits_exhausted` when the balance holds less)."""
        return await self.call("spend", cost=cost)

    async def heartbeat(self) -> Answer:
        """Heartbeat: the session is running (call it every `answer["interval"]` seconds when
        the application wants beats). Answers the entitlements and credits now and what changed
        since the previous beat (`answer.changed`); refused `session_not_found` with
        `answer.ended` once a ban or a pause ended the session."""
        return await self.call("heartbeat")

    async def license_file(self, *, encrypt: bool = False) -> Answer:
        """Get License File: a signed file for offline starts, in `answer["file"]`; keep it and
        check it with `verify_license_file` when the server cannot be reached."""
        return await self.call("licensefile", encrypt=1 if encrypt else None)

    async def forgot(self, username: str, email: str) -> Answer:
        return await self.call("forgot", username=username, email=email)

    async def logout(self) -> Answer:
        return await self.call("logout")

    async def change_username(self, new_username: str) -> Answer:
        return await self.call("changeUsername", newUsername=new_username)

    async def check(self) -> Answer:
        return await self.call("check")

    async def check_blacklist(self, hwid: str | None = None) -> Answer:
        """On 1.1–1.3 `success` true means blacklisted (KeyAuth's meaning); `blacklisted` says it
        in every dialect."""
        return await self.call("checkblacklist", hwid=hwid)

    async def fetch_online(self) -> Answer:
        return await self.call("fetchOnline")

    async def fetch_stats(self) -> Answer:
        return await self.call("fetchStats")

    async def var(self, varid: str) -> Answer:
        """A global variable: its value is in `message`."""
        return await self.call("var", varid=varid)

    async def getvar(self, var: str) -> Answer:
        """A user variable: its value is in `response`."""
        return await self.call("getvar", var=var)

    async def setvar(self, var: str, data: str) -> Answer:
        return await self.call("setvar", var=var, data=data)

    async def ban(self, reason: str | None = None, hwid: str | None = None) -> Answer:
        return await self.call("ban", reason=reason, hwid=hwid)

    async def file(self, fileid: str) -> Answer:
        """A file: hex in `contents` (`file_bytes` decodes it)."""
        return await self.call("file", fileid=fileid)

    @staticmethod
    def file_bytes(answer: Answer) -> bytes:
        return bytes.fromhex(answer.body["contents"])

    async def webhook(
        self, webid: str, params: str | None = None, body: str | None = None, conttype: str | None = None
    ) -> Answer:
        """Call a webhook: the remote reply is in `response`."""
        return await self.call("webhook", webid=webid, params=params, body=body, conttype=conttype)

    async def chatget(self, channel: str) -> Answer:
        return await self.call("chatget", channel=channel)

    async def chatsend(self, channel: str, message: str) -> Answer:
        return await self.call("chatsend", channel=channel, message=message)

    async def log(self, message: str, pcuser: str | None = None) -> Answer:
        return await self.call("log", message=message, pcuser=pcuser)

    async def tamper(self, reason: str, hwid: str | None = None, details: str | None = None) -> Answer:
        return await self.call("tamper", reason=reason, hwid=hwid, details=details)

    async def enable_2fa(self, code: str | None = None) -> Answer:
        return await self.call("2faenable", code=code)

    async def disable_2fa(self, code: str) -> Answer:
        return await self.call("2fadisable", code=code)


# --- the web loader ---------------------------------------------------------------------------------

DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_BUTTON = 99


def origin_of(url: str) -> str:
    """A URL's origin as browsers send it in `Origin` (scheme://host[:port], the default port left out)."""
    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not scheme or not host:
        raise ValueError(f"not an absolute URL: {url!r}")
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    return f"{scheme}://{host}" + (
        f":{port}" if port is not None and port != DEFAULT_PORTS.get(scheme) else ""
    )


class WebLoader:
    """The desktop side of the customer panel's web loader: a listener on this computer that the
    panel's page (in the user's browser) talks to.

        async with Client(...) as app:
            await app.init()
            async with WebLoader(app, hwid=machine_id()) as loader:   # listens on localhost:1337
                answer = await loader.wait_for_login()   # the user pressed Connect on the panel
                while (await loader.button()) != "close": ...

    `GET /handshake?user=<name>&token=<one-time token>` makes the client log in with the token
    (`Client.login_with_token`); `GET /button?value=<value>&token=<the same token>` delivers a
    button's value to `button()`. A request is answered only when its `Origin` is the panel's
    (`panel_origin`, by default the origin of the client's service URL) and its `Host` names this
    listener: any other web page the user opens (or a DNS-rebinding one) gets 403 and changes
    nothing. CORS answers name that one origin, never `*`.
    """

    def __init__(
        self,
        client: Client,
        *,
        panel_origin: str | None = None,
        hwid: str | None = None,
        port: int = 1337,
        hosts: tuple[str, ...] = ("127.0.0.1", "::1"),
    ) -> None:
        self.client = client
        self.panel_origin = origin_of(panel_origin or client.base_url)
        self.hwid = hwid
        self.port = port
        self.hosts = hosts
        self.username: str | None = None
        self._token: str | None = None
        self._servers: list[asyncio.AbstractServer] = []
        self._lock = asyncio.Lock()
        self._login: asyncio.Future[Answer] | None = None
        self._buttons: asyncio.Queue[str] = asyncio.Queue()
        self._own_hosts = {f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"}

    async def __aenter__(self) -> WebLoader:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Listen on every loopback address of `hosts` that exists on this computer."""
        self._login = asyncio.get_running_loop().create_future()
        for index, host in enumerate(self.hosts):
            try:
                self._servers.append(await asyncio.start_server(self._serve, host, self.port))
            except OSError:
                if index == 0:
                    raise  # the first address must work; the others (IPv6) may be missing

    async def close(self) -> None:
        for server in self._servers:
            server.close()
            await server.wait_closed()
        self._servers.clear()

    async def wait_for_login(self) -> Answer:
        """The answer of the login the panel's token made (wait until the panel connects; bound
        the wait with `asyncio.timeout` if need be)."""
        assert self._login is not None, "start() the listener first"
        return await asyncio.shield(self._login)

    async def button(self, value: str | None = None) -> str:
        """The value of the next button the user presses on the panel (with `value`: wait for that
        one, as KeyAuth's `button("close")` does; other presses are passed over)."""
        while True:
            pressed = await self._buttons.get()
            if value is None or pressed == value:
                return pressed

    # --- HTTP, as little as the panel's page needs --------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            lines = head.decode("latin-1").split("\r\n")
            method, target, _version = lines[0].split(" ", 2)
            headers = {
                name.strip().lower(): value.strip()
                for name, _, value in (line.partition(":") for line in lines[1:] if line)
            }
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            writer.close()
            return
        try:
            status, body, cors = await self._answer(method, target, headers)
            writer.write(self._response(status, body, headers.get("origin", "") if cors else ""))
            await writer.drain()
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _response(self, status: int, body: dict[str, Any] | None, origin: str) -> bytes:
        payload = b"" if body is None else orjson.dumps(body)
        reason = {
            200: "OK",
            204: "No Content",
            400: "Bad Request",
            401: "Unauthorized",
            403: "Forbidden",
            404: "Not Found",
            405: "Method Not Allowed",
            409: "Conflict",
            502: "Bad Gateway",
        }
        lines = [
            f"HTTP/1.1 {status} {reason.get(status, 'Error')}",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
            "Cache-Control: no-store",
            "Connection: close",
            "Vary: Origin",
        ]
        if origin:
            lines += [
                f"Access-Control-Allow-Origin: {origin}",
                "Access-Control-Allow-Methods: GET",
                "Access-Control-Allow-Private-Network: true",
                "Access-Control-Max-Age: 60",
            ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload

    async def _answer(
        self, method: str, target: str, headers: dict[str, str]
    ) -> tuple[int, dict[str, Any] | None, bool]:
        origin = headers.get("origin", "").lower()
        if origin != self.panel_origin:
            return (
                403,
                {"success": False, "message": "Only the customer panel may talk to the loader."},
                False,
            )
        if headers.get("host", "").lower() not in self._own_hosts:
            return 403, {"success": False, "message": "This listener answers only as localhost."}, False
        if method == "OPTIONS":
            return 204, None, True
        if method != "GET":
            return 405, {"success": False, "message": "Only GET is answered."}, True
        parts = urlsplit(target)
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        token = query.get("token", "")
        if parts.path.rstrip("/") == "/handshake":
            return (*await self._handshake(query.get("user", ""), token), True)
        if parts.path.rstrip("/") == "/button":
            return (*self._button(query.get("value", ""), token), True)
        return 404, {"success": False, "message": "Nothing here."}, True

    async def _handshake(self, user: str, token: str) -> tuple[int, dict[str, Any]]:
        if not user or not token:
            return 400, {"success": False, "message": "A handshake names the user and the token."}
        async with self._lock:  # the page may ask again while the first login is on its way
            if self._token is not None:
                if secrets.compare_digest(token, self._token):
                    return 200, {"success": True, "message": "Signed in."}
                return 409, {"success": False, "message": "The loader is signed in already."}
            try:
                answer = await self.client.login_with_token(user, token, hwid=self.hwid)
            except ClientError as exc:
                return 502, {"success": False, "message": f"The service did not answer properly: {exc}"}
            if not answer.success:
                return 401, {"success": False, "message": answer.message}
            self._token, self.username = token, user
            if self._login is not None and not self._login.done():
                self._login.set_result(answer)
            return 200, {"success": True, "message": answer.message}

    def _button(self, value: str, token: str) -> tuple[int, dict[str, Any]]:
        if self._token is None:
            return 409, {"success": False, "message": "The loader is not signed in yet."}
        if not secrets.compare_digest(token, self._token):
            return 403, {"success": False, "message": "This button comes from another panel session."}
        if not value or len(value) > MAX_BUTTON:
            return 400, {"success": False, "message": "A button's value is 1 to 99 characters."}
        self._buttons.put_nowait(value)
        return 200, {"success": True, "message": "Received."}
