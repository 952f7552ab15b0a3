"""The tray: badge and tooltip, notification text, the request menu."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from qoder_desktop.domain.models import ApprovalRequest, Backend, utc_now
from qoder_desktop.ui import icons
from qoder_desktop.ui.tray import (
    BODY_LIMIT,
    TITLE_LIMIT,
    Tray,
    balloon_text,
    format_notification,
    status_notifier_host_registered,
)


def make_request(tool: str = "Bash", session: str = "webshop", minutes_ago: int = 0,
                 **tool_input: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s-" + session, session_name=session,
                           backend=Backend.CLAUDE, tool_name=tool,
                           tool_input=tool_input or {"command": "npm test"},
                           received_at=utc_now() - timedelta(minutes=minutes_ago))


def question(text: str = "Which database should I use?") -> ApprovalRequest:
    return make_request("AskUserQuestion", questions=[
        {"question": text, "header": "DB", "multiSelect": False,
         "options": [{"label": "Allow SQLite", "description": "small"},
                     {"label": "Postgres", "description": "big"}]}])


@pytest.fixture
def tray(qtbot) -> Iterator[Tray]:  # type: ignore[no-untyped-def]
    item = Tray()
    yield item
    item.dispose()


def test_tooltip_and_badge_follow_the_pending_count(tray: Tray) -> None:
    empty = tray.icon_image()
    assert tray.tooltip() == "Qoder Desktop — 0 pending"
    tray.set_pending([make_request(), make_request(), question()])
    assert tray.tooltip() == "Qoder Desktop — 3 pending"
    three = tray.icon_image()
    assert three != empty
    tray.set_pending([make_request()])
    one = tray.icon_image()
    assert one not in (empty, three)
    tray.set_pending([])
    assert tray.icon_image() == empty
    assert tray.tooltip() == "Qoder Desktop — 0 pending"


def test_badge_is_drawn_on_the_shipped_icon() -> None:
    plain = icons.icon_pixmap(icons.TRAY_ICON, 64)
    badged = icons.draw_badge(plain, 7)
    assert badged.toImage() != plain.toImage()

    def red_pixels(image) -> int:  # type: ignore[no-untyped-def]
        return sum(1 for x in range(0, 64, 2) for y in range(0, 64, 2)
                   if (c := image.pixelColor(x, y)).red() > 180 and c.green() < 100)

    assert red_pixels(plain.toImage()) == 0
    assert red_pixels(badged.toImage()) > 100
    assert icons.draw_badge(plain, 0).toImage() == plain.toImage()
    assert icons.badge_text(150) == "99+"


def test_a_question_is_announced_as_a_question_never_with_allow() -> None:
    note = format_notification(question())
    assert note.text == "Question from webshop: Which database should I use?"
    assert "Allow" not in note.title
    assert "allow" not in note.text.lower().replace("allow sqlite", "")
    assert "approval" not in note.text.lower()


def test_a_tool_request_names_the_tool_session_and_command() -> None:
    note = format_notification(make_request(command="rm -rf build\n&& make <all>"))
    assert note.title == "Bash in webshop wants approval"
    assert note.body == "rm -rf build && make <all>"
    edit = format_notification(make_request("Edit", file_path="/src/app.py",
                                            old_string="a", new_string="b"))
    assert edit.title == "Edit in webshop wants approval"
    assert edit.body == "/src/app.py"


def test_notification_text_is_bounded_and_single_line() -> None:
    note = format_notification(make_request(session="s" * 300, command="x\n" * 2000))
    assert len(note.title) <= TITLE_LIMIT
    assert len(note.body) <= BODY_LIMIT
    assert "\n" not in note.title + note.body
    long_question = format_notification(question("why? " * 500))
    assert len(long_question.body) <= BODY_LIMIT


def test_notify_remembers_the_request_and_a_message_click_opens_it(tray: Tray,
                                                                   qtbot) -> None:  # type: ignore[no-untyped-def]
    first, second = make_request(), question()
    tray.notify(first)
    note = tray.notify(second)
    assert note.title.startswith("Question")
    assert tray.last_notified() == second.request_id
    with qtbot.waitSignal(tray.open_request) as blocker:
        tray._icon.messageClicked.emit()
    assert blocker.args == [second.request_id]


def test_clicking_the_icon_activates_the_window(tray: Tray, qtbot) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(tray.activate_window):
        tray._icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    with qtbot.assertNotEmitted(tray.activate_window):
        tray._icon.activated.emit(QSystemTrayIcon.ActivationReason.Context)


def test_menu_lists_pending_requests_and_each_opens_it(tray: Tray, qtbot) -> None:  # type: ignore[no-untyped-def]
    old, new = make_request(minutes_ago=5, command="make & deploy"), question()
    tray.set_pending([old, new])  # the broker's order, which the tray keeps
    actions = [a for a in tray.menu().actions() if a.data()]
    assert [a.data() for a in actions] == [old.request_id, new.request_id]
    assert "make && deploy" in actions[0].text()  # '&' is not a mnemonic
    with qtbot.waitSignal(tray.open_request) as blocker:
        actions[1].trigger()
    assert blocker.args == [new.request_id]
    texts = [a.text() for a in tray.menu().actions()]
    assert texts[0] == "2 pending"
    assert "Hide window" in texts and "Quit" in texts


def test_menu_show_hide_and_quit(tray: Tray, qtbot) -> None:  # type: ignore[no-untyped-def]
    tray.set_window_visible(False)
    by_text = {a.text(): a for a in tray.menu().actions()}
    with qtbot.waitSignal(tray.toggle_window):
        by_text["Show window"].trigger()
    with qtbot.waitSignal(tray.quit_requested):
        by_text["Quit"].trigger()


def test_menu_is_bounded(tray: Tray) -> None:
    tray.set_pending([make_request(minutes_ago=n) for n in range(25)])
    requests = [a for a in tray.menu().actions() if a.data()]
    assert len(requests) == 10
    assert any(a.text() == "… and 15 more" for a in tray.menu().actions())


def test_availability_comes_from_qt() -> None:
    assert Tray.is_available() == QSystemTrayIcon.isSystemTrayAvailable()


def test_runtime_resources_load_from_the_package() -> None:
    root = Path(__file__).resolve().parents[2]  # (the icons against their artwork:
    # tests/ui/test_icon_files.py)
    with pytest.raises(FileNotFoundError):
        icons.icon_pixmap(icons.TRAY_ICON, 17)  # a size the package does not ship
    assert "QLabel#pendingBadge" in icons.stylesheet()
    assert not icons.app_icon().isNull()
    assert icons.app_icon().availableSizes()
    # rendered once: the application and every window share the same pixmaps
    assert icons.app_icon().cacheKey() == icons.app_icon().cacheKey()
    desktop = (root / "resources" / "qoder-desktop.desktop").read_text()
    assert "Icon=io.qoder.Desktop" in desktop and "Exec=qoder-desktop" in desktop


def test_balloon_text_is_escaped_only_for_a_notification_server() -> None:
    command = "sleep 2 && echo finished > slow.txt\u202e"
    assert balloon_text(command, markup=False) == (
        "sleep 2 && echo finished > slow.txt⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩")
    assert balloon_text(command, markup=True) == (
        "sleep 2 &amp;&amp; echo finished &gt; slow.txt⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩")


def test_a_long_command_is_cut_on_the_right_keeping_its_start() -> None:
    command = "echo finished > " + "/very/long/path" * 30
    note = format_notification(make_request(command=command))
    assert note.body.startswith("echo finished > /very/long/path")
    assert note.body.endswith("…") and len(note.body) == BODY_LIMIT


def test_without_a_status_notifier_watcher_qt_draws_its_own_balloon(tmp_path: Path) -> None:
    from helpers.notification_server import dbus_daemon, private_bus
    from PySide6.QtDBus import QDBusConnection

    if dbus_daemon() is None:
        pytest.skip("needs dbus-daemon")
    with private_bus(tmp_path / "bus") as address:
        connection = QDBusConnection.connectToBus(address, "tray-test")
        try:
            assert connection.isConnected()
            assert status_notifier_host_registered(connection) is False
        finally:
            QDBusConnection.disconnectFromBus("tray-test")


def test_a_tray_shown_without_balloons_loads_no_qtdbus() -> None:
    """QtDBus's bindings (~0.4 MB) load with the first balloon's markup check, not before."""
    import subprocess
    import sys

    code = """if True:
        import sys
        from PySide6.QtWidgets import QApplication
        from qoder_desktop.ui.tray import Tray
        app = QApplication([])
        tray = Tray()
        tray.show()
        tray.set_pending([])
        tray.dispose()
        print("PySide6.QtDBus" in sys.modules)
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
