"""Path and domain specifiers of session rules (`Edit(./src/**)`, `WebFetch(domain:x)`).

Path specifiers follow Claude Code: gitignore-style globs in four forms.

- `//abs/path`: absolute (`//etc/hosts` is `/etc/hosts`).
- `~/path`: relative to the home directory (`$HOME`).
- `/path`: relative to the settings root; a session has no settings file, so the
  session's working folder is that root.
- `./path` or `path`: relative to the working folder. As in gitignore, a bare pattern
  without any `/` (`*.env`, `secrets`) matches at any depth below the folder, while
  `./name` is anchored to the folder itself.

`**` spans folders, `*`, `?` and `[...]` stay within one, `\\` escapes the next
character, a trailing `/` matches folders only. As in gitignore, a pattern that
matches a folder also matches everything inside it. Patterns starting with `!` or `#`
and patterns with `.`/`..` after a wildcard are invalid and never match.

Strict matching (for allow rules) canonicalizes the input with `os.path.realpath`
against the working folder, so `..` and symlinks cannot leave the allowed tree, and
resolves only the pattern's root (working folder or home), not the rest of it. As in
the CLI, the path as written must match too (a link into the allowed tree from outside
it does not count as inside).
Generous matching (for deny and ask rules) tries the lexical and the resolved input
against the pattern with and without symlinks resolved, and treats an input that
cannot be canonicalized as a match.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from qoder_desktop.shell.words import is_invisible

_GLOB_CHARS = frozenset("*?[\\")


@dataclass(frozen=True)
class _Compiled:
    """One compiled path pattern."""

    regex: re.Pattern[str]
    inside: re.Pattern[str] | None  # for `base/**`: folders whose whole content matches
    dir_only: bool


def _glob_regex(pat: str) -> str | None:
    """Translate a gitignore glob (relative, `/`-separated) into a regex fragment."""
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "\\":
            if i + 1 >= n:
                return None
            out.append(re.escape(pat[i + 1]))
            i += 2
        elif c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            whole_component = (i == 0 or pat[i - 1] == "/") and (j == n or pat[j] == "/")
            if j - i >= 2 and whole_component:
                if j < n:
                    out.append("(?:.*/)?")
                    j += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pat[j] in "!^":
                j += 1
            if j < n and pat[j] == "]":
                j += 1
            close = pat.find("]", j)
            if close < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pat[i + 1:close]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            chars = "".join("-" if ch == "-" else re.escape(ch) for ch in body)
            out.append(f"[^/{chars}]" if negate else f"(?!/)[{chars}]")
            i = close + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _join(base: str, fragment: str) -> str:
    return re.escape(base) + ("" if base.endswith("/") else "/") + fragment


def _compile(root: str, body: str, anchored: bool, resolve: bool) -> _Compiled | None:
    if body.startswith(("!", "#")):
        return None
    dir_only = body.endswith("/") and bool(body.strip("/"))
    body = body.rstrip("/")
    if not body:
        return _Compiled(re.compile(re.escape(root)), None, dir_only)
    parts = body.split("/")
    if not anchored:
        rest = _glob_regex(body)
        if rest is None or body in (".", ".."):
            return None
        base = os.path.realpath(root) if resolve else root
        regex = _join(base, "(?:.*/)?" + rest)
        inside = re.compile(re.escape(base)) if body == "**" else None
        return _Compiled(re.compile(regex, re.DOTALL), inside, dir_only)
    first_glob = next((k for k, p in enumerate(parts) if _GLOB_CHARS & set(p)), len(parts))
    literal, rest_parts = parts[:first_glob], parts[first_glob:]
    if any(p in (".", "..", "") for p in rest_parts):
        return None
    base = posixpath.normpath(posixpath.join(root, *literal)) if literal else root
    if resolve:
        base = os.path.realpath(base)
    if not rest_parts:
        return _Compiled(re.compile(re.escape(base)), None, dir_only)
    fragment = _glob_regex("/".join(rest_parts))
    if fragment is None:
        return None
    inside = None
    if rest_parts[-1] == "**":
        parent = _compile(root, "/".join(parts[:-1]), True, resolve)
        inside = parent.regex if parent and not parent.dir_only else None
    return _Compiled(re.compile(_join(base, fragment), re.DOTALL), inside, dir_only)


def _forms(content: str, cwd: str, home: str) -> tuple[str, str, bool]:
    """(root, body, anchored) of a specifier in one of the four path forms."""
    if content.startswith("//"):
        return "/", content[2:], True
    if content == "~" or content.startswith("~/"):
        return home, content[2:], True
    if content.startswith("/"):
        return cwd, content[1:], True
    if content.startswith("./"):
        body = content
        while body.startswith("./"):
            body = body[2:]
        return cwd, body, True
    return cwd, content, "/" in content.rstrip("/")


def _home() -> str:
    return os.path.expanduser("~")


def compile_path_rule(content: str, cwd: str, *, generous: bool = False) -> list[_Compiled]:
    """Compile a path specifier; the list is empty when the specifier is invalid.

    Strict compilation gives one pattern whose root (working folder or home) is
    resolved. Generous compilation adds variants with nothing resolved and with
    the whole literal prefix resolved.
    """
    if not isinstance(content, str) or not content or "\x00" in content:
        return []
    variants = [(os.path.realpath(cwd), os.path.realpath(_home()), False)]
    if generous:
        variants += [(os.path.abspath(cwd), os.path.abspath(_home()), False),
                     (os.path.realpath(cwd), os.path.realpath(_home()), True)]
    compiled: list[_Compiled] = []
    for cwd_root, home_root, resolve in variants:
        root, body, anchored = _forms(content, cwd_root, home_root)
        item = _compile(root, body, anchored, resolve)
        if item is not None and item not in compiled:
            compiled.append(item)
    return compiled


def canonical_path(path: object, cwd: str) -> str | None:
    """The real absolute path of a tool's path input, or None when it is unusable.

    Relative paths are taken against the real working folder; `..` and symlinks are
    resolved (`os.path.realpath`), so the result is where the file really is.
    """
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    try:
        return os.path.realpath(os.path.join(os.path.realpath(cwd), path))
    except (OSError, ValueError):
        return None


def _ancestors(path: str) -> Iterator[str]:
    current = path
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return
        yield parent
        current = parent


def _matches(item: _Compiled, path: str, is_dir: bool, directory: bool) -> bool:
    if (not item.dir_only or is_dir) and item.regex.fullmatch(path):
        return True
    if any(item.regex.fullmatch(a) for a in _ancestors(path)):
        return True
    if directory and item.inside is not None:
        return item.inside.fullmatch(path) is not None or any(
            item.inside.fullmatch(a) for a in _ancestors(path))
    return False


def path_rule_matches(content: str, path: object, cwd: str, *, generous: bool = False,
                      directory: bool = False) -> bool:
    """True when the path specifier `content` covers the tool's `path` input.

    Args:
        content: the rule's specifier, e.g. `./src/**` or `//etc/hosts`.
        path: the tool input's path value (anything; non-strings never match strictly).
        cwd: the session's working folder (the root for relative forms).
        generous: deny/ask matching (see the module docstring).
        directory: the path is a folder that a search tool (Glob, Grep, LS) will read
            recursively; it matches when it, or a folder above it, matches, or when the
            pattern is `base/**` and the folder is at or below `base`.
    """
    patterns = compile_path_rule(content, cwd, generous=generous)
    real = canonical_path(path, cwd)
    if real is None:
        return generous and bool(patterns)
    if not generous:
        # Like the CLI, both the path as written and its real path must be allowed.
        is_dir = directory or os.path.isdir(real)
        if not any(_matches(item, real, is_dir, directory) for item in patterns):
            return False
        lexical = os.path.normpath(os.path.join(os.path.abspath(cwd), str(path)))
        if lexical == real:
            return True
        written = patterns + compile_path_rule(content, cwd, generous=True)
        return any(_matches(item, lexical, is_dir, directory) for item in written)
    candidates = [real]
    if generous and isinstance(path, str):
        for raw in (path, os.path.expanduser(path)):
            lexical = os.path.normpath(os.path.join(os.path.abspath(cwd), raw))
            if lexical not in candidates:
                candidates.append(lexical)
    is_dir = directory or os.path.isdir(real)
    return any(_matches(item, cand, is_dir, directory)
               for item in patterns for cand in candidates)


def escape_path(path: str) -> str:
    """Escape gitignore wildcards so a literal path can be used as a specifier."""
    return "".join("\\" + ch if ch in _GLOB_CHARS else ch for ch in path)


# -- WebFetch(domain:...) --------------------------------------------------------------

_HOST = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$")


def strict_host(url: object) -> str | None:
    """The lower-case host of an http(s) URL, or None for anything doubtful.

    Doubtful means: not a string, whitespace, backslashes or invisible characters
    anywhere, user info (`user@host`), a bad port, or a host that is not plain
    letters, digits, dots and dashes (no IPv6 literals, no percent escapes).
    """
    if not isinstance(url, str) or any(ch.isspace() or ch == "\\" or is_invisible(ch)
                                       for ch in url):
        return None
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or "@" in parts.netloc:
        return None
    host = (parts.hostname or "").removesuffix(".")
    return host if _HOST.match(host) else None


def generous_hosts(url: object) -> set[str]:
    """Every host a lenient URL parser might connect to (for deny and ask rules)."""
    hosts: set[str] = set()
    if not isinstance(url, str):
        return hosts
    strict = strict_host(url)
    if strict:
        hosts.add(strict)
    text = unquote(url.strip()).lower()
    after = text.split("://", 1)[-1].lstrip("/\\")
    authority = re.split(r"[/?#\\]", after, maxsplit=1)[0]
    try:
        parsed = urlsplit(text).hostname
    except ValueError:
        parsed = None
    for piece in [parsed or "", *re.split(r"[@\\]", authority)]:
        host = piece.strip().strip("[]")
        if ":" in host and host.rsplit(":", 1)[1].isdigit():
            host = host.rsplit(":", 1)[0]
        host = host.removesuffix(".")
        if host:
            hosts.add(host)
    return hosts


def domain_rule_matches(content: str, url: object, *, generous: bool = False) -> bool:
    """True when `domain:HOST` (or `domain:*.HOST`, `domain:*`) covers the URL's host.

    `domain:example.com` matches that host exactly (not `www.example.com`);
    `domain:*.example.com` matches its subdomains, and for deny/ask rules the bare
    `example.com` too; `domain:*` matches any valid host. Other specifiers never match.
    """
    if not isinstance(content, str) or not content.startswith("domain:"):
        return False
    spec = content[len("domain:"):].strip().lower().removesuffix(".")
    if not spec:
        return False
    hosts = generous_hosts(url) if generous else {h for h in [strict_host(url)] if h}
    if spec == "*":
        return bool(hosts)
    if spec.startswith("*."):
        apex = spec[2:]
        if not _HOST.match(apex):
            return False
        return any(h.endswith("." + apex) or (generous and h == apex) for h in hosts)
    return _HOST.match(spec) is not None and spec in hosts
