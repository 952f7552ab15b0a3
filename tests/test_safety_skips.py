"""In CI a safety test that skips fails, saying why it skipped; elsewhere it skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.safety_skips import SAFETY_TESTS, SKIPS_BY_DESIGN, in_ci, must_not_skip

ROOT = Path(__file__).resolve().parents[1]
# Skips when dbus-daemon is missing: a notification button must never allow too early.
SAFETY_FILE = "tests/ui/test_notification_owner.py"


def _pytest_without_dbus(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["PATH"] = str(tmp_path)  # no dbus-daemon on it: the file's tests skip
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-rs", SAFETY_FILE], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)


def test_a_safety_test_that_skips_in_ci_fails_with_its_reason(tmp_path: Path) -> None:
    result = _pytest_without_dbus(tmp_path, "true")
    assert result.returncode != 0, result.stdout
    assert "a safety test may not skip in CI (CI=true)" in result.stdout
    assert "dbus-daemon" in result.stdout  # the reason it would have skipped


def test_outside_ci_the_same_test_skips(tmp_path: Path) -> None:
    result = _pytest_without_dbus(tmp_path, None)
    assert result.returncode == 0, result.stdout
    assert "skipped" in result.stdout and "may not skip" not in result.stdout


@pytest.mark.parametrize(("value", "expected"), [
    ("true", True), ("1", True), ("TRUE", True), ("", False), ("false", False)])
def test_ci_is_told_by_the_ci_variable(monkeypatch: pytest.MonkeyPatch, value: str,
                                       expected: bool) -> None:
    monkeypatch.setenv("CI", value)
    assert in_ci() is expected


def test_which_tests_may_not_skip() -> None:
    assert must_not_skip("tests/differential/test_differential_cli.py::test_x")
    assert must_not_skip("tests/ui/test_notification_owner.py::test_y")
    assert not must_not_skip("tests/ui/test_injected_input.py::test_z")  # by design
    assert not must_not_skip("tests/ui/test_spare_first_frame.py::test_w")  # no safety


def test_every_listed_test_file_exists() -> None:
    for entry in (*SAFETY_TESTS, *SKIPS_BY_DESIGN):
        assert (ROOT / entry.split("::", 1)[0]).exists(), entry
    assert all(len(reason) > 30 for reason in SKIPS_BY_DESIGN.values())
