"""The path arguments of a Bash command: inside the session folder, not sensitive.

`PathCheck` is the part of `rules.bash_allow` that asks about a command whose
arguments name a sensitive file (`rules.sensitive`) or a path outside the session
folder and its added directories (symlinks resolved; `cd DIR` is followed). Every
argument is taken as a possible path: `git diff x` asks if `x` is a link to `/etc`.

The filesystem is looked at on every call (a link may appear at any time); what only
depends on the folder names is worked out once per folder list (`_plan`). The common
case, a clean relative argument below a session folder with no link on the way, costs
one probe per component (`_is_link`: what an lstat says, without building its stat
result where a cheaper call answers). Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Sequence

from qoder_desktop.domain.workspace import inside_forms
from qoder_desktop.rules import sensitive
from qoder_desktop.shell import commands as shell_commands
from qoder_desktop.shell.words import SimpleCommand

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_LSTAT = os.lstat
_IS_LINK = stat.S_ISLNK
_IS_DIR = stat.S_ISDIR
#: `os.open` flags that open a directory itself, never through a link, reading nothing
#: (Linux's O_PATH); 0 where there is no O_PATH (then lstat answers every probe).
_REAL_DIR = (os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY) if hasattr(os, "O_PATH") else 0
_OPEN = os.open
_CLOSE = os.close
_ACCESS = os.access
_EXISTS = os.F_OK
_ACCESS_NOFOLLOW = os.access in os.supports_follow_symlinks


def _real_dir(path: str) -> bool:
    """True when `path` is a directory and not a symbolic link (one open and close of
    the directory itself, no stat result); False when it is anything else, is missing
    or cannot be opened. Raises ValueError for a NUL, as lstat does."""
    if not _REAL_DIR:
        return False
    try:
        _CLOSE(_OPEN(path, _REAL_DIR))
    except OSError:
        return False
    return True


def _is_link(path: str, last: bool) -> bool:
    """`S_ISLNK(os.lstat(path).st_mode)`, and False where the lstat fails (a component
    that cannot be looked at is not a link, as for `realpath`).

    Cheaper probes answer first where they can: a folder on the way (`last` False)
    that opens as a real directory is no link; a last component that does not exist
    (`os.access` without following it: the lstat would fail on the same lookup) is not
    looked at again. Raises ValueError for a NUL, as lstat does.
    """
    if last:
        if _ACCESS_NOFOLLOW and not _ACCESS(path, _EXISTS, follow_symlinks=False):
            return False
    elif _real_dir(path):
        return False
    try:
        return _IS_LINK(_LSTAT(path).st_mode)
    except OSError:
        return False


def _roots(cwd: str, add_dirs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(lexical roots, real roots) of the session folder and its added directories."""
    lexical, real = [], []
    for folder in (cwd, *add_dirs):
        if folder:
            lexical.append(os.path.abspath(folder))
            real.append(os.path.realpath(folder))
    return lexical, real


def _no_dot_part(path: str) -> bool:
    """True when no component of `path` (`\\` also separates) starts with a dot: then
    `sensitive.sensitive_part(path + "/" + rest)` is `sensitive_part(rest)`."""
    slashed = path.replace("\\", "/")
    return not slashed.startswith(".") and "/." not in slashed


class _Plan:
    """What a folder list gives when none of its folders' components is a link.

    Attributes:
        components: every path to lstat (each folder's components, once each).
        cwd_index: where the session folder itself is in `components`.
        state: the `PathCheck` attributes for that case: the folders are their own
            real paths.
    """

    def __init__(self, folders: tuple[str, ...]) -> None:
        paths: dict[str, None] = {}
        for folder in folders:
            end = folder.find("/", 1)
            while end > 0:
                paths[folder[:end]] = None
                end = folder.find("/", end + 1)
            paths[folder] = None
        self.components = tuple(paths)
        cwd = folders[0]
        self.cwd_index = self.components.index(cwd)
        self.state = (folders, folders, cwd, (cwd, cwd + "/", cwd), _no_dot_part(cwd))

    def no_links(self) -> bool:
        """True when every component exists and none is a link, and the session folder
        is a folder: then `state` is what the full computation finds."""
        if _REAL_DIR:
            try:  # each one opens as a directory that is no link: what the lstats find
                if all(map(_real_dir, self.components)):
                    return True
            except ValueError:
                pass
        try:
            modes = [_LSTAT(path).st_mode for path in self.components]
        except (OSError, ValueError):
            return False
        return not any(map(_IS_LINK, modes)) and _IS_DIR(modes[self.cwd_index])


@functools.lru_cache(maxsize=64)
def _plan(cwd: str, add_dirs: tuple[str, ...]) -> _Plan | None:
    """The `_Plan` of these folders, or None unless every one is a normalized absolute
    path other than `/` (then `abspath` is the folder itself, and `realpath` is too when
    no component is a link and every lstat works: it walks the same components)."""
    folders = tuple(folder for folder in (cwd, *add_dirs) if folder)
    if not cwd or not all(folder.startswith("/") and not folder.startswith("//")
                          and folder != "/" and os.path.normpath(folder) == folder
                          for folder in folders):
        return None
    return _Plan(folders)


def _walk_links(real: str, rest: str) -> str | None:
    """`real` joined with the relative `rest`, one probe per component (`_is_link`), or None when a
    component is a symbolic link or not clean (empty, `.`, `..`, a NUL): then only
    `realpath` knows. A component that cannot be looked at is not a link, as for
    `realpath`."""
    names = rest.split("/")
    if "" in names or "." in names or ".." in names:
        return None
    path = real
    last = len(names) - 1
    try:
        for index, name in enumerate(names):
            path = (path if path.endswith("/") else path + "/") + name
            if _is_link(path, index == last):
                return None
    except ValueError:
        return None
    return path


class PathCheck:
    """Checks the path arguments of a line, following `cd`."""

    def __init__(self, cwd: str, add_dirs: Sequence[str]) -> None:
        self.lexical_roots: Sequence[str]
        self.real_roots: Sequence[str]
        self._base: tuple[str, str, str] | None
        plan = _plan(cwd, tuple(add_dirs))
        if plan is not None and plan.no_links():
            (self.lexical_roots, self.real_roots, self.cwd, self._base,
             self._plain_base) = plan.state
            return
        self.lexical_roots, self.real_roots = _roots(cwd, add_dirs)
        self.cwd = self.lexical_roots[0] if cwd else os.path.abspath(cwd)
        self._base = None
        self._plain_base = False
        if cwd:
            real = self.real_roots[0] if cwd == self.cwd else os.path.realpath(self.cwd)
            if os.path.isdir(real):  # resolved all the way: no loop, nothing missing
                prefix = self.cwd if self.cwd.endswith("/") else self.cwd + "/"
                self._base = (self.cwd, prefix, real)
                self._plain_base = _no_dot_part(self.cwd) and _no_dot_part(real)

    @staticmethod
    def _walk(real: str, rest: str, lexical: str) -> str:
        """`os.path.realpath(lexical)`, where `lexical` is a resolved folder `real` and
        then the relative `rest`: see `_walk_links`."""
        path = _walk_links(real, rest)
        return os.path.realpath(lexical) if path is None else path

    def _realpath(self, lexical: str) -> str:
        """`os.path.realpath(lexical)` for a normalized absolute path, sparing the walk
        over the session folder (resolved once per line) when nothing below it is a link.

        `realpath` resolves a path one component at a time, so below the session folder
        its walk goes on from the folder's real path; where a component is a symbolic
        link, or the path is not below the folder, the whole walk is done.
        """
        if self._base is not None:
            folder, prefix, real = self._base
            if lexical == folder:
                return real
            if lexical.startswith(prefix):
                return self._walk(real, lexical[len(prefix):], lexical)
        return os.path.realpath(lexical)

    def resolve(self, value: str) -> tuple[str, str] | str:
        """(lexical, real) absolute forms of an argument, or the reason it asks."""
        if value.startswith("~"):
            if value != "~" and not value.startswith("~/"):
                return f"path argument outside the session folder: {value}"
            value = os.path.expanduser("~") + value[1:]
        base = self._base
        if (base is not None and base[0] == self.cwd and not value.startswith("/")
                and all(name and name not in (".", "..") for name in value.split("/"))):
            # A clean relative path below the (unchanged) session folder: joining and
            # normalizing it is putting the two together.
            lexical = base[1] + value
            try:
                return lexical, self._walk(base[2], value, lexical)
            except (OSError, ValueError):
                return f"path argument the analyzer cannot resolve: {value}"
        lexical = os.path.normpath(os.path.join(self.cwd, value))
        try:
            return lexical, self._realpath(lexical)
        except (OSError, ValueError):
            return f"path argument the analyzer cannot resolve: {value}"

    def _plain_below(self, value: str) -> bool:
        """True when `value` is a clean relative path below the unchanged session folder,
        which has no component starting with a dot, and no component of `value` is a link.

        Then its real path is the folder's real path and `value` (inside the folder),
        and only `value`'s own components can make it sensitive.
        """
        base = self._base
        if not self._plain_base or base is None or base[0] != self.cwd:
            return False
        return _walk_links(base[2], value) is not None

    def argument(self, word: str) -> str | None:
        """Why this argument asks, or None."""
        value = word
        if word.startswith("-"):
            if "=" in word:
                value = word.split("=", 1)[1]
            else:
                cut = [i for i in (word.find("/"), word.find("~")) if i > 0]
                if not cut:
                    return None
                value = word[min(cut):]
        if not value or ("://" in value and _URL.match(value)) or "\x00" in value:
            return None
        if value[0] not in "/~" and self._plain_below(value):
            part = sensitive.sensitive_part(value)
            return None if part is None else f"sensitive file {part}"
        forms = self.resolve(value)
        if isinstance(forms, str):
            return forms
        lexical, real = forms
        if value.startswith("~"):
            reason = sensitive.sensitive_reason(value, self.cwd)
        else:  # the same two forms sensitive_reason would compute: reuse them
            reason = sensitive.resolved_reason(lexical, real)
        if reason is not None:
            return reason
        if not inside_forms(lexical, real, self.lexical_roots, self.real_roots):
            return f"path argument outside the session folder: {real}"
        return None

    def command(self, command: SimpleCommand) -> str | None:
        """Why this simple command's arguments ask, or None; follows `cd DIR`."""
        args = command.words[1:]
        for word in args:
            reason = self.argument(word)
            if reason is not None:
                return reason
        head = shell_commands.command_name(command.words[0])
        if head in shell_commands.FOLDER_CHANGERS:
            if head != "cd" or len(args) > 1 or (args and args[0].startswith("-")):
                return f"changes folder in a way the analyzer cannot follow: {command.text}"
            target = self.resolve(args[0] if args else "~")
            if isinstance(target, str):
                return target
            self.cwd = target[0]
        return None
