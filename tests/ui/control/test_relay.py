"""A worker thread's answer reaches the GUI thread in a later loop turn: a result, or the
exception that ended the work."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pytestqt.qtbot import QtBot

from qoder_desktop.ui.control.relay import Relay, deliver


def test_an_answer_from_a_worker_arrives_on_the_gui_thread(qtbot: QtBot) -> None:
    relay = Relay()
    seen: list[tuple[Any, bool]] = []
    relay.arrived.connect(lambda handler, value: handler(value))

    def on_gui(value: Any) -> None:
        seen.append((value, threading.current_thread() is threading.main_thread()))

    def fails() -> int:
        raise OSError("the ledger is gone")

    with ThreadPoolExecutor(1) as pool:
        deliver(relay, pool.submit(lambda: 42), on_gui)
        deliver(relay, pool.submit(fails), on_gui)
        qtbot.waitUntil(lambda: len(seen) == 2, timeout=5000)
    (first, first_on_gui), (second, second_on_gui) = seen
    assert first == 42 and first_on_gui
    assert isinstance(second, OSError) and str(second) == "the ledger is gone" and second_on_gui
