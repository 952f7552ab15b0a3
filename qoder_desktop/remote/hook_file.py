"""The standalone hook file put on a remote host: the local hook, in one stdlib file.

It is the very code of `terminal.hook_client`, `terminal.protocol` and
`domain.hook_events` (their source, embedded and run as modules), so the remote hook
speaks the same protocol and has the same fall-through as a local one. Only where it
looks differs: the socket and the token are in the file's own folder
(`layout.SOCKET_NAME`, `layout.TOKEN_NAME`), where the tunnel puts the socket and the
deploy wrote the token. When the socket is not there or refuses (the app is closed, the
tunnel is down), the hook prints nothing and exits 0 at once, and the CLI asks in its
terminal.

The file needs python3 ≥ 3.8 and nothing else. Its version (`hook_version`) is the app's
version and a digest of its text, so a changed hook shows as another version.
"""

from __future__ import annotations

import ast
import hashlib

from qoder_desktop import __version__
from qoder_desktop.domain.hook_events import HOOK_COMMAND
from qoder_desktop.remote.layout import HOOK_NAME, SOCKET_NAME, TOKEN_NAME, package_source

MIN_PYTHON = (3, 8)
"""The oldest python3 the hook (and the deploy script) runs on."""
_EMBEDDED = (("domain", "hook_events"), ("terminal", "protocol"),
             ("terminal", "transcript_watch"), ("terminal", "hook_client"))
"""The modules of `qoder_desktop` the hook is made of (folder, name), in import order."""
_HANDED = {"hook_client": ("from qoder_desktop.domain import hook_events\n",
                           "from qoder_desktop.terminal import protocol, transcript_watch\n")}
"""The imports of our own modules that the hook file hands a module instead."""

_TEMPLATE = '''\
#!/usr/bin/env python3
"""Qoder Desktop's PermissionRequest hook on this host (put here by `qoder-desktop remote add`).

Claude Code and qodercli run it before they show their own permission prompt. It asks
Qoder Desktop on the desk through the socket in this folder (the app's ssh tunnel), and
prints nothing when the desk cannot be reached, so the CLI asks in the terminal as usual.
Remove it with `qoder-desktop remote remove HOST` on the desk.
"""

import os
import sys
import types

HOOK_VERSION = {version!r}
FOLDER = os.path.dirname(os.path.abspath(__file__))
SOCKET_NAME = {socket_name!r}
TOKEN_NAME = {token_name!r}

{sources}

def _load(name, source, **names):
    module = types.ModuleType("qoder_desktop_remote_" + name)
    module.__dict__.update(names)
    module.__dict__["__file__"] = __file__
    sys.modules[module.__name__] = module
    exec(compile(source, "<qoder-desktop " + name + ">", "exec"), module.__dict__)
    return module


def main(argv):
    """Run the hook: ``{hook_name} {hook_command} --agent claude|qoder``."""
    try:
        hook_events = _load("hook_events", HOOK_EVENTS_SOURCE)
        protocol = _load("protocol", PROTOCOL_SOURCE)
        protocol.socket_path = lambda environ=None: _in_folder(SOCKET_NAME)
        protocol.token_path = lambda environ=None: _in_folder(TOKEN_NAME)
        watch = _load("transcript_watch", TRANSCRIPT_WATCH_SOURCE)
        client = _load("hook_client", HOOK_CLIENT_SOURCE, hook_events=hook_events,
                       protocol=protocol, transcript_watch=watch)
    except Exception as exc:  # a hook that fails must not block the CLI's own prompt
        sys.stderr.write("qoder-desktop hook: could not start (%s); the terminal asks\\n"
                         % (exc,))
        return 0
    words = list(argv)
    if words[:1] == [hook_events.HOOK_COMMAND[0]]:
        words = words[1:]
    return client.hook_main(words)


def _in_folder(name):
    import pathlib

    return pathlib.Path(FOLDER) / name


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''


def _module_source(folder: str, name: str) -> str:
    source = package_source(folder, f"{name}.py")
    for line in _HANDED.get(name, ()):
        if line not in source:
            raise RuntimeError(f"{name} no longer has {line.strip()!r} as the remote hook "
                               "expects; update remote.hook_file")
        source = source.replace(line, "")  # the hook hands it the module
    return source


def _literal(source: str) -> str:
    """`source` as a Python string literal: readable raw triple quotes when possible."""
    if "'''" not in source and not source.endswith("\\"):
        return "r'''" + source + "'''"
    return repr(source)


def hook_source() -> str:
    """The text of the standalone hook file (see the module docstring)."""
    sources = {name: _module_source(folder, name) for folder, name in _EMBEDDED}
    body = "\n".join(f"{name.upper()}_SOURCE = {_literal(text)}\n"
                     for name, text in sources.items())
    digest = hashlib.sha256("\0".join(sources.values()).encode("utf-8")).hexdigest()[:12]
    text = _TEMPLATE.format(version=f"{__version__}+{digest}", socket_name=SOCKET_NAME,
                            token_name=TOKEN_NAME, sources=body, hook_name=HOOK_NAME,
                            hook_command=" ".join(HOOK_COMMAND))
    for name, source in sources.items():
        ast.parse(source, filename=name, feature_version=MIN_PYTHON)
    ast.parse(text, feature_version=MIN_PYTHON)
    return text


def hook_version(source: str | None = None) -> str:
    """The version written in a hook file's text (of `hook_source` when None), or ""."""
    for line in (hook_source() if source is None else source).splitlines():
        if line.startswith("HOOK_VERSION = "):
            try:
                value = ast.literal_eval(line.removeprefix("HOOK_VERSION = "))
            except (ValueError, SyntaxError):
                return ""
            return value if isinstance(value, str) else ""
    return ""
