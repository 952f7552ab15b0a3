"""Non-blocking pickers and small text helpers shared by the forms.

Pickers open with `open()` (never the static `QFileDialog.get…` helpers, which run a
nested event loop) and hand their answer to a callback. Views call them through this
module so tests can replace them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QFileDialog, QWidget


def pick_folder(parent: QWidget, title: str, on_chosen: Callable[[str], None],
                start: str = "") -> QFileDialog:
    """Let the person choose a folder; `on_chosen(path)` is called only if they do.

    Returns:
        The open (window-modal) file dialog.
    """
    dialog = QFileDialog(parent, title, start)
    dialog.setObjectName("folderPicker")
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    return _open_picker(dialog, on_chosen)


def pick_file(parent: QWidget, title: str, on_chosen: Callable[[str], None],
              start: str = "") -> QFileDialog:
    """Let the person choose an existing file; `on_chosen(path)` is called only if they do.

    Returns:
        The open (window-modal) file dialog.
    """
    dialog = QFileDialog(parent, title, start)
    dialog.setObjectName("filePicker")
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    return _open_picker(dialog, on_chosen)


def _open_picker(dialog: QFileDialog, on_chosen: Callable[[str], None]) -> QFileDialog:
    """Open `dialog` window-modally; hand a chosen path to `on_chosen` and delete the
    dialog once it closes either way."""

    def chosen(path: str) -> None:
        dialog.deleteLater()
        if path:
            on_chosen(path)

    dialog.fileSelected.connect(chosen)
    dialog.rejected.connect(dialog.deleteLater)
    dialog.open()
    return dialog


def split_list(text: str) -> list[str]:
    """Split `Read, Bash(git commit -m "a, b")` on commas and newlines outside parentheses.

    Empty items are dropped and each item is stripped.
    """
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if char in ",\n" and depth == 0:
            items.append("".join(current))
            current = []
            continue
        current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def join_list(items: list[str] | tuple[str, ...] | None) -> str:
    """The inverse of `split_list` for display in a line edit."""
    return ", ".join(items or ())
