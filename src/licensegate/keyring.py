"""The deployment key: the 256-bit key every secret at rest is encrypted under.

It comes from configuration (`LICENSEGATE_DEPLOYMENT_KEY`, with `LICENSEGATE_DEPLOYMENT_OLD_KEYS`
during a rotation) or from the key file `<data folder>/deployment.key`, which the first process
that needs it creates with mode 0600. The file holds one key per line as 64 hex characters: the
first encrypts, every line decrypts (older keys stay until everything was re-encrypted).

Several processes may start at once (`serve` workers, a `create-app` run beside them): the file
is written whole under a temporary name and linked into place, so exactly one key wins and no
process ever reads half a file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from licensegate.config import ConfigError
from licensegate.durable import fsync_dir

log = logging.getLogger("licensegate.keyring")

KEY_FILE_NAME = "deployment.key"
KEY_BYTES = 32


class KeyringError(ConfigError):
    """The deployment key is missing, malformed or cannot be read."""


def key_id(key: bytes) -> str:
    """A short public fingerprint that names a key inside each ciphertext (never the key itself)."""
    return hashlib.sha256(b"licensegate deployment key id\x00" + key).hexdigest()[:8]


def parse_key(text: str, where: str) -> bytes:
    text = text.strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise KeyringError(f"{where}: a deployment key is {KEY_BYTES * 2} hex characters")
    return key


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


@dataclass(frozen=True)
class Keyring:
    """The keys this process knows, the current one first."""

    keys: tuple[bytes, ...]
    path: Path | None = None  # the key file they came from (None: from configuration)

    @property
    def current(self) -> bytes:
        return self.keys[0]

    @property
    def current_id(self) -> str:
        return key_id(self.current)

    def by_id(self) -> dict[str, bytes]:
        return {key_id(key): key for key in self.keys}


def from_config(current: str, old: tuple[str, ...]) -> Keyring:
    keys = [parse_key(current, "LICENSEGATE_DEPLOYMENT_KEY")]
    keys += [parse_key(text, "LICENSEGATE_DEPLOYMENT_OLD_KEYS") for text in old]
    return Keyring(tuple(keys))


def read_key_file(path: Path) -> Keyring:
    try:
        info = path.stat()
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyringError(f"cannot read the deployment key file {path}: {exc}") from exc
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("the deployment key file %s is readable by others: chmod 600 it", path)
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if not lines:
        raise KeyringError(f"the deployment key file {path} holds no key")
    return Keyring(tuple(parse_key(line, str(path)) for line in lines), path)


def _write_new_file(path: Path, keys: tuple[bytes, ...]) -> Path:
    """Write `keys` to a fresh temporary file beside `path` (mode 0600, synced); return its name."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, "".join(key.hex() + "\n" for key in keys).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return temporary


def load_or_create(folder: Path) -> Keyring:
    """The key file in `folder`, created with a new key when there is none."""
    path = folder / KEY_FILE_NAME
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = _write_new_file(path, (new_key(),))
        try:
            os.link(temporary, path)  # atomic, and refuses to replace a key another process made
            fsync_dir(folder)
            log.info("created a new deployment key in %s: back it up (see docs/operations.md)", path)
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
    return read_key_file(path)


def replace_key_file(path: Path, keys: tuple[bytes, ...]) -> None:
    """Atomically replace the key file's contents (rotation)."""
    temporary = _write_new_file(path, keys)
    try:
        os.replace(temporary, path)
    except OSError:
        os.unlink(temporary)
        raise
    fsync_dir(path.parent)


def load(data_dir: Path, configured: str | None, configured_old: tuple[str, ...]) -> Keyring:
    if configured:
        return from_config(configured, configured_old)
    return load_or_create(data_dir)
