"""Writing a file that only its owner may read, so that a reader never sees half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

FOLDER_MODE = 0o700
"""The mode of a folder made for a private file."""
FILE_MODE = 0o600
"""The mode of a private file."""


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically, readable by the owner only.

    The text goes to a temporary file beside it (0600), is flushed to the disk and renamed
    over `path`; then the folder is synced so the rename lasts. A missing folder is made
    (0700). On any failure the temporary file is removed and `path` is left as it was.

    Raises:
        OSError: when the folder or the file cannot be written.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, FILE_MODE)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _sync_folder(folder)


def _sync_folder(folder: Path) -> None:
    if os.name != "posix":
        return
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
