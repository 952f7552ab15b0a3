"""The self-check: one OK/WARN/FAIL line per check, advice for problems, exit codes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.memory_keyring import MemoryKeyring

import qoder_desktop
from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.secrets import SecretStore
from qoder_desktop.diagnostics import self_check
from qoder_desktop.diagnostics.cli_check import (
    CLAUDE_CLI,
    QODER_CLI,
    CliLocation,
    CliSpec,
    check_cli,
    cli_env,
    locate_cli,
    run_version,
)
from qoder_desktop.diagnostics.report import CheckResult, Status
from qoder_desktop.diagnostics.self_check import (
    check_dir,
    check_keyring,
    check_keyrings_alt,
    check_tray,
    run_self_check,
)
from qoder_desktop.notifications.probe import ProbeResult

posix_only = pytest.mark.skipif(os.name != "posix", reason="fake CLIs are shell scripts")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland")
DISPLAY_ENV = {"QT_QPA_PLATFORM": "offscreen"}


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _trusted_store() -> SecretStore:
    return SecretStore(extra_allowed=(MemoryKeyring,))


def _report(**options: object) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = run_self_check(out=out, **options)
    return code, out.getvalue().splitlines()


def _line(lines: list[str], name: str) -> str:
    return next(line for line in lines if line[6:19].strip() == name)


@pytest.fixture
def good_clis(tmp_path: Path) -> dict[str, CliLocation | str]:
    """Both CLIs as fake executables that answer --version."""
    return {
        CLAUDE_CLI.label: CliLocation(_script(tmp_path / "claude", "echo '9.9.9 (Claude Code)'"),
                                      "bundled", "0.2.189", "9.9.9"),
        QODER_CLI.label: CliLocation(_script(tmp_path / "qodercli", "echo 1.1.76"),
                                     "bundled", "1.0.16", "1.1.76"),
    }


@posix_only
def test_everything_fine_gives_ok_lines_and_exit_code_0(good_clis: dict, app_paths: AppPaths
                                                        ) -> None:
    code, lines = _report(store=_trusted_store(), paths=app_paths, environ=DISPLAY_ENV,
                          tray_probe=lambda: (True, "Qt test"), locations=good_clis,
                          notification_probe=lambda: ProbeResult(True, True, "test 1.0"),
                          find_spec=lambda name: None)
    assert code == 0
    assert lines[0].startswith("Qoder Desktop self-check")
    checks = lines[1:-1]
    assert [line.split()[0] for line in checks] == ["OK"] * len(checks)
    assert {line.split()[1] for line in checks} >= {"app", "keyring", "keyrings.alt", "tray",
                                                    "claude", "qoder", "config", "data",
                                                    "state", "cache",
                                                    "notification"}
    assert "9.9.9 (Claude Code), bundled at" in _line(lines, "claude CLI")
    assert "claude-agent-sdk 0.2.189" in _line(lines, "claude CLI")
    assert "qoder-agent-sdk 1.0.16" in _line(lines, "qoder CLI")
    assert not any("->" in line for line in checks)
    assert lines[-1].endswith("everything looks fine.")


@posix_only
def test_missing_cli_fails_with_advice_and_exit_code_1(good_clis: dict, tmp_path: Path,
                                                       app_paths: AppPaths) -> None:
    good_clis[CLAUDE_CLI.label] = CliLocation(tmp_path / "gone" / "claude", "bundled", "0.2.189")
    code, lines = _report(store=_trusted_store(), paths=app_paths, environ=DISPLAY_ENV,
                          tray_probe=lambda: (True, "Qt test"), locations=good_clis)
    assert code == 1
    line = _line(lines, "claude CLI")
    assert line.startswith("FAIL")
    assert "does not exist" in line
    assert "-> reinstall the SDK: pip install --force-reinstall claude-agent-sdk" in line
    assert "1 FAIL" in lines[-1] and "exit code 1" in lines[-1]


def test_untrusted_keyring_warns_but_does_not_fail() -> None:
    result = check_keyring(SecretStore())
    assert result.status is Status.WARN
    assert "MemoryKeyring (not trusted)" in result.found
    assert "ANTHROPIC_API_KEY" in result.advice and "gnome-keyring" in result.advice
    assert check_keyring(_trusted_store()).status is Status.OK


def test_keyrings_alt_importable_warns() -> None:
    class Spec:
        origin = "/site-packages/keyrings/alt/__init__.py"

    warned = check_keyrings_alt(lambda name: Spec())
    assert warned.status is Status.WARN
    assert Spec.origin in warned.found and "pip uninstall keyrings.alt" in warned.advice
    assert check_keyrings_alt(lambda name: None).status is Status.OK

    def broken(name: str) -> None:
        raise ModuleNotFoundError(name)

    assert check_keyrings_alt(broken).status is Status.OK


def test_writable_dir_is_ok_and_left_clean(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "data"
    result = check_dir("data dir", folder)
    assert result.status is Status.OK
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_dir_that_cannot_be_created_fails_with_advice(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    result = check_dir("config dir", blocker / "config")
    assert result.status is Status.FAIL
    assert "is not writable" in result.found
    assert "QODER_DESKTOP_HOME" in result.advice and "chmod u+rwx" in result.advice
    assert result.line().startswith("FAIL  config dir")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_dir_fails(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert check_dir("state dir", folder).status is Status.FAIL
    finally:
        folder.chmod(0o700)


@posix_only
def test_unwritable_data_dir_makes_the_exit_code_1(good_clis: dict, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("", encoding="utf-8")
    paths = AppPaths(config_dir=tmp_path / "c", data_dir=blocker / "data",
                     state_dir=tmp_path / "s", cache_dir=tmp_path / "k")
    code, lines = _report(store=_trusted_store(), paths=paths, environ=DISPLAY_ENV,
                          tray_probe=lambda: (True, "Qt test"), locations=good_clis)
    assert code == 1
    assert _line(lines, "data dir").startswith("FAIL")


@posix_only
def test_cli_that_is_not_executable_fails(tmp_path: Path) -> None:
    cli = _script(tmp_path / "claude", "echo 1")
    cli.chmod(0o644)
    result = check_cli(CLAUDE_CLI, CliLocation(cli, "bundled", "0.2.189"))
    assert result.status is Status.FAIL
    assert "not executable" in result.found and "chmod +x" in result.advice


@posix_only
def test_cli_that_errors_or_hangs_fails(tmp_path: Path) -> None:
    broken = _script(tmp_path / "broken", "echo 'segfault-ish' >&2; exit 7")
    result = check_cli(CLAUDE_CLI, CliLocation(broken))
    assert result.status is Status.FAIL
    assert "exited with code 7: segfault-ish" in result.found
    hanging = _script(tmp_path / "hangs", "exec sleep 30")
    result = check_cli(CLAUDE_CLI, CliLocation(hanging), timeout=0.5)
    assert result.status is Status.FAIL
    assert "did not answer `--version` within 0.5 s" in result.found


@posix_only
def test_cli_runs_offline_with_throwaway_config(tmp_path: Path, isolated_home: Path) -> None:
    cli = _script(tmp_path / "claude",
                  'echo "$DISABLE_AUTOUPDATER $CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC '
                  '$HTTPS_PROXY $CLAUDE_CONFIG_DIR $QODER_CONFIG_DIR $HOME"')
    scratch = tmp_path / "scratch"
    ok, answer = run_version(cli, cli_env({"PATH": os.environ["PATH"]}, scratch), scratch)
    assert ok
    autoupdater, traffic, proxy, claude_dir, qoder_dir, home = answer.split()
    assert (autoupdater, traffic) == ("1", "1")
    assert proxy.startswith("http://127.0.0.1:")
    for folder in (claude_dir, qoder_dir, home):
        assert Path(folder).is_relative_to(scratch)
    assert not (isolated_home / ".claude").exists()


@posix_only
def test_qodercli_path_override_that_is_missing_says_unset_it(tmp_path: Path) -> None:
    env = {"QODERCLI_PATH": str(tmp_path / "nope"), "PATH": ""}
    location = locate_cli(QODER_CLI, env)
    assert isinstance(location, CliLocation) and location.source == "QODERCLI_PATH"
    result = check_cli(QODER_CLI, location, environ=env)
    assert result.status is Status.FAIL
    assert "from QODERCLI_PATH" in result.found
    assert result.advice.startswith("unset QODERCLI_PATH")


@posix_only
def test_cli_found_only_on_path_warns(tmp_path: Path) -> None:
    spec = CliSpec("fake CLI", "json", "json-sdk", ("fakecli-xyz",))
    _script(tmp_path / "fakecli-xyz", "echo 3.0")
    env = {"PATH": str(tmp_path)}
    location = locate_cli(spec, env)
    assert isinstance(location, CliLocation) and location.source == "PATH"
    result = check_cli(spec, location, environ=env)
    assert result.status is Status.WARN
    assert "3.0, from PATH at" in result.found and "the SDK ships none" in result.found
    missing = check_cli(spec, locate_cli(spec, {"PATH": str(tmp_path / "empty")}))
    assert missing.status is Status.FAIL and "not found" in missing.found


def test_sdk_that_cannot_be_imported_fails() -> None:
    spec = CliSpec("ghost CLI", "no_such_sdk_for_the_self_check", "ghost-sdk", ("ghost",))
    result = check_cli(spec, locate_cli(spec, {}))
    assert result.status is Status.FAIL
    assert "ghost-sdk cannot be imported" in result.found
    assert "pip install --force-reinstall ghost-sdk" in result.advice


@pytest.mark.parametrize("spec", [CLAUDE_CLI, QODER_CLI], ids=lambda s: s.label)
def test_the_real_bundled_clis_answer(spec: CliSpec) -> None:
    location = locate_cli(spec, {"PATH": os.environ.get("PATH", "")})
    assert isinstance(location, CliLocation)
    if location.path is None or location.source != "bundled":
        pytest.skip(f"{spec.distribution} ships no CLI for this platform")
    assert location.path.parent.name == "_bundled"
    assert location.path.parent.parent.name == spec.package
    result = check_cli(spec, location)
    assert result.status is Status.OK, result.line()
    assert location.expected_version and location.expected_version in result.found


@linux_only
def test_no_display_warns_and_does_not_touch_qt() -> None:
    def probe() -> tuple[bool | None, str]:
        raise AssertionError("Qt must not be asked without a display")

    result = check_tray({}, probe)
    assert result.status is Status.WARN
    assert result.found == "no display: tray not checked"
    assert "desktop session" in result.advice


def test_without_the_qt_probe_the_tray_is_not_checked() -> None:
    result = check_tray(DISPLAY_ENV)
    assert result.status is Status.WARN
    assert result.found == "the Qt tray probe was not run"


def test_tray_results() -> None:
    assert check_tray(DISPLAY_ENV, lambda: (True, "Qt 6, platform xcb")).status is Status.OK
    missing = check_tray(DISPLAY_ENV, lambda: (False, "Qt 6, platform xcb"))
    assert missing.status is Status.WARN
    assert "no system tray (Qt 6, platform xcb)" in missing.found
    assert "pending count" in missing.advice


@linux_only
def test_qt_that_aborts_is_a_fail_not_a_crash() -> None:
    def aborting_probe() -> tuple[bool | None, str]:
        os.write(2, b"qt.qpa.xcb: could not connect to display :77\n")
        os.abort()

    result = check_tray(DISPLAY_ENV, aborting_probe)
    assert result.status is Status.FAIL
    assert "killed by signal" in result.found and "could not connect to display :77" in result.found
    assert "DISPLAY" in result.advice

    def raising_probe() -> tuple[bool | None, str]:
        raise ImportError("libEGL.so.1: cannot open shared object file")

    result = check_tray(DISPLAY_ENV, raising_probe)
    assert result.status is Status.FAIL and "libEGL.so.1" in result.found
    assert "libegl1" in result.advice


@linux_only
def test_real_qt_probe_offscreen_has_no_tray(monkeypatch: pytest.MonkeyPatch) -> None:
    from qoder_desktop.ui.probe import describe_tray

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    result = check_tray(probe=describe_tray)
    assert result.status is Status.WARN, result.line()
    assert "platform offscreen" in result.found


def test_result_line_format() -> None:
    assert CheckResult("tray", Status.OK, "fine").line() == "OK    tray         fine"
    assert (CheckResult("data dir", Status.FAIL, "bad", "fix it").line()
            == "FAIL  data dir     bad -> fix it")


def test_self_check_module_does_not_load_qt() -> None:
    code = ("import sys, qoder_desktop.diagnostics.self_check as s\n"
            "print(any(m.split('.')[0] == 'PySide6' for m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
    assert self_check.__name__ == "qoder_desktop.diagnostics.self_check"


def test_command_line_self_check_exit_code_and_lines(isolated_home: Path) -> None:
    env = dict(os.environ, PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
               QT_QPA_PLATFORM="offscreen")
    result = subprocess.run([sys.executable, "-m", "qoder_desktop", "--self-check"],
                            capture_output=True, text=True, env=env, timeout=120,
                            cwd=Path(qoder_desktop.__file__).parent.parent)
    lines = result.stdout.splitlines()
    assert result.returncode == (1 if any(ln.startswith("FAIL") for ln in lines) else 0)
    assert _line(lines, "keyring").startswith("WARN")
    assert "null.Keyring" in _line(lines, "keyring")
    for name in ("config dir", "data dir", "state dir", "cache dir"):
        assert _line(lines, name).startswith("OK"), result.stdout
    assert _line(lines, "away mode").startswith("OK"), result.stdout
    assert "index.html" in _line(lines, "away mode")
    assert all(ln.split()[0] in {"OK", "WARN", "FAIL"} for ln in lines[1:-1])


@posix_only
def test_cli_version_other_than_the_sdk_expects_warns(tmp_path: Path) -> None:
    cli = _script(tmp_path / "claude", "echo '1.0.0 (Claude Code)'")
    result = check_cli(CLAUDE_CLI, CliLocation(cli, "bundled", "0.2.189", "2.1.332"))
    assert result.status is Status.WARN
    assert "the SDK expects 2.1.332" in result.found and "may not work" in result.advice
