"""Files and folders only the service's own user may read: the SQLite database (which holds every
user's data) and uploaded files are made 0600, in folders made 0700, whatever the umask says.
Folders and files that exist already keep their modes (an operator may have chosen them)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def folder(path: Path) -> Path:
    """Create `path` (and missing parents) owner-only; an existing folder is left as it is."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            created.mkdir(mode=FOLDER_MODE)
            os.chmod(created, FOLDER_MODE)  # mkdir's mode is narrowed by the umask only
    return path


def touch(path: Path) -> None:
    """Create an empty file owner-only unless it exists (an empty file is an empty SQLite
    database, so SQLite then opens it instead of creating it with the umask's mode)."""
    folder(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))


def create(path: Path) -> BinaryIO:
    """A new file, owner-only, open for writing; refused when it exists (like mode "xb")."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE), "wb")
