"""Safety tests never skip quietly in CI.

A test that proves our code cannot allow what a person did not (the differential suite
against the real CLI, the hooks and the gateway end to end, injected input, the
notification buttons) is worth nothing when it silently skips: a missing tool on the CI
machine, a moved bundled CLI or a lost `rules check --batch` would look like green. In
CI (`CI=true`, which `.ci/run` sets), `tests/conftest.py` turns the skip of a test under
`SAFETY_TESTS` into a failure that names the skip's reason, unless the test is in
`SKIPS_BY_DESIGN` with the reason it may skip there too.
"""

from __future__ import annotations

import os

SAFETY_TESTS = (
    "tests/differential/",
    "tests/approval/",
    "tests/domain/",
    "tests/rules/",
    "tests/terminal/",
    "tests/gateway/",
    "tests/agents/",
    "tests/e2e/",
    "tests/desktop/",
    "tests/scripted_model/test_scripted_cli_e2e.py",
    "tests/ui/test_keys_on_xcb.py",
    "tests/ui/test_x11_input.py",
    "tests/ui/test_notifications.py",
    "tests/ui/test_notification_owner.py",
    "tests/diagnostics/test_notification_check.py",
    "tests/away/browser/",
)
"""Test files (or folders) whose tests guard who may allow a call."""

SKIPS_BY_DESIGN: dict[str, str] = {
    "tests/ui/test_injected_input.py":
        "runs only on Qt's xcb platform: test_keys_on_xcb.py runs it in a child pytest "
        "under a private Xvfb (and that parent is a safety test, so it cannot skip)",
    "tests/terminal/test_session_binding.py::"
    "test_a_transcript_that_is_not_the_clis_own_file_is_not_followed[foreign-owner]":
        "only root can give a file to another user; the other misplaced-file kinds run",
}
"""Node ids (or file paths) under `SAFETY_TESTS` that may skip in CI, with the reason."""


def in_ci() -> bool:
    """True on the CI machine (`CI=true`, as `.ci/run` and the usual CI services set)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def must_not_skip(nodeid: str) -> bool:
    """True when the test `nodeid` guards safety and has no reason to skip in CI."""
    path = nodeid.split("::", 1)[0]
    if nodeid in SKIPS_BY_DESIGN or path in SKIPS_BY_DESIGN:
        return False
    return any(path.startswith(prefix) for prefix in SAFETY_TESTS)


def ci_failure(reason: str) -> str:
    """The failure a safety test's skip becomes in CI."""
    return (f"a safety test may not skip in CI (CI=true): {reason}\n"
            "Install what it needs on the CI machine (see .ci/run) or fix the cause; a "
            "test that may skip there needs an entry in helpers/safety_skips.SKIPS_BY_DESIGN "
            "with its reason.")
