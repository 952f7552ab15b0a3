"""How the Claude Code CLI reads file paths and URLs under session rules (for `rules check`).

Observed behaviour of the bundled CLI (see tests/differential), as helpers:

- `windows_shape`: 8.3 short names (`FILE~1.TXT`), components ending in a dot, `...`
  and NTFS streams (`a:stream`) make the CLI ask, whatever the rules;
- `sensitive_write`: the files and folders whose edits it asks about (our
  `rules.sensitive` list without Qoder's own `.qoder` entries, which the CLI lets
  an `Edit(./**)` rule write);
- `deny_matches`: deny rules on files match case-insensitively, a pattern without a
  slash at any depth, on the path with `..` collapsed as text;
- `cli_host`: the host a URL names once normalised as a browser would (integer, octal
  and hex IPv4 forms, full-width characters, IDN to punycode, a trailing dot);
  `domain:` deny rules compare against it.

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from urllib.parse import urlsplit

from qoder_desktop.rules import sensitive

_SHORT_NAME = re.compile(r"~\d")
_QODER_ONLY = (".qoder/", ".qoder.json")


def windows_shape(path: str) -> bool:
    """True when a path has a shape Windows reads differently (the CLI asks)."""
    for part in path.replace("\\", "/").split("/"):
        if part in ("", ".", ".."):
            continue
        if _SHORT_NAME.search(part) or part.endswith(".") or ":" in part:
            return True
    return False


def sensitive_write(path: str, cwd: str) -> str | None:
    """"sensitive file X" when the CLI asks about writing `path`, else None."""
    part = sensitive.sensitive_part(os.path.normpath(path) if path else path)
    if part is None or part.lower().startswith(_QODER_ONLY):
        return None
    return f"sensitive file {part}"


def lexical(path: str, cwd: str) -> str:
    """The absolute path with `~` expanded and `..` collapsed as text."""
    if path == "~" or path.startswith("~/"):
        path = os.path.expanduser("~") + path[1:]
    return os.path.normpath(os.path.join(cwd, path))


@functools.lru_cache(maxsize=512)
def _pattern(body: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def deny_matches(content: str, path: str, cwd: str) -> bool:
    """True when a file deny rule's specifier covers `path` (case-insensitive)."""
    if not content or not path:
        return False
    target = lexical(path, cwd)
    if content.startswith("//"):
        root, body = "/", content[2:]
    elif content.startswith("~/"):
        root, body = os.path.expanduser("~"), content[2:]
    elif content.startswith(("./", "/")):
        body = content
        while body.startswith("./"):
            body = body[2:]
        root, body = cwd, body.removeprefix("/")
    elif "/" in content.rstrip("/"):
        root, body = cwd, content
    else:
        regex = _pattern(content.rstrip("/"))
        return any(regex.fullmatch(part) for part in target.split("/") if part)
    body = body.rstrip("/")
    prefix = root.rstrip("/") + "/"
    low_target, low_prefix = target.lower(), prefix.lower()
    if not low_target.startswith(low_prefix):
        return False
    rel = target[len(prefix):]
    regex = _pattern(body)
    parts = rel.split("/")
    return any(regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1))


def _ipv4(host: str) -> str | None:
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (4 - len(numbers)):
        return None
    value = last
    for index, number in enumerate(numbers):
        value += number << (8 * (3 - index))
    return ".".join(str((value >> shift) & 255) for shift in (24, 16, 8, 0))


def cli_host(url: object) -> str | None:
    """The normalised host of an http(s) URL, or None when there is none."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(unicodedata.normalize("NFKC", url.strip()))
        host = parts.hostname or ""
    except ValueError:
        return None
    host = host.lower().removesuffix(".")
    if not host:
        return None
    numeric = _ipv4(host)
    if numeric is not None:
        return numeric
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host
