"""``qoder-desktop --self-check``: what a user runs when something does not work.

Each check prints one line: ``OK``, ``WARN`` or ``FAIL``, what it found, and for a WARN
or FAIL what to do about it (after ``->``). The exit code is 0 when nothing FAILs, 1
otherwise. Checks: the app itself, the keyring backend (and whether it is trusted),
``keyrings.alt``, the system tray, the desktop's notification service (a D-Bus probe),
the agent CLIs (found where the SDKs look for them, each run with ``--version`` offline
and with throw-away config folders), whether Away mode can serve the phone page, and
whether the config/data/state/cache folders are writable.

Core module: Qt is only touched through `qoder_desktop.ui.probe`, imported lazily and run
in a child process on Linux (Qt aborts the process when it cannot open the display).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import qoder_desktop
from qoder_desktop import __version__
from qoder_desktop.config.paths import HOME_ENV, AppPaths
from qoder_desktop.config.secrets import SecretName, SecretStore
from qoder_desktop.diagnostics.cli_check import (
    CLI_TIMEOUT,
    CLIS,
    CliLocation,
    CliSpec,
    bundle_root,
    check_cli,
    locate_cli,
)
from qoder_desktop.diagnostics.isolated import has_display, run_isolated
from qoder_desktop.diagnostics.report import CheckResult, Status

if TYPE_CHECKING:
    from qoder_desktop.diagnostics.notification_check import NotificationProbe

TRAY_TIMEOUT = 20.0
"""Seconds the Qt tray probe gets."""

_NO_TRAY_ADVICE = ("the window shows the pending count instead; for a tray icon enable your "
                   "panel's tray (GNOME: the AppIndicator extension)")
_QT_LIBS_ADVICE = ("install Qt's system libraries (Debian/Ubuntu: sudo apt install libegl1 "
                   "libxkbcommon-x11-0 libxcb-cursor0) and check DISPLAY/WAYLAND_DISPLAY")


def check_app() -> CheckResult:
    """The app's version, Python, the platform, and where it runs from.

    Where: the bundle's folder when frozen, else the `qoder_desktop` package's folder
    (the checkout's for an editable install), not this module's.
    """
    bundle = bundle_root()
    where = (f"bundle {Path(sys.executable).parent}" if bundle is not None
             else f"package {Path(qoder_desktop.__file__).parent}")
    return CheckResult("app", Status.OK,
                       f"qoder-desktop {__version__}, Python {platform.python_version()}, "
                       f"{platform.system()} {platform.machine()}, {where}")


def check_keyring(store: SecretStore) -> CheckResult:
    """Which keyring backend is in use and whether Qoder Desktop trusts it."""
    status = store.check_backend()
    if status.usable:
        return CheckResult("keyring", Status.OK, f"{status.backend} (trusted OS keyring)")
    env_vars = " / ".join(name.env_var for name in SecretName)
    return CheckResult(
        "keyring", Status.WARN, f"{status.backend} (not trusted): {status.message}",
        f"secrets are read from {env_vars} instead; to keep them in a keyring, install and "
        "unlock GNOME Keyring or KWallet (Debian/Ubuntu: sudo apt install gnome-keyring)")


def check_keyrings_alt(
        find_spec: Callable[[str], object | None] = importlib.util.find_spec) -> CheckResult:
    """WARN when ``keyrings.alt`` (plain-file keyrings) is importable."""
    try:
        spec = find_spec("keyrings.alt")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return CheckResult("keyrings.alt", Status.OK, "not installed")
    where = getattr(spec, "origin", None) or "installed"
    return CheckResult("keyrings.alt", Status.WARN,
                       f"importable ({where}); its backends keep secrets in files",
                       "uninstall it (pip uninstall keyrings.alt); Qoder Desktop never uses it")


TrayProbe = Callable[[], tuple[bool | None, str]]
"""Returns ``(available, detail)``; the entry point gives `qoder_desktop.ui.probe.describe_tray`."""


def check_tray(environ: Mapping[str, str] | None = None, probe: TrayProbe | None = None,
               timeout: float = TRAY_TIMEOUT) -> CheckResult:
    """Whether Qt starts on this display and finds a system tray."""
    env = os.environ if environ is None else environ
    if probe is None:
        return CheckResult("tray", Status.WARN, "the Qt tray probe was not run",
                           "run `qoder-desktop --self-check`, which brings the probe")
    if not has_display(env):
        return CheckResult("tray", Status.WARN, "no display: tray not checked",
                           "run the self-check inside your desktop session (DISPLAY or "
                           "WAYLAND_DISPLAY set)")
    result, problem = run_isolated(probe, timeout)
    if problem is not None:
        advice = _QT_LIBS_ADVICE
        if "could not connect to display" in problem:
            advice = ("no display server answers at DISPLAY/WAYLAND_DISPLAY: run the "
                      "self-check inside your desktop session, or fix those variables")
        return CheckResult("tray", Status.FAIL, f"Qt could not start ({problem})", advice)
    available, detail = result
    if available is None:
        return CheckResult("tray", Status.WARN, f"no display: tray not checked ({detail})",
                           "run the self-check inside your desktop session")
    if not available:
        return CheckResult("tray", Status.WARN, f"no system tray ({detail})", _NO_TRAY_ADVICE)
    return CheckResult("tray", Status.OK, f"system tray available ({detail})")


def check_dir(label: str, folder: Path) -> CheckResult:
    """The folder exists (created 0700 if missing) and a file can be created and deleted."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, name = tempfile.mkstemp(prefix=".self-check-", dir=folder)
        try:
            os.write(fd, b"ok")
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return CheckResult(label, Status.FAIL, f"{folder} is not writable ({reason})",
                           f"fix its owner/permissions (chmod u+rwx '{folder}') or set "
                           f"{HOME_ENV} to a writable folder")
    return CheckResult(label, Status.OK, f"{folder} is writable")


def iter_checks(*, store: SecretStore | None = None, paths: AppPaths | None = None,
                environ: Mapping[str, str] | None = None, tray_probe: TrayProbe | None = None,
                notification_probe: NotificationProbe | None = None,
                clis: Sequence[CliSpec] = CLIS,
                locations: Mapping[str, CliLocation | str] | None = None,
                find_spec: Callable[[str], object | None] = importlib.util.find_spec,
                cli_timeout: float = CLI_TIMEOUT,
                away_check: Callable[[], CheckResult] | None = None
                ) -> Iterator[CheckResult]:
    """Run the checks one by one, yielding each result as soon as it is known.

    Args:
        store: the secret store whose keyring is checked (the default store when None).
        paths: the app's folders (`AppPaths.default` when None).
        environ: the environment (``os.environ`` when None).
        tray_probe: the Qt tray probe (`qoder_desktop.ui.probe.describe_tray`); None
            skips the tray check with a warning.
        notification_probe: looks for the desktop's notification service
            (`qoder_desktop.notifications.probe.probe_service`); None skips it with a warning.
        clis: the CLIs to check.
        locations: known locations by CLI label, instead of looking (tests).
        find_spec: how ``keyrings.alt`` is looked up (tests).
        cli_timeout: seconds each CLI gets to print its version.
        away_check: whether Away mode can serve the phone page
            (`qoder_desktop.away.readiness.check_away`, a layer above this one); None
            leaves the line out.
    """
    env = os.environ if environ is None else environ
    folders = paths or AppPaths.default(env)
    yield check_app()
    yield check_keyring(store or SecretStore())
    yield check_keyrings_alt(find_spec)
    yield check_tray(env, tray_probe)
    from qoder_desktop.diagnostics.notification_check import check_notifications

    yield check_notifications(notification_probe)
    for spec in clis:
        found = (locations or {}).get(spec.label) or locate_cli(spec, env)
        yield check_cli(spec, found, environ=env, timeout=cli_timeout)
    if away_check is not None:
        yield away_check()
    for label, folder in (("config dir", folders.config_dir), ("data dir", folders.data_dir),
                          ("state dir", folders.state_dir), ("cache dir", folders.cache_dir)):
        yield check_dir(label, folder)


def summary(results: Sequence[CheckResult]) -> str:
    """The closing line: counts, and what the exit code means."""
    counts = {status: sum(r.status is status for r in results) for status in Status}
    text = f"{counts[Status.OK]} OK, {counts[Status.WARN]} WARN, {counts[Status.FAIL]} FAIL"
    if counts[Status.FAIL]:
        return f"{text}: fix the FAIL lines above (exit code 1)."
    if counts[Status.WARN]:
        return f"{text}: Qoder Desktop can run; the WARN lines say what works less well."
    return f"{text}: everything looks fine."


def run_self_check(out: TextIO | None = None, **options: Any) -> int:
    """Print the self-check report; 0 when nothing FAILs, 1 otherwise.

    Args:
        out: where to print (``sys.stdout`` when None).
        **options: passed to `iter_checks` (tests).
    """
    stream = out or sys.stdout
    print(f"Qoder Desktop self-check (qoder-desktop {__version__})", file=stream, flush=True)
    results: list[CheckResult] = []
    for result in iter_checks(**options):
        results.append(result)
        print(result.line(), file=stream, flush=True)
    print(summary(results), file=stream, flush=True)
    return 1 if any(r.status is Status.FAIL for r in results) else 0
