"""The checkpoint of a read through KeyAuth's seller API: one JSON line per finished step (the
request's name and its reply), appended and synced to disk before the next request, so a read
that is stopped (killed, the network gone, KeyAuth failing) resumes after its last finished step
and never asks for a finished one again.

The first line says what the read is (the API's address, a SHA-256 of the seller key: the key
itself is never written) and when it started. The file holds what KeyAuth answered, the
application's secret and its users' password hashes included, so it is created readable by its
owner only. A line cut short by a kill is dropped on resume."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

KIND = "keyauth-seller-api"
VERSION = 1


class CheckpointError(Exception):
    """The checkpoint cannot be used (another read's, unreadable, or missing on --resume)."""


def key_digest(seller_key: str) -> str:
    return hashlib.sha256(seller_key.encode()).hexdigest()


class Checkpoint:
    def __init__(self, path: Path, header: dict[str, Any], done: set[str]) -> None:
        self.path = path
        self.header = header
        self.done = done  # the ids of finished steps

    @property
    def read_at(self) -> int:
        return int(self.header["read_at"])

    @classmethod
    def start(cls, path: Path, *, base_url: str, seller_key: str, read_at: int) -> Checkpoint:
        """A new checkpoint; refuses to overwrite one (that read may be resumed)."""
        header = {"checkpoint": KIND, "version": VERSION, "from": base_url, "key": key_digest(seller_key)}
        header["read_at"] = read_at
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise CheckpointError(
                f"{path} already holds a read in progress: add --resume to continue it, or remove the file "
                "to start again."
            ) from None
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(header) + "\n")
            out.flush()
            os.fsync(out.fileno())
        return cls(path, header, set())

    @classmethod
    def resume(cls, path: Path, *, base_url: str, seller_key: str) -> Checkpoint:
        """The checkpoint of an interrupted read of the same application from the same address."""
        if not path.exists():
            raise CheckpointError(f"There is no checkpoint at {path} to resume.")
        done: set[str] = set()
        good = 0  # bytes up to the end of the last whole line
        header: dict[str, Any] | None = None
        with path.open("rb") as source:
            for raw in source:
                if not raw.endswith(b"\n"):
                    break  # cut short by a kill: that step is asked again
                try:
                    entry = json.loads(raw)
                except ValueError:
                    break
                if header is None:
                    header = entry
                else:
                    done.add(str(entry["step"]))
                good += len(raw)
        if header is None or header.get("checkpoint") != KIND or header.get("version") != VERSION:
            raise CheckpointError(f"{path} is not a checkpoint of a KeyAuth seller API read.")
        # The seller key names the application; the address may change (a custom domain).
        if header.get("key") != key_digest(seller_key):
            raise CheckpointError(
                f"{path} is the checkpoint of another read (another seller key): resume it with the same "
                "--seller-key, or give another --checkpoint."
            )
        header["from"] = base_url
        with path.open("r+b") as target:
            target.truncate(good)
        return cls(path, header, done)

    def record(self, step: str, reply: dict[str, Any], **extra: str) -> None:
        """Append one finished step and sync it to disk."""
        line = json.dumps({"step": step, **extra, "reply": reply}, separators=(",", ":")) + "\n"
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())
        self.done.add(step)

    def entries(self) -> Iterator[dict[str, Any]]:
        """Every finished step in the order they were made (read again from the file)."""
        with self.path.open("rb") as source:
            next(source, None)
            for raw in source:
                if raw.endswith(b"\n"):
                    yield json.loads(raw)

    def reply(self, step: str) -> dict[str, Any]:
        for entry in self.entries():
            if entry["step"] == step:
                reply: dict[str, Any] = entry["reply"]
                return reply
        raise CheckpointError(f"{self.path} holds no reply to {step}: the read is not finished.")
