"""A decision dialog built ahead of need: parts left for later are built in order, one a
step or all at once; it is laid out while hidden, at the size it will show; and whoever
waits for its first frame hears once it is painted on screen, or as it closes unpainted."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QVBoxLayout
from pytestqt.qtbot import QtBot

from qoder_desktop.ui.dialogs.staging import StagedDialog


class Dialog(StagedDialog):
    """A staged dialog with a label now and two buttons later."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []
        self.box = QVBoxLayout(self)
        self.box.addWidget(QLabel("Bash wants to run", self))
        self.build_later([lambda: self._part("Allow once"), lambda: self._part("Deny")])

    def _part(self, label: str) -> None:
        self.box.addWidget(QPushButton(label, self))
        self.log.append(label)

    def built(self) -> None:
        self.log.append("built")


def staged(qtbot: QtBot) -> Dialog:
    dialog = Dialog()
    qtbot.addWidget(dialog)
    return dialog


def test_parts_are_built_in_order_one_a_step(qtbot: QtBot) -> None:
    dialog = staged(qtbot)
    assert dialog.log == []
    assert dialog.build_step() is True
    assert dialog.log == ["Allow once"]
    assert dialog.build_step() is False
    assert dialog.log == ["Allow once", "Deny", "built"]


def test_a_half_built_dialog_is_finished_at_once(qtbot: QtBot) -> None:
    dialog = staged(qtbot)
    dialog.build_step()
    dialog.finish_building()
    assert dialog.log == ["Allow once", "Deny", "built"]
    assert [b.text() for b in dialog.findChildren(QPushButton)] == ["Allow once", "Deny"]


def test_laid_out_while_hidden_at_the_size_it_shows(qtbot: QtBot) -> None:
    dialog = staged(qtbot)
    dialog.finish_building()
    dialog.resize(420, 200)
    assert not dialog.is_laid_out()
    dialog.lay_out()
    assert dialog.is_laid_out() and not dialog.isVisible()
    deny = dialog.findChildren(QPushButton)[1]
    assert deny.width() > 0 and deny.geometry().bottom() < 200
    placed = deny.geometry()
    dialog.show()
    qtbot.waitExposed(dialog)
    assert deny.geometry() == placed  # nothing moves at show


def test_first_paint_is_told_once_after_the_dialog_is_on_screen(qtbot: QtBot) -> None:
    dialog = staged(qtbot)
    dialog.finish_building()
    painted: list[str] = []
    dialog.when_painted(lambda: painted.append("first"))
    dialog.lay_out()  # a render of the hidden spare is no paint on screen
    for _ in range(3):  # the loop turns in which a (wrongly) noted paint would be told
        QApplication.processEvents()
    assert painted == []
    dialog.show()
    qtbot.waitUntil(lambda: painted == ["first"])
    dialog.update()
    dialog.when_painted(lambda: painted.append("later"))  # painted already: next turn
    qtbot.waitUntil(lambda: painted == ["first", "later"])


def test_a_dialog_closed_unpainted_still_tells_who_waits(qtbot: QtBot) -> None:
    dialog = staged(qtbot)
    painted: list[str] = []
    dialog.when_painted(lambda: painted.append("closed"))
    dialog.reject()
    assert painted == ["closed"]
