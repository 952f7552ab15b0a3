"""The one place that makes agent text safe for Qt's text-sniffing widgets.

`QToolTip`, item-view tooltips (`Qt.ToolTipRole`), `QLabel` and `QMessageBox` guess
whether a string is rich text with `Qt.mightBeRichText`. Rich text loads resources: a
tooltip holding `<img src=/some/file>` reads that file on hover, a FIFO path hangs the
GUI thread and `/dev/zero` aborts the process (research §3.1). Every tooltip, label,
message box and notification built from agent data goes through a function here:

* `tooltip` – a string safe to give `setToolTip`/`ToolTipRole`: hidden characters made
  visible; when Qt would sniff it as rich text, every character escaped and the whole
  wrapped in a paragraph that keeps line breaks, so Qt shows exactly the text and no tag
  ever reaches its HTML parser.
* `set_plain` / `plain_message_box` – labels and message boxes fixed to `PlainText`,
  hidden characters made visible.
* `notification_text` – the body of a desktop notification (freedesktop servers read a
  markup subset, `<img>` included, in bodies).
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui  # (`Qt` is taken when first used: after the first frame)
from PySide6.QtWidgets import QLabel

from qoder_desktop.text.visible import make_visible

if TYPE_CHECKING:  # (built when a first box is: after the main window's first frame)
    from collections.abc import Callable

    from PySide6.QtWidgets import QMessageBox

_RICH_OPEN = "<p style='white-space:pre-wrap'>"
_RICH_CLOSE = "</p>"


def might_be_rich(text: str) -> bool:
    """True when Qt's widgets would treat `text` as rich text (`Qt.mightBeRichText`)."""
    return bool(QtGui.Qt.mightBeRichText(text))


def tooltip(text: object) -> str:
    """`text` as a tooltip Qt shows literally: no tag is ever interpreted.

    Hidden characters (bidi overrides, zero-width, no-break spaces…) become markers.
    Text Qt would take for plain text is returned as it is; anything else is escaped
    (`<`, `>`, `&`) and wrapped in `<p style='white-space:pre-wrap'>`, which Qt renders
    as the original characters, line breaks kept.
    """
    shown = make_visible(str(text))
    if not might_be_rich(shown):
        return shown
    return _RICH_OPEN + _escape(shown) + _RICH_CLOSE


def set_plain(label: QLabel, text: object) -> None:
    """Show `text` in `label` as plain text (never sniffed as rich text), hidden
    characters (bidi overrides, zero-width, no-break spaces…) as markers; None shows
    nothing."""
    label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    label.setText(make_visible("" if text is None else str(text)))


def value_label(name: str) -> QLabel:
    """A word-wrapped, selectable plain-text label named `name` (a settings page's value)."""
    label = QLabel()
    label.setObjectName(name)
    label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def plain_message_box(box: QMessageBox, text: object) -> None:
    """Set a message box's text as plain text (its default, AutoText, sniffs HTML),
    hidden characters as markers."""
    box.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    box.setText(make_visible(str(text)))


def notification_text(text: object, *, platform: str = sys.platform) -> str:
    """`text` for a desktop notification's body (the title is never read as markup).

    On Linux, Qt hands the body to the freedesktop notification server unchanged, and
    servers with the `body-markup` capability interpret `<b>`, `<a href>` and `<img src>`
    in it; escaping `<`, `>` and `&` makes them show as written. Other platforms show
    notifications as plain text and get the text unchanged. Hidden characters become
    markers everywhere.
    """
    shown = make_visible(str(text))
    if platform.startswith("linux"):
        return _escape(shown)
    return shown


def _escape(text: str) -> str:
    """`<`, `>` and `&` as HTML entities (`html.escape` without quotes)."""
    return _html_escape()(text, quote=False)


@functools.cache
def _html_escape() -> Callable[..., str]:
    """`html.escape`, imported when a first text needs it (with its entity table `html`
    cost ~2 ms before the main window's first frame) and kept: an ``import`` run at each
    call goes through PySide6's import hook (~4 µs a call)."""
    import html

    return html.escape
