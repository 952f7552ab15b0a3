"""Injected X11 input (XTEST: `xdotool`) never approves; a keyboard's key does.

These need Qt's `xcb` platform on a real X server: `test_keys_on_xcb.py` runs them in a
child pytest under a private Xvfb. Under Xvfb every key `xdotool` sends comes from the
"Virtual core XTEST keyboard"; a key the server attributes to the "Xvfb keyboard" is made
through XTEST's device path (see `_device_key`): RECORD catches it, and on a display
without RECORD it stands in for a keyboard's key.
"""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from qoder_desktop.domain.models import DecisionKind
from qoder_desktop.ui import x11_input, xcb
from qoder_desktop.ui.dialogs import ApprovalDialog, PlanDialog, QuestionDialog
from qoder_desktop.ui.dialogs.input_origin import REFUSED_CLICK, REFUSED_KEY, InputOrigin
from qoder_desktop.ui.xcb import GET_INPUT_FOCUS, Connection

pytestmark = pytest.mark.skipif(os.environ.get("QT_QPA_PLATFORM") != "xcb",
                                reason="needs Qt's xcb platform (test_keys_on_xcb runs it)")
RETURN, CONTROL_L = 0xFF0D, 0xFFE3
SLAVE_KEYBOARD = 4  # (XInput2's device type)


def _xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, timeout=30)


def _point_at(button: QWidget) -> None:
    """Move the pointer onto `button` (from the corner: `--sync` waits for a move)."""
    centre = button.mapToGlobal(button.rect().center())
    _xdotool("mousemove", "0", "0", "mousemove", "--sync", str(centre.x()), str(centre.y()))


def _click(button: QWidget) -> None:
    """A click on `button` through XTEST (the pointer moved there first)."""
    _point_at(button)
    _xdotool("click", "1")


def _device_key(*keysyms: int) -> None:
    """Press `keysyms` together (and release them) on the X server's own keyboard device.

    XTEST's device path (an XI1 DeviceKeyPress for a given device) makes the server
    attribute the keys to that device, not to its XTEST keyboard: it is how this test
    gets a key "from" a keyboard under Xvfb (the check catches it through RECORD).
    """
    first, keyboard, codes = _xi1_first_event(), _keyboard_device(), _keycodes(*keysyms)
    _flood_after([*[(first + 1, code, keyboard) for code in codes],
                  *[(first + 2, code, keyboard) for code in reversed(codes)]],
                 (0, 0, 0), count=0)


def _keyboard_device() -> int:
    """The X server's own keyboard device (not an XTEST one)."""
    with _connection() as conn:
        xi = conn.query_extension(b"XInputExtension").major_opcode
        conn.call(xi, 47, struct.pack("=HH", 2, 2))  # XIQueryVersion
        devices = x11_input.parse_devices(conn.call(xi, 48, struct.pack("=H2x", 0)))
        return next(device for device, kind, name in devices
                    if kind == SLAVE_KEYBOARD and "XTEST" not in name)


def _keycodes(*keysyms: int) -> list[int]:
    """The keycodes of `keysyms` in the server's keyboard mapping."""
    with _connection() as conn:
        first = conn.setup.min_keycode
        count = conn.setup.max_keycode - first + 1
        mapping = conn.call(101, 0, struct.pack("=BB2x", first, count))  # GetKeyboardMapping
        per_keycode = mapping[1]
        syms = list(struct.unpack_from(f"={(len(mapping) - 32) // 4}I", mapping, 32))
        return [first + syms.index(sym) // per_keycode for sym in keysyms]


def _flood_after(first: list[tuple[int, int, int]], flood: tuple[int, int, int],
                 count: int = 300) -> None:
    """Send the FakeInput requests `first` (type, detail, device; a type below 64 is a
    core event), then `count` times `flood`, all in one flush."""
    with _connection() as conn:
        xtest = conn.query_extension(b"XTEST").major_opcode
        for event_type, detail, device in [*first, *[flood] * count]:
            conn.send(xtest, 2, struct.pack("=BB2xII8xhh7xB", event_type, detail, 0, 0,
                                            0, 0, device))  # FakeInput
        conn.flush()
        conn.call(GET_INPUT_FOCUS)


def _xi1_first_event() -> int:
    with _connection() as conn:
        return conn.query_extension(b"XInputExtension").first_event


@contextlib.contextmanager
def _connection() -> Iterator[Connection]:
    """A connection to $DISPLAY of the test's own."""
    conn = Connection.connect()
    try:
        yield conn
    finally:
        conn.disconnect()


@pytest.fixture
def approval(open_dialog, make_request):
    dialog, decisions = open_dialog(ApprovalDialog(make_request(
        "Bash", {"command": "rm -rf build"}, cwd="/work/proj")))
    return dialog, decisions


def _refused(qtbot, dialog, note: str) -> None:
    qtbot.waitUntil(lambda: dialog.input_note.isVisible(), timeout=5000)
    assert dialog.input_note.text() == note
    assert not dialog.is_finished()


def test_xdotool_ctrl_return_does_not_allow(approval, qtbot):
    dialog, decisions = approval
    _xdotool("key", "ctrl+Return")
    _refused(qtbot, dialog, REFUSED_KEY)
    dialog.input_note.hide()
    _xdotool("key", "ctrl+shift+Return")
    _refused(qtbot, dialog, REFUSED_KEY)
    assert decisions == []


def test_xdotool_clicks_on_allow_do_not_allow(approval, qtbot):
    dialog, decisions = approval
    _click(dialog.ui.allowOnceButton)
    _refused(qtbot, dialog, REFUSED_CLICK)
    dialog.input_note.hide()
    _click(dialog.ui.allowSessionButton)
    _refused(qtbot, dialog, REFUSED_CLICK)
    assert decisions == []


def test_xdotool_space_on_a_focused_allow_button_does_not_allow(approval, qtbot):
    dialog, decisions = approval
    dialog.ui.allowOnceButton.setFocus()
    _xdotool("key", "space")
    _refused(qtbot, dialog, REFUSED_KEY)
    assert decisions == []


def test_a_click_on_allow_followed_by_a_flood_of_clicks_is_still_refused(approval, qtbot):
    """Hundreds of injected events right after the click push nothing out of what the
    check keeps: it keeps events by time, not by count."""
    dialog, decisions = approval
    _point_at(dialog.ui.allowOnceButton)
    button_press, button_release = 4, 5
    _flood_after([(button_press, 1, 0), (button_release, 1, 0)], (button_press, 3, 0))
    _refused(qtbot, dialog, REFUSED_CLICK)
    _flood_after([], (button_release, 3, 0), count=1)
    assert decisions == []


def test_a_device_path_key_followed_by_a_flood_of_requests_is_still_refused(approval,
                                                                            qtbot):
    dialog, decisions = approval
    first = _xi1_first_event()
    press, release = first + 1, first + 2
    keyboard = _keyboard_device()
    control, enter = _keycodes(CONTROL_L, RETURN)
    _flood_after([(press, control, keyboard), (press, enter, keyboard),
                  (release, enter, keyboard), (release, control, keyboard)],
                 (release, enter, keyboard))
    # refused as injected, or, when the loaded server passes the flood on too late
    # (`x11_record.SYNC_TIMEOUT_S`), as unconfirmed: either way nothing is allowed
    qtbot.waitUntil(lambda: dialog.input_note.isVisible(), timeout=5000)
    assert (dialog.input_note.text() == REFUSED_KEY
            or dialog.input_note.text().startswith("Ignored this key press: could not confirm"))
    assert decisions == []


def test_events_sent_with_xsendevent_do_not_allow(approval, qtbot):
    """`xdotool … --window` sends the events to our window (XSendEvent): Qt acts on
    them, so they are refused too."""
    dialog, decisions = approval
    window = str(int(dialog.winId()))
    _point_at(dialog.ui.allowOnceButton)
    _xdotool("click", "--window", window, "1")
    _refused(qtbot, dialog, REFUSED_CLICK)
    dialog.input_note.hide()
    dialog.ui.allowOnceButton.setFocus()
    _xdotool("key", "--window", window, "space")
    _refused(qtbot, dialog, REFUSED_KEY)
    assert decisions == []


def test_injected_typing_never_reaches_the_dialog(approval, qtbot):
    """No program edits what the person then approves: injected keys and clicks are
    kept from the dialog's widgets (the input, the deny reason, the focus)."""
    dialog, decisions = approval
    before = dialog.json_editor.value()
    focused = QApplication.focusWidget()
    _xdotool("key", "ctrl+e")
    _refused(qtbot, dialog, REFUSED_KEY)
    _xdotool("type", "--delay", "0", "rm -rf ~")
    dialog.input_note.hide()
    _click(dialog.ui.denyReasonEdit)
    _refused(qtbot, dialog, REFUSED_CLICK)
    assert QApplication.focusWidget() is focused is dialog.ui.denyReasonEdit
    assert dialog.ui.denyReasonEdit.text() == ""
    assert dialog.json_editor.value() == before
    assert decisions == []


def test_injected_digits_do_not_pick_an_answer(open_dialog, make_request, qtbot):
    question = make_request("AskUserQuestion", {"questions": [{
        "question": "Which?", "header": "Pick", "multiSelect": False,
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}],
    }]})
    dialog, _ = open_dialog(QuestionDialog(question))
    _xdotool("key", "2")
    _refused(qtbot, dialog, REFUSED_KEY)
    assert not dialog.boxes[0].is_answered()


def test_xdotool_escape_still_denies(approval, qtbot):
    _dialog, decisions = approval
    _xdotool("key", "Escape")
    qtbot.waitUntil(lambda: bool(decisions), timeout=5000)
    assert [d.kind for d in decisions] == [DecisionKind.DENY]


def test_xtest_keys_attributed_to_the_keyboard_device_are_refused_too(approval, qtbot):
    """XTEST's device path gives the key the keyboard's `sourceid`; RECORD shows the
    FakeInput request that made it."""
    dialog, decisions = approval
    _device_key(CONTROL_L, RETURN)
    _refused(qtbot, dialog, REFUSED_KEY)
    assert decisions == []


def test_on_a_display_without_record_a_key_from_the_keyboard_device_allows(
        open_dialog, make_request, qtbot, monkeypatch):
    """Where the X server has no RECORD, `sourceid` alone decides: a key the server
    attributes to its keyboard (here made through XTEST's device path, the only way to
    get one under Xvfb) approves, while `xdotool`'s keys stay refused."""
    monkeypatch.setattr(x11_input, "_open_recorder", lambda _display: None)
    monkeypatch.setattr(InputOrigin, "_instance", None)
    dialog, decisions = open_dialog(ApprovalDialog(make_request(
        "Bash", {"command": "ls"}, cwd="/work/proj")))
    assert dialog.origin._watch is not None and dialog.origin._watch.recorder is None
    _xdotool("key", "ctrl+Return")
    _refused(qtbot, dialog, REFUSED_KEY)
    _device_key(CONTROL_L, RETURN)
    qtbot.waitUntil(lambda: bool(decisions), timeout=5000)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]


def test_question_submit_and_plan_approve_refuse_xdotool(open_dialog, make_request, qtbot):
    question = make_request("AskUserQuestion", {"questions": [{
        "question": "Which?", "header": "Pick", "multiSelect": False,
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}],
    }]})
    dialog, decisions = open_dialog(QuestionDialog(question))
    dialog.choose(1)
    _xdotool("key", "ctrl+Return")
    _refused(qtbot, dialog, REFUSED_KEY)
    _click(dialog.ui.submitButton)
    qtbot.waitUntil(lambda: dialog.input_note.text() == REFUSED_CLICK, timeout=5000)
    assert decisions == []
    dialog.close()

    plan, plan_decisions = open_dialog(PlanDialog(make_request(
        "ExitPlanMode", {"plan": "# Plan"})))
    _xdotool("key", "ctrl+Return")
    _refused(qtbot, plan, REFUSED_KEY)
    _click(plan.ui.approveButton)
    qtbot.waitUntil(lambda: plan.input_note.text() == REFUSED_CLICK, timeout=5000)
    assert plan_decisions == []


def test_qtest_keys_from_inside_the_process_still_allow(approval, qtbot):
    """QTest posts its keys inside this process (no X event): not another program's."""
    dialog, decisions = approval
    focused = QApplication.focusWidget() or dialog
    QTest.keyClick(focused, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]
    assert not dialog.input_note.isVisible()


def test_a_lost_check_connection_refuses_then_is_set_up_again(approval, qtbot):
    """Another client kills the check's X connection: a key made meanwhile is refused
    (fail closed, and the dialog says why); the check is set up again and refuses
    injected keys as before."""
    dialog, decisions = approval
    watch = dialog.origin._watch
    assert watch is not None
    conn = watch._conn  # (a resource of the check's connection, for KillClient to name)
    victim = conn.generate_id()
    conn.check(conn.send(55, 0, struct.pack("=III", victim, conn.root, 0),  # CreateGC
                         checked=True))
    with _connection() as killer:
        killer.check(killer.send(113, 0, struct.pack("=I", victim), checked=True))  # KillClient
    _device_key(CONTROL_L, RETURN)  # (before this process has seen the loss)
    qtbot.waitUntil(lambda: "could not confirm" in dialog.input_note.text(), timeout=5000)
    assert decisions == [] and not dialog.is_finished()
    qtbot.waitUntil(lambda: dialog.origin._watch not in (None, watch), timeout=5000)
    dialog.input_note.hide()
    _xdotool("key", "ctrl+Return")
    _refused(qtbot, dialog, REFUSED_KEY)
    assert decisions == []


def test_without_the_check_keys_still_approve_and_every_dialog_warns(
        open_dialog, make_request, qtbot, monkeypatch):
    """Where the check cannot be set up (here: the XCB library cannot be loaded),
    approving keys still work, and the dialog says plainly that injected input cannot be
    told apart on this display."""
    monkeypatch.setattr(xcb, "LIBRARY", "libxcb-absent.so.1")
    monkeypatch.setattr(xcb, "_loaded", None)
    monkeypatch.setattr(InputOrigin, "_instance", None)
    dialog, decisions = open_dialog(ApprovalDialog(make_request(
        "Bash", {"command": "ls"}, cwd="/work/proj")))
    assert dialog.origin.unchecked_reason
    assert dialog.input_note.isVisible()
    assert dialog.input_note.text().startswith("⚠ This X display cannot tell keys and clicks")
    _xdotool("key", "ctrl+Return")
    qtbot.waitUntil(lambda: bool(decisions), timeout=5000)
    assert [d.kind for d in decisions] == [DecisionKind.ALLOW_ONCE]


def _shown_active(qtbot, dialog) -> None:
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog, timeout=5000)


def test_injected_typing_is_kept_from_a_dialog_from_its_first_frame_on(make_request, qtbot):
    """The check starts in the loop turn after the dialog's first frame (its X requests
    and native filter no longer hold that frame up): from then on injected keys do not
    reach the dialog's widgets."""
    dialog = ApprovalDialog(make_request("Bash", {"command": "ls"}, cwd="/work/proj"))
    painted: list[bool] = []
    dialog.when_painted(lambda: painted.append(True))
    _shown_active(qtbot, dialog)
    qtbot.waitUntil(lambda: bool(painted) and dialog.origin.is_checking(), timeout=5000)
    _xdotool("type", "--delay", "0", "rm -rf ~")
    _refused(qtbot, dialog, REFUSED_KEY)
    assert dialog.ui.denyReasonEdit.text() == ""


def test_a_dialog_whose_first_frame_never_comes_has_its_input_checked_anyway(
        make_request, qtbot, monkeypatch):
    monkeypatch.setattr(ApprovalDialog, "when_painted", lambda _self, _then: None)
    dialog = ApprovalDialog(make_request("Bash", {"command": "ls"}, cwd="/work/proj"))
    _shown_active(qtbot, dialog)
    qtbot.waitUntil(dialog.origin.is_checking, timeout=5000)
    _xdotool("type", "--delay", "0", "rm -rf ~")
    _refused(qtbot, dialog, REFUSED_KEY)
    assert dialog.ui.denyReasonEdit.text() == ""


def test_keys_before_the_check_has_started_never_reach_the_dialog(open_dialog, make_request,
                                                                   qtbot, monkeypatch):
    """Between a dialog's show and the check's start (its first frame) no key can be
    judged, so none reaches the dialog's widgets, whatever device it came from; once the
    check runs, keys it can place (here Qt's own, from inside the process) arrive."""
    origin = InputOrigin.instance()  # (shared: the check of earlier dialogs stopped first)
    qtbot.waitUntil(lambda: not origin._running, timeout=5000)
    start = InputOrigin._start
    monkeypatch.setattr(InputOrigin, "_start", lambda _self: None)  # (not started yet)
    dialog, _ = open_dialog(
        ApprovalDialog(make_request("Bash", {"command": "ls"}, cwd="/work/proj")), arm=False)
    dialog.ui.denyReasonEdit.setFocus()
    window = dialog.windowHandle()
    for key in (Qt.Key.Key_R, Qt.Key.Key_M):  # (through the window, as the platform's are)
        QTest.keyClick(window, key)
    assert dialog.ui.denyReasonEdit.text() == ""
    assert not origin.is_checking() and not dialog.is_armed()
    start(origin)
    assert origin.is_checking()
    for key in (Qt.Key.Key_R, Qt.Key.Key_M):
        QTest.keyClick(window, key)
    assert dialog.ui.denyReasonEdit.text() == "rm"


def test_a_check_lost_while_it_stopped_is_set_up_again_for_the_next_dialog(
        open_dialog, make_request, qtbot, monkeypatch):
    """Stopping the check after the last dialog closed failed (its connection lost then):
    the next dialog sets it up again as it starts it, and the first injected key there is
    refused as injected, not as unconfirmed."""
    first, _ = open_dialog(ApprovalDialog(make_request("Bash", {"command": "ls"},
                                                       cwd="/work/proj")))
    watch = first.origin._watch
    assert watch is not None

    def lost() -> None:
        raise x11_input.X11InputUnavailable("the X connection was lost")

    monkeypatch.setattr(watch, "stop", lost)
    first.withdraw()
    qtbot.waitUntil(lambda: first.origin._watch is None, timeout=5000)
    second, decisions = open_dialog(ApprovalDialog(make_request("Bash", {"command": "ls"},
                                                                cwd="/work/proj")))
    _xdotool("key", "ctrl+Return")
    _refused(qtbot, second, REFUSED_KEY)
    assert decisions == []
