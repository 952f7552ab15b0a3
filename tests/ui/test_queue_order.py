"""The order a person sees waiting requests in is the broker's: the window's queue, its
"open the next request" (Ctrl+O) and the tray's menu show `ApprovalBroker.pending()` as
it is, and sort nothing themselves."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import asyncio
from datetime import timedelta

from helpers.loop import run, settle

from qoder_desktop.domain.models import ApprovalRequest, Backend, Decision, utc_now
from qoder_desktop.ui.event_loop import AppEventLoop
from qoder_desktop.ui.wiring import DesktopApp


def _bash(session: int, command: str, minutes_ago: int, at: object = None) -> ApprovalRequest:
    received = at if at is not None else utc_now() - timedelta(minutes=minutes_ago)
    return ApprovalRequest(session_id=f"s{session}", session_name=f"session {session}",
                           backend=Backend.CLAUDE, tool_name="Bash",
                           tool_input={"command": command}, cwd="/tmp",
                           received_at=received)  # type: ignore[arg-type]


def _tray_ids(desktop: DesktopApp) -> list[str]:
    return [a.data() for a in desktop.tray.menu().actions() if a.data()]


def test_the_window_queue_and_the_tray_menu_show_the_brokers_order(
        desktop: DesktopApp, loop: AppEventLoop) -> None:
    # Arrival order differs from the broker's order: an agent's request received earlier
    # arrives later, and two received at the same instant are ordered by arrival.
    same = utc_now() - timedelta(minutes=1)
    arriving = [_bash(0, "first to arrive", 0), _bash(1, "received earliest", 9),
                _bash(2, "tie, queued first", 0, at=same),
                _bash(0, "tie, queued second", 0, at=same)]

    async def scenario() -> tuple[list[str], list[str]]:
        tasks = []
        for count, request in enumerate(arriving, start=1):
            tasks.append(asyncio.ensure_future(desktop.broker.request(request)))
            await settle(lambda n=count: len(desktop.broker.pending()) == n)
        broker_order = [r.request_id for r in desktop.broker.pending()]
        await settle(lambda: desktop.window.ui.queueView.request_ids() == broker_order)
        await settle(lambda: _tray_ids(desktop) == broker_order)
        opened: list[str] = []
        desktop.window.open_request_requested.connect(opened.append)
        desktop.window.ui.openNextAction.trigger()  # Ctrl+O: the oldest waiting request
        opened_first = list(opened)
        for task, request in zip(tasks, arriving, strict=True):
            desktop.bridge.answer(request.request_id, Decision.deny("done"))
            await task
        return broker_order, opened_first

    broker_order, opened_first = run(loop, scenario(), timeout=30)
    commands = {r.request_id: r.tool_input["command"] for r in arriving}
    assert [commands[rid] for rid in broker_order] == [
        "received earliest", "tie, queued first", "tie, queued second", "first to arrive"]
    assert opened_first == broker_order[:1]
