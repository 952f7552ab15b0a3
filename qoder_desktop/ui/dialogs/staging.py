"""A decision dialog built ahead of need: in parts, laid out while hidden, and told
when its first frame is on screen.

This is the spare staging side of a decision dialog (`ui/dialogs/spares.py` builds
spares while the loop is idle), apart from its safety life cycle (arming, input origin,
the answer) in `ui/dialogs/base.py`:

- a constructor may leave parts of the widgets for later (`build_later`), built one per
  loop turn (`build_step`) or all at once when a request takes the dialog half-built
  (`finish_building`);
- `lay_out()` does what the first `show()` would (polish, native window, layout, on X11
  the backing store) while the dialog is hidden; a spare readies its backing store
  apart (`ready_store`), when no other dialog is on screen;
- `when_painted` calls back in the loop turn after the first paint on screen (or as the
  dialog closes unpainted): the request's ledger row and the next spare wait for it.
  The timing is `ui/scheduling.py`'s `FirstPaint`, fed by the dialog's own paint event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QPoint, Slot
from PySide6.QtGui import QGuiApplication, QPainter, QPaintEvent, QPixmap, QRegion
from PySide6.QtWidgets import QDialog, QWidget

from qoder_desktop.ui.scheduling import FirstPaint


class StagedDialog(QDialog):
    """A dialog whose widgets may be built in parts and laid out before it is shown,
    and that says when its first frame has been painted."""

    STORE_AHEAD = False
    """Whether `lay_out()` / `ready_store()` ready the X11 backing store (it then holds
    width × height × 4 bytes of shared memory while the spare waits)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._laid_out = False
        self._store_ready = False
        self._unbuilt: list[Callable[[], None]] = []
        """Parts a staged spare builds later (`build_step`), in order."""
        self._first_paint = FirstPaint(self)
        """What runs in the loop turn after the first paint (or as it closes unpainted)."""
        self.finished.connect(self._closed)

    def build_later(self, parts: Sequence[Callable[[], None]]) -> None:
        """Leave `parts` of the widgets to `build_step()` / `finish_building()`."""
        self._unbuilt.extend(parts)

    def build_step(self) -> bool:
        """Build the next part a staged constructor left for later; True while more
        parts remain (see `ui/dialogs/spares.py`)."""
        if self._unbuilt:
            self._unbuilt[0]()
            del self._unbuilt[0]  # (a part that failed is tried again by `load`)
        if self._unbuilt:
            return True
        self.built()
        return False

    def built(self) -> None:
        """Every part is built (subclasses put what must not move at show in place)."""

    def finish_building(self) -> None:
        """Build every part left for later, in order."""
        while self.build_step():
            pass

    def lay_out(self) -> None:
        """What the first `show()` does to the widgets, minus the showing: style polish
        of every widget, the native window, and every child laid out at the dialog's
        size (their pending move and resize events delivered, as rendering a hidden
        widget does), and on X11 the backing store the first paint draws into (see
        `STORE_AHEAD`). A spare does this while the loop is idle, one part per loop
        turn (`lay_out_parts`), and the backing store apart (`ready_store`)."""
        for part in self.lay_out_parts():
            part()
        self.ready_store()

    def lay_out_parts(self) -> list[Callable[[], object]]:
        """`lay_out()` in parts, each short enough for one loop turn, in order: style
        polish, the native window, the layout at the dialog's size (the backing store
        is `ready_store`). Each part is harmless to repeat, and a dialog shown after
        only some of them does the rest in `show()` as any dialog does."""
        return [self.ensurePolished, self.winId, self._lay_out_children,
                self._finish_lay_out]

    def _lay_out_children(self) -> None:
        layout = self.layout()
        if layout is not None:
            layout.activate()
        self.render(QPixmap(1, 1), QPoint(), QRegion(0, 0, 1, 1))

    def _finish_lay_out(self) -> None:
        self._laid_out = True

    def wants_store(self) -> bool:
        """True while `ready_store()` has work left: a dialog that readies its X11
        backing store ahead (`STORE_AHEAD`), laid out, store not made yet."""
        return (self.STORE_AHEAD and self._laid_out and not self._store_ready
                and QGuiApplication.platformName() == "xcb")

    def ready_store(self) -> None:
        """On X11, make the window's backing store at the dialog's size and touch it once
        (a plain fill, never flushed to the screen), so the first paint after the expose
        does not fault in a new shared-memory image (~1.5 ms). The first expose repaints
        the whole window before anything reaches the screen. Done once; does nothing
        elsewhere or for a dialog without `STORE_AHEAD`."""
        store = self.backingStore()
        if not self.wants_store() or store is None:
            return
        self._store_ready = True
        store.resize(self.size())
        area = QRegion(self.rect())
        store.beginPaint(area)
        try:
            painter = QPainter(store.paintDevice())
            painter.fillRect(self.rect(), self.palette().window())
            painter.end()
        finally:
            store.endPaint()

    def is_laid_out(self) -> bool:
        """True once `lay_out()` has run: the widgets have their sizes."""
        return self._laid_out

    def when_painted(self, then: Callable[[], object]) -> None:
        """Call `then` once, in the loop turn after this dialog's first paint (or as it
        closes unpainted); a dialog that has painted calls it in the next loop turn. A
        call that raises goes to `sys.excepthook` (the error reporter); the others run."""
        self._first_paint.when_painted(then)

    def paintEvent(self, event: QPaintEvent) -> None:
        """At the first paint on screen, the `when_painted` calls are queued for the next
        loop turn (a writer thread woken now would share the CPU with the rest of the
        frame)."""
        super().paintEvent(event)
        if self.isVisible():  # (not a render of a hidden spare; later paints do nothing)
            self._first_paint.painted()

    @Slot(int)
    def _closed(self, _code: int) -> None:
        self._first_paint.run_now()
