"""Walks a window's widget tree through Qt's accessibility interface (what a screen
reader reads): which focusable controls lack a name or a description, and which names
repeat within one view."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QTabBar, QTabWidget, QWidget


@dataclass(frozen=True)
class Control:
    """One control a person can reach with the keyboard, as assistive technology sees it."""

    widget: QWidget
    role: QAccessible.Role
    name: str
    description: str

    def __str__(self) -> str:
        return (f"{type(self.widget).__name__} {self.widget.objectName() or '(no object name)'}"
                f" role={self.role.name} name={self.name!r}")


def reachable(widget: QWidget, top: QWidget) -> bool:
    """True for a control Tab can reach in `top`'s current view (shown, takes focus)."""
    if not widget.isVisibleTo(top) or widget.focusProxy() is not None:
        return False
    return bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)


def controls(top: QWidget) -> list[Control]:
    """Every reachable control of `top`'s current view, named as a screen reader does."""
    found = []
    for widget in top.findChildren(QWidget):
        if not reachable(widget, top):
            continue
        iface = QAccessible.queryAccessibleInterface(widget)
        assert iface is not None and iface.isValid(), widget.objectName()
        if isinstance(widget, QTabBar):  # the focus is on a tab: read what it says
            tab = iface.child(widget.currentIndex())
            assert tab is not None and tab.role() == QAccessible.Role.PageTab
            iface = tab
        found.append(Control(widget, iface.role(), iface.text(QAccessible.Text.Name).strip(),
                             iface.text(QAccessible.Text.Description).strip()))
    return found


def problems(top: QWidget) -> list[str]:
    """Unnamed or undescribed controls and repeated names in each view of `top` (every
    tab of each tab widget counts as a view)."""
    found: list[str] = []
    tabs = [t for t in top.findChildren(QTabWidget) if t.isVisibleTo(top)] or [None]
    for tab_widget in tabs:
        pages = range(tab_widget.count()) if tab_widget is not None else [None]
        for page in pages:
            if tab_widget is not None and page is not None:
                tab_widget.setCurrentIndex(page)
            view = controls(top)
            where = (f"tab {tab_widget.tabText(page)!r}: " if tab_widget is not None
                     and page is not None else "")
            for control in view:
                if not control.name:
                    found.append(f"{where}no name: {control}")
                elif not control.description:
                    found.append(f"{where}no description: {control}")
            counts = Counter(c.name for c in view if c.name)
            for name, count in counts.items():
                if count > 1:
                    found.append(f"{where}{count} controls named {name!r}")
    return sorted(set(found))
