"""What Help › About shows: this app's version, the SDKs and the CLIs they ship, the
data folders and the log.

Nothing here runs a CLI, imports an SDK or touches the network (About opens at once):
the versions come from the installed packages' metadata and the version file each SDK
ships next to its bundled CLI.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import shutil
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from qoder_desktop import __version__
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.diagnostics.cli_check import CLIS, CliSpec

NOT_INSTALLED = "not installed"
_CLI_VERSION = re.compile(r"""__cli_version__\s*=\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class AboutInfo:
    """The facts About shows.

    Attributes:
        version: Qoder Desktop's version.
        components: (name, version) of Python, each SDK and each CLI.
        folders: (what it holds, path) of each data folder.
        log_file: the app's log.
    """

    version: str
    components: tuple[tuple[str, str], ...]
    folders: tuple[tuple[str, Path], ...]
    log_file: Path


def distribution_version(name: str) -> str:
    """An installed distribution's version, or "not installed"."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def cli_version(spec: CliSpec) -> str:
    """The CLI's version as its SDK records it, and where the SDK would find the CLI."""
    if spec.override_env and os.environ.get(spec.override_env):
        return f"set by {spec.override_env}"
    found = importlib.util.find_spec(spec.package)
    if found is None or found.origin is None:
        return "not found"
    folder = Path(found.origin).parent
    version = None
    try:
        match = _CLI_VERSION.search((folder / "_cli_version.py").read_text(encoding="utf-8"))
        version = match.group(1) if match else None
    except OSError:
        pass
    if any((folder / "_bundled" / name).is_file() for name in spec.commands):
        return f"{version or 'version not recorded'} (bundled)"
    if any(shutil.which(name) for name in spec.commands):
        return "on PATH"
    return "not found"


def about_info(paths: AppPaths) -> AboutInfo:
    """Collect `AboutInfo` for the app whose folders are `paths`."""
    components = [("Python", platform.python_version())]
    for spec in CLIS:
        components.append((spec.distribution, distribution_version(spec.distribution)))
        components.append((spec.label, cli_version(spec)))
    folders = (("Settings", paths.config_dir), ("Sessions, rules and decisions", paths.data_dir),
               ("Window state and log", paths.state_dir), ("Cache", paths.cache_dir))
    return AboutInfo(__version__, tuple(components), folders, paths.log_file)
