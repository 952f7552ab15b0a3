"""Sessions in the window: the hub's events rendered, the window's intents sent to the hub."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from qoder_desktop.agents.hub import HubEvent, HubEventKind, SessionHub
from qoder_desktop.diagnostics.memory import settle_memory
from qoder_desktop.domain.consent import ModeConsent
from qoder_desktop.domain.models import PermissionMode
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.ui.control.tasks import Tasks
from qoder_desktop.ui.windows.main_window import MainWindow


class SessionController:
    """Renders what the hub publishes and turns the window's session intents into hub
    calls (each in the background; a failure is shown)."""

    def __init__(self, hub: SessionHub, window: MainWindow, tasks: Tasks) -> None:
        self._hub = hub
        self._window = window
        self._tasks = tasks
        self._settled: set[str] = set()
        """The backends whose first session has started (their SDK is loaded)."""
        self._unsubscribe: Callable[[], None] | None = hub.subscribe(self.render)

    def render(self, event: HubEvent) -> None:
        """Show one hub event in the window."""
        if event.kind is HubEventKind.SESSION and event.session is not None:
            self._window.update_session(event.session)
        elif event.kind is HubEventKind.FORGOTTEN:
            self._window.forget_session(event.session_id, self._hub.forgotten())
        elif event.kind is HubEventKind.TRANSCRIPT and event.line is not None:
            self._window.append_transcript(event.line)
        elif event.kind is HubEventKind.RULES:
            self._window.set_rules(event.session_id, list(event.rules))
        elif event.kind is HubEventKind.NOTICE:
            self._window.show_status(event.text)

    def show_session(self, session_id: str) -> None:
        """Show a selected session's transcript and rules."""
        self._window.set_transcript(session_id, self._hub.transcript(session_id))
        self._window.set_rules(session_id, self._hub.rules(session_id))

    def start(self, options: SessionOptions) -> asyncio.Task[Any]:
        """Start a session in the background; the window shows it at once.

        The first session of a backend loads its SDK; what that import leaves behind is
        long-lived, so it is kept out of later garbage collections (see
        `memory.settle_memory`). Only then: freezing after every session would also keep
        the garbage of the sessions before it (about 1 MB a session, measured by
        `benchmarks/bench_soak.py`) out of every collection for good.
        """
        task = self._tasks.spawn(self._hub.start_session(options), "starting the session")
        if options.backend.value not in self._settled:
            self._settled.add(options.backend.value)
            task.add_done_callback(lambda _task: settle_memory(collect=False))
        return task

    def send(self, session_id: str, text: str) -> None:
        """Send a follow-up prompt."""
        self._tasks.spawn(self._hub.send(session_id, text), "sending the prompt")

    def interrupt(self, session_id: str) -> None:
        """Interrupt the session's current turn."""
        self._tasks.spawn(self._hub.interrupt(session_id), "interrupting")

    def stop(self, session_id: str) -> None:
        """Stop the session and its CLI."""
        self._tasks.spawn(self._hub.stop(session_id), "stopping")

    def change_mode(self, session_id: str, mode: PermissionMode,
                    consent: ModeConsent | None = None) -> None:
        """Switch the mode; a risky one carries the consent the person gave in the
        confirmation dialog (the session checks and spends it)."""
        self._tasks.spawn(self._hub.set_mode(session_id, mode, consent=consent),
                          "switching the permission mode")

    def revoke(self, rule_id: str) -> None:
        """Revoke a session rule (the hub publishes the session's rules)."""
        self._hub.revoke_rule(rule_id)

    async def stop_all(self) -> None:
        """Stop every session and stop listening to the hub (idempotent)."""
        await self._hub.stop_all()
        if self._unsubscribe is not None:
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            unsubscribe()
