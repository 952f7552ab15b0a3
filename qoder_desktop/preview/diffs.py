"""Unified diffs of what a file tool would change, and of an edited JSON input.

`diff_for_tool` shows Write (new content against the file on disk, or a new file), Edit
(`old_string` → `new_string`, once or `replace_all`) and MultiEdit (edits applied in
order) as a unified diff. The file is read defensively: only regular files (checked
with `os.stat` before opening and `os.fstat` after, opened non-blocking so a FIFO swapped in
between cannot hang us), at most `MAX_DIFF_FILE_BYTES`, UTF-8 only.

`json_edit_diff` shows how the user changed a tool input, as a unified diff of the
pretty-printed JSON before and after. Qt-free.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qoder_desktop.domain.tools import DIFF_TOOLS
from qoder_desktop.text.visible import json_escape_hidden

MAX_DIFF_FILE_BYTES = 2 * 1024 * 1024
"""Files (and new contents) larger than this are not diffed."""



class DiffUnavailable(Exception):
    """The file cannot be diffed; the message says why, in words for the user."""


@dataclass(frozen=True)
class FileDiff:
    """What a file tool would change.

    Attributes:
        path: the absolute path the tool writes (relative paths resolved against cwd).
        text: the unified diff, or "" when there is nothing to show.
        note: a plain sentence for the user ("New file.", "old_string was not found…").
        ok: False when the diff could not be computed or the edit would fail.
    """

    path: str
    text: str
    note: str = ""
    ok: bool = True


def resolve_path(file_path: str, cwd: str | None) -> str:
    """`file_path` made absolute against `cwd` (unchanged when already absolute)."""
    if os.path.isabs(file_path) or not cwd:
        return os.path.normpath(file_path) if os.path.isabs(file_path) else file_path
    return os.path.normpath(os.path.join(cwd, file_path))


def read_text_capped(path: str, limit: int = MAX_DIFF_FILE_BYTES) -> str | None:
    """Read a regular UTF-8 file of at most `limit` bytes.

    Returns:
        The text, or None when the file does not exist.

    Raises:
        DiffUnavailable: for anything but a regular file, a file over `limit`, unreadable or
            binary content.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DiffUnavailable(f"Cannot read the file: {exc.strerror or exc}.") from None
    if not stat.S_ISREG(info.st_mode):
        raise DiffUnavailable("The path is not a regular file (a folder, device or pipe); "
                              "it is not read.")
    if info.st_size > limit:
        raise DiffUnavailable(f"The file is too large to diff ({info.st_size:,} bytes; "
                              f"the limit is {limit:,}).")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise DiffUnavailable(f"Cannot read the file: {exc.strerror or exc}.") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DiffUnavailable("The path changed into something that is not a regular "
                                  "file; it is not read.")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise DiffUnavailable(f"The file is too large to diff (over {limit:,} bytes).")
    if b"\0" in data:
        raise DiffUnavailable("The file looks binary; it is not diffed.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise DiffUnavailable("The file is not UTF-8 text; it is not diffed.") from None


def unified(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff of two texts (3 lines of context), "" when they are equal."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 old_name, new_name, n=3)
    out: list[str] = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _apply_edit(text: str, edit: Mapping[str, Any], label: str) -> str:
    old = edit.get("old_string")
    new = edit.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        raise DiffUnavailable(f"{label}: old_string and new_string must be strings.")
    if old == new:
        raise DiffUnavailable(f"{label}: old_string and new_string are the same; the edit "
                              "would fail.")
    if old == "":
        if text:
            raise DiffUnavailable(f"{label}: an empty old_string only works on an empty or "
                                  "new file.")
        return new
    count = text.count(old)
    if count == 0:
        raise DiffUnavailable(f"{label}: old_string was not found in the file; the edit "
                              "would fail.")
    if edit.get("replace_all") is True:
        return text.replace(old, new)
    if count > 1:
        raise DiffUnavailable(f"{label}: old_string occurs {count} times and replace_all is "
                              "not set; the edit would fail.")
    return text.replace(old, new, 1)


def _creates_file(tool_name: str, tool_input: Mapping[str, Any]) -> bool:
    """True for an Edit/MultiEdit whose first old_string is empty (it creates the file)."""
    first: Any = tool_input
    if tool_name == "MultiEdit":
        edits = tool_input.get("edits")
        first = edits[0] if isinstance(edits, list) and edits else {}
    return isinstance(first, Mapping) and first.get("old_string") == ""


def _content_diff(path: str, before: str | None, after: str) -> FileDiff:
    if len(after.encode("utf-8", "surrogatepass")) > MAX_DIFF_FILE_BYTES:
        return FileDiff(path, "", "The new content is too large to diff.", ok=False)
    if before is None:
        return FileDiff(path, unified("", after, "/dev/null", f"b{path}"),
                        "New file: it does not exist yet.")
    text = unified(before, after, f"a{path}", f"b{path}")
    return FileDiff(path, text, "" if text else "No changes: the content is the same.")


def diff_for_tool(tool_name: str, tool_input: Mapping[str, Any],
                  cwd: str | None) -> FileDiff | None:
    """The diff a Write/Edit/MultiEdit call would make against the file on disk.

    Returns:
        None for other tools; otherwise a `FileDiff` (with `ok=False` and a note when it
        cannot be shown or the edit would fail). Never raises for bad input.
    """
    if tool_name not in DIFF_TOOLS:
        return None
    file_path = tool_input.get("file_path")
    if not isinstance(file_path, str) or not file_path:
        return FileDiff("", "", "The input names no file_path.", ok=False)
    path = resolve_path(file_path, cwd)
    if not os.path.isabs(path):
        return FileDiff(path, "", "The path is relative and the session's folder is unknown.",
                        ok=False)
    try:
        before = read_text_capped(path)
        if tool_name == "Write":
            content = tool_input.get("content")
            if not isinstance(content, str):
                return FileDiff(path, "", "The input has no text content.", ok=False)
            return _content_diff(path, before, content)
        if before is None and not _creates_file(tool_name, tool_input):
            return FileDiff(path, "", "The file does not exist; the edit would fail.", ok=False)
        if tool_name == "Edit":
            after = _apply_edit(before or "", tool_input, "Edit")
        else:
            edits = tool_input.get("edits")
            if not isinstance(edits, list) or not edits:
                return FileDiff(path, "", "The input has no list of edits.", ok=False)
            after = before or ""
            for number, edit in enumerate(edits, start=1):
                if not isinstance(edit, Mapping):
                    raise DiffUnavailable(f"Edit {number} is not an object.")
                after = _apply_edit(after, edit, f"Edit {number} of {len(edits)}")
    except DiffUnavailable as exc:
        return FileDiff(path, "", str(exc), ok=False)
    return _content_diff(path, before, after)


def pretty_json(value: Any) -> str:
    """Indented JSON with hidden characters escaped, as the input editor shows it."""
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    return json_escape_hidden(text)


def json_edit_diff(original: Any, edited: Any) -> str:
    """How the user changed an input: a unified diff of the pretty-printed JSON."""
    return unified(pretty_json(original) + "\n", pretty_json(edited) + "\n",
                   "original input", "edited input")
