"""The self-check's probe runs in a forked child: its answer comes back, and a child that
raises, aborts (as Qt does without a display) or hangs is reported in words while the
app itself carries on. And: is there a display at all."""

from __future__ import annotations

import os
import threading

import pytest

from qoder_desktop.diagnostics.isolated import has_display, run_isolated


@pytest.mark.parametrize(("environ", "platform", "expected"), [
    ({}, "linux", False),
    ({"DISPLAY": ":0"}, "linux", True),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
    ({"QT_QPA_PLATFORM": "offscreen"}, "linux", True),
    ({"DISPLAY": "  "}, "linux", False),
    ({}, "win32", True),
    ({}, "darwin", True),
])
def test_a_display_is_somewhere_qt_can_draw(environ, platform, expected):
    assert has_display(environ, platform) is expected


def test_the_childs_answer_comes_back() -> None:
    parent = os.getpid()
    result, problem = run_isolated(lambda: {"pid": os.getpid(), "tray": True}, timeout=10)
    assert problem is None
    assert result["tray"] is True and result["pid"] != parent


def _raise() -> None:
    raise ValueError("no tray here")


def test_a_child_that_raises_is_reported() -> None:
    assert run_isolated(_raise, timeout=10) == (None, "exit code 3: ValueError: no tray here")


def _abort_without_display() -> None:
    os.write(1, b"some chatter\n")
    os.write(2, b"qt.qpa.xcb: could not connect to display :99\n")
    os.abort()


def test_a_child_that_aborts_is_reported_with_the_reason_that_matters() -> None:
    result, problem = run_isolated(_abort_without_display, timeout=10)
    assert result is None
    assert problem == "killed by signal 6: qt.qpa.xcb: could not connect to display :99"


def test_a_child_that_hangs_is_ended() -> None:
    result, problem = run_isolated(lambda: threading.Event().wait(), timeout=0.5)
    assert (result, problem) == (None, "no answer within 0.5 s")
