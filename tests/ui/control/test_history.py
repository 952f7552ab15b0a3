"""The history model over a real ledger: typing a filter runs few queries and shows the
last filter's rows, an answer to an older filter never shows, a failed read is said,
and scrolling fetches the next page. (The window on the whole wiring is
tests/ui/test_history_window.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from benchmarks.ledger_rows import fill_ledger
from qoder_desktop.domain.history import HistoryFilter, HistoryRow
from qoder_desktop.store.history import PAGE_SIZE, HistoryReader
from qoder_desktop.ui.control.history_model import HistoryModel

ROWS = PAGE_SIZE + 50


class CountingReader(HistoryReader):
    """The real reader, counting the page queries it was asked for."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.asked: list[HistoryFilter] = []

    def page(self, flt: HistoryFilter, before_seq: int | None = None,
             limit: int = PAGE_SIZE) -> Future[list[HistoryRow]]:
        self.asked.append(flt)
        return super().page(flt, before_seq, limit)


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[CountingReader]:
    """A reader over a generated ledger of `ROWS` requests."""
    opened = CountingReader(fill_ledger(tmp_path / "ledger.sqlite3", ROWS))
    yield opened
    opened.close()


def _rows(model: HistoryModel) -> list[HistoryRow]:
    rows = [model.row_at(index) for index in range(model.rowCount())]
    return [row for row in rows if row is not None]


def test_typing_a_filter_runs_at_most_two_queries_and_shows_the_last(
        reader: CountingReader, qtbot: QtBot) -> None:
    model = HistoryModel(reader)
    typed = [HistoryFilter(text="Bash"[:n]) for n in range(1, 5)] + [HistoryFilter(text="Bash")]
    with qtbot.waitSignal(model.first_page_shown, timeout=10_000):
        for flt in typed:  # five key presses in one loop turn
            model.set_filter(flt)
    assert reader.asked == [typed[0], typed[-1]]  # the first, then only the newest
    assert model.filter == typed[-1]
    rows = _rows(model)
    assert rows and all("bash" in " ".join((row.tool_name, row.session_name, row.title or "",
                                            row.asked, row.matched_rule or "")).lower()
                        for row in rows)


def test_an_answer_for_an_older_filter_never_shows(reader: CountingReader,
                                                   qtbot: QtBot) -> None:
    model = HistoryModel(reader)
    shown: list[HistoryFilter] = []
    model.first_page_shown.connect(lambda: shown.append(model.filter))
    nothing = HistoryFilter(text="no request says this")
    model.set_filter(HistoryFilter())
    model.set_filter(nothing)  # while the first runs
    qtbot.waitUntil(lambda: len(reader.asked) == 2 and shown == [nothing], timeout=10_000)
    assert model.rowCount() == 0


def test_scrolling_to_the_end_fetches_the_next_page_once(reader: CountingReader,
                                                         qtbot: QtBot) -> None:
    model = HistoryModel(reader)
    with qtbot.waitSignal(model.first_page_shown, timeout=10_000):
        model.set_filter(HistoryFilter())
    assert model.rowCount() == PAGE_SIZE and model.canFetchMore()
    newest_first = [row.seq for row in _rows(model)]
    assert newest_first == sorted(newest_first, reverse=True)
    with qtbot.waitSignal(model.rowsInserted, timeout=10_000):
        model.fetchMore()
        model.fetchMore()  # (a second scroll while the page is on its way asks nothing)
    assert len(reader.asked) == 2
    assert model.rowCount() == ROWS and not model.canFetchMore()
    assert len({row.request_id for row in _rows(model)}) == ROWS


def test_a_failed_read_is_said(reader: CountingReader, qtbot: QtBot) -> None:
    model = HistoryModel(reader)
    for stale in reader.path.parent.glob(reader.path.name + "-*"):
        stale.unlink()
    reader.path.write_bytes(b"not a ledger " * 1000)  # (no connection is open yet)
    with qtbot.waitSignal(model.failed, timeout=10_000) as failed:
        model.set_filter(HistoryFilter())
    [message] = failed.args
    assert message.startswith("Reading the history failed: ")
    assert model.rowCount() == 0


def test_a_cell_is_its_rows_text_and_its_tooltip_plain(reader: CountingReader,
                                                       qtbot: QtBot) -> None:
    from PySide6.QtCore import Qt

    from qoder_desktop.ui.windows.history_window import row_cells

    model = HistoryModel(reader)
    with qtbot.waitSignal(model.first_page_shown, timeout=10_000):
        model.set_filter(HistoryFilter())
    first = model.row_at(0)
    assert first is not None
    cells = row_cells(first)
    shown = [model.data(model.index(0, column)) for column in range(model.columnCount())]
    assert shown == list(cells)
    assert model.data(model.index(0, 0), Qt.ItemDataRole.UserRole) is first
