"""A closed decision dialog is freed as soon as nothing refers to it, without waiting for
Python's garbage collector.

A dialog whose helpers referred back to it (the chord keeper's focus check, the arming
gate's ready check) formed a reference cycle: every answered dialog (~170 Python
wrappers) waited for a collection, and the collector then freed a few dozen at once on
the event loop (collections of 10-70 ms while a person worked through a long queue).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from qoder_desktop.domain.models import Decision
from qoder_desktop.ui.dialogs import BaseDecisionDialog, dialog_for

REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "bash": ("Bash", {"command": "rm -rf build", "description": "Clean"}),
    "question": ("AskUserQuestion", {"questions": [{
        "question": "Which layout?", "header": "Layout", "multiSelect": False,
        "options": [{"label": "Sidebar", "description": "A list"},
                    {"label": "Tabs", "description": "One tab each"}]}]}),
    "plan": ("ExitPlanMode", {"plan": "# Plan\n\n1. **Fix** `a.py`"}),
}


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Automatic garbage collection off: only reference counts free anything."""
    was_on = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _closed_dialog(qtbot: QtBot, make_request: Any, which: str,
                   close: Callable[[BaseDecisionDialog], object]) -> weakref.ref[Any]:
    """Show a dialog for `which`, close it with `close` and delete it as the dialog
    queue does (`deleteLater`: its buttons' connections refer to it); a weak reference
    to it."""
    tool, tool_input = REQUESTS[which]
    dialog = dialog_for(make_request(tool, tool_input, cwd="/work/p"))
    painted: list[bool] = []
    dialog.when_painted(lambda: painted.append(True))
    dialog.show()
    qtbot.waitUntil(lambda: bool(painted), timeout=3000)
    close(dialog)
    assert not dialog.isVisible()
    dialog.deleteLater()
    return weakref.ref(dialog)


@pytest.mark.parametrize("which", sorted(REQUESTS))
@pytest.mark.parametrize("close", ["withdrawn", "answered"])
def test_a_closed_dialog_is_freed_without_the_garbage_collector(
        qtbot: QtBot, make_request: Any, collector_off: None, which: str, close: str) -> None:
    def answer(dialog: BaseDecisionDialog) -> None:
        assert dialog.emit_decision(Decision.deny("not now"))

    ref = _closed_dialog(qtbot, make_request, which,
                         BaseDecisionDialog.withdraw if close == "withdrawn" else answer)
    qtbot.waitUntil(lambda: ref() is None, timeout=3000)
