"""Is this path inside the workspace? The one answer every part of the app gives.

A session's workspace is its roots: its working folder and the directories added to it
(a trusted-workspace list is roots too). A path is inside when it is a root or below
one, compared component by component (`/work/app2` is not inside `/work/app`), in both
of its forms:

- as written: made absolute against the working folder and normalised as text (`..`,
  `.`, repeated and trailing slashes collapsed), against a root as written or a root's
  real path;
- really: `os.path.realpath` (symbolic links and `..` followed through the file system)
  against a root's real path.

So a link inside the workspace that leads out is outside (`link_out/../x` too: `..`
after a link leaves the link's target), and so is a path written outside that a link
leads back in: the agent's CLI asks about both, and "outside" is the cautious answer
everywhere it is asked (the risk lens points at it, a notification sends the person to
the dialog, a folder is not trusted). Case is compared as the platform's
`os.path.normcase` does: folded on Windows only; elsewhere a differently cased spelling
counts as outside, which asks more, never less. Anything unusable — not a string, empty,
a NUL, a relative path with no folder to take it against — is outside. `~` is not
expanded here: callers that mean the home folder expand it first.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable


def within(path: str, root: str) -> bool:
    """True when `path` is `root` or below it, component by component; both are absolute
    and normalised already (no file-system access)."""
    path, root = os.path.normcase(path), os.path.normcase(root)
    if path == root:
        return True
    return path.startswith(root if root.endswith(os.sep) else root + os.sep)


def inside_forms(lexical: str, real: str, lexical_roots: Iterable[str],
                 real_roots: Iterable[str]) -> bool:
    """The rule on forms worked out already: `real` within a real root, and `lexical`
    (the path as written, absolute and normalised) within a root as written or a real
    root."""
    reals = tuple(real_roots)
    return (any(within(real, root) for root in reals)
            and any(within(lexical, root) for root in (*lexical_roots, *reals)))


def _lexical(path: str) -> str:
    """`path` (absolute) normalised as text; a leading `//` is one `/` (as realpath says)."""
    normal = os.path.normpath(path)
    return "/" + normal.lstrip("/") if os.sep == "/" and normal.startswith("//") else normal


def _real_below(real_folder: str, rest: str) -> str:
    """`os.path.realpath(real_folder/rest)` for a folder resolved already and a clean
    relative `rest` (no empty, `.` or `..` component), looking only at `rest`'s own
    components: up to the first that cannot be looked at (realpath takes nothing below
    it for a link either), or the first link (then realpath does the rest)."""
    path = real_folder
    names = rest.split("/")
    for index, name in enumerate(names):
        path = (path if path.endswith("/") else path + "/") + name
        try:
            is_link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            return "/".join([path, *names[index + 1:]])
        if is_link:
            return os.path.realpath("/".join([path, *names[index + 1:]]))
    return path


def path_forms(path: object, cwd: str | None = None,
               real_cwd: str | None = None) -> tuple[str, str] | None:
    """(as written, real) absolute forms of `path`, relative ones taken against `cwd`;
    None when the path is unusable (see the module's docstring).

    `real_cwd`, when given, is `os.path.realpath(cwd)` worked out once: a clean relative
    path (no empty, `.` or `..` component) is then resolved from it, looking at its own
    components only (a caller asking about many words of one command).
    """
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    if not os.path.isabs(path):
        if not cwd or not os.path.isabs(cwd) or "\x00" in cwd:
            return None
        if (real_cwd is not None and os.sep == "/"
                and all(name not in ("", ".", "..") for name in path.split("/"))):
            return _lexical(cwd) + ("" if cwd == "/" else "/") + path, \
                _real_below(real_cwd, path)
        path = os.path.join(cwd, path)
    try:
        return _lexical(path), os.path.realpath(path)
    except (OSError, ValueError):
        return None


def is_inside(path: object, roots: Iterable[str | None], *, cwd: str | None = None) -> bool:
    """True when `path` is inside one of `roots` as written and really (module docstring).

    Args:
        path: the path to judge; a relative one is taken against `cwd`.
        roots: the workspace's folders; blank, relative or unusable ones are skipped.
        cwd: the folder relative paths start from (usually the session's working folder).
    """
    forms = path_forms(path, cwd)
    if forms is None:
        return False
    lexical_roots: list[str] = []
    real_roots: list[str] = []
    for root in roots:
        root_forms = path_forms(root) if root and os.path.isabs(root) else None
        if root_forms is not None:
            lexical_roots.append(root_forms[0])
            real_roots.append(root_forms[1])
    return inside_forms(*forms, lexical_roots, real_roots)
