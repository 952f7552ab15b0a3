"""The session hub: starts agent sessions, keeps their transcripts and grants, tells the UI.

It is the one `SessionSink` every backend adapter reports to, and the one place where
sessions, the broker, the rule store and the ledger meet. It knows no Qt: the UI
subscribes to it through the app wiring. Events flow one way: the hub hears the
broker's answers itself (a session grant publishes the session's rules; an approved
plan switches the session's mode), and the UI only renders what the hub publishes.

Source of truth for session info: the hub's `sessions()` for this run (an in-app
session's adapter reports its changes through `state_changed`, and the hub copies
them); the SQLite `sessions` table is the durable record, written on every change.
Its events and their fan-out are in `hub_events`; how a terminal session's info
follows its CLI, in `terminal_sessions`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from qoder_desktop.agents.base import AgentSession
from qoder_desktop.agents.cli_grants import record_run_under_grant
from qoder_desktop.agents.ended_sessions import ENDED, EndedSessions
from qoder_desktop.agents.hub_events import HubEvent, HubEventKind, HubSubscribers
from qoder_desktop.agents.sink import SessionSink
from qoder_desktop.agents.terminal_sessions import (
    first_terminal_info,
    followed_terminal_info,
    known_mode,
)
from qoder_desktop.agents.transcript_store import Transcripts
from qoder_desktop.agents.workspace_trust import decide_sources
from qoder_desktop.approval.broker import ApprovalBroker, BrokerEvent
from qoder_desktop.domain.consent import ConsentRefused, ModeConsent
from qoder_desktop.domain.hook_events import ToolEventPhase
from qoder_desktop.domain.models import (
    ApprovalRequest,
    Backend,
    Decision,
    DecisionKind,
    PermissionMode,
    SessionInfo,
    SessionRule,
    SessionState,
)
from qoder_desktop.domain.session_options import SessionOptions, TranscriptEvent, TranscriptKind
from qoder_desktop.store.database import Database, StorageError
from qoder_desktop.store.ledger import Ledger
from qoder_desktop.store.removals import mark_delivered, removals_due

log = logging.getLogger(__name__)

SessionFactory = Callable[[SessionInfo, SessionOptions, ApprovalBroker, SessionSink], AgentSession]
"""Builds the adapter for a new session (chooses the backend, credentials, environment)."""


class UnknownSession(LookupError):
    """No running session has that id."""


class SessionHub(SessionSink):
    """Runs agent sessions and is the single source of truth about them."""

    def __init__(self, db: Database, ledger: Ledger, broker: ApprovalBroker,
                 factory: SessionFactory,
                 is_trusted: Callable[[str], bool] = lambda _cwd: False) -> None:
        self._db = db
        self._is_trusted = is_trusted
        self._ledger = ledger
        self._broker = broker
        self._factory = factory
        self._sessions: dict[str, AgentSession] = {}
        self._infos: dict[str, SessionInfo] = {}
        self._unsaved: set[str] = set()
        """Terminal sessions whose row the database refused (written with their next request)."""
        self._transcripts = Transcripts()
        self._ended = EndedSessions()
        self._subscribers = HubSubscribers()
        self._publish = self._subscribers.publish
        self._tasks: set[asyncio.Task[None]] = set()
        self._unsubscribe_broker: Callable[[], None] | None = broker.subscribe(
            self._on_broker_event)

    # -- subscribers -------------------------------------------------------------------

    def subscribe(self, subscriber: Callable[[HubEvent], None]) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it again."""
        return self._subscribers.subscribe(subscriber)

    def _publish_rules(self, session_id: str) -> None:
        self._publish(HubEvent(HubEventKind.RULES, session_id,
                               rules=tuple(self._db.all_rules(session_id))))

    def _on_broker_event(self, event: BrokerEvent, request: ApprovalRequest,
                         decision: Decision | None) -> None:
        """A grant publishes the session's rules; an approved plan switches the mode of
        an in-app session (a gateway or terminal agent's CLI switches its own); an
        ended session kept for its waiting request may be forgotten once it is answered."""
        if event in (BrokerEvent.ANSWERED, BrokerEvent.WITHDRAWN) and self._ended.over_limit():
            self._forget_ended()
        if event is not BrokerEvent.ANSWERED or decision is None:
            return
        if decision.kind is DecisionKind.ALLOW_SESSION:
            self._publish_rules(request.session_id)
        mode = decision.next_mode
        if (mode is not None and decision.kind.allows and mode is not PermissionMode.PLAN
                and request.session_id in self._sessions):
            self._run(request.session_id,
                      self._leave_plan(request.session_id, mode, decision.consent),
                      "Switching the permission mode")

    async def _leave_plan(self, session_id: str, mode: PermissionMode,
                          consent: ModeConsent | None) -> None:
        """Go on in the mode chosen with the plan; one that needs a confirmation only
        with the person's consent from the confirmation dialog, else in default mode."""
        try:
            await self.set_mode(session_id, mode, consent=consent)
        except ConsentRefused as exc:
            log.warning("an approved plan asked for %s without a valid consent: %s",
                        mode.value, exc)
            await self.set_mode(session_id, PermissionMode.DEFAULT)
            self._publish(HubEvent(HubEventKind.NOTICE, session_id, text=(
                f"The session goes on in default mode: {mode.value} needs your "
                "confirmation. Switch the mode to confirm it.")))

    def _run(self, session_id: str, work: Coroutine[Any, Any, None], what: str) -> None:
        """Run `work` as a kept task; a failure is logged and published as a notice."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("%s failed: %s", what, finished.exception())
                self._publish(HubEvent(HubEventKind.NOTICE, session_id,
                                       text=f"{what} failed: {finished.exception()}"))

        task.add_done_callback(done)

    def close(self) -> None:
        """Stop listening to the broker (idempotent)."""
        if self._unsubscribe_broker is not None:
            unsubscribe, self._unsubscribe_broker = self._unsubscribe_broker, None
            unsubscribe()

    # -- queries -----------------------------------------------------------------------

    def sessions(self) -> list[SessionInfo]:
        """The sessions of this run the hub lists, oldest first: every running one and
        the ended ones that ended last (see `ended_sessions`)."""
        return sorted(self._infos.values(), key=lambda info: info.created_at)

    def forgotten(self) -> int:
        """How many ended sessions of this run are no longer listed (in History)."""
        return self._ended.forgotten

    def session(self, session_id: str) -> SessionInfo:
        """One session's info.

        Raises:
            UnknownSession: no session has that id.
        """
        try:
            return self._infos[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    def transcript(self, session_id: str) -> list[TranscriptEvent]:
        """The session's transcript as kept (see `transcript_store`: bounded, an ended
        session's tail, with a line saying what is no longer kept)."""
        return self._transcripts.lines(session_id)

    def transcript_lines_kept(self) -> int:
        """Transcript lines kept in memory over all sessions."""
        return self._transcripts.kept()

    def rules(self, session_id: str) -> list[SessionRule]:
        """The session's rules, revoked ones included."""
        return self._db.all_rules(session_id)

    # -- SessionSink -------------------------------------------------------------------

    def add_transcript_line(self, event: TranscriptEvent) -> None:
        """Keep a transcript line and pass it on (SessionSink).

        A tool call the person edited replaces the line of the call it names (the
        subscribers replace it too; see `TranscriptEvent.original_text`).
        """
        self._transcripts.add(event)
        self._publish(HubEvent(HubEventKind.TRANSCRIPT, event.session_id, line=event))

    def state_changed(self, session_id: str, state: SessionState, error: str | None) -> None:
        """Record a session's new state (SessionSink)."""
        session = self._sessions.get(session_id)
        info = session.info if session is not None else self._infos.get(session_id)
        if info is None:
            return
        info = info.model_copy(update={"state": state, "error": error})
        self._infos[session_id] = info
        if state in ENDED:
            # The adapter (its closed SDK client, hooks, options) is done with: the hub
            # keeps the session's info and transcript tail, not the adapter, so a week of
            # sessions started and stopped does not keep a week of adapters.
            self._sessions.pop(session_id, None)
        self._follow_state(info)
        try:
            self._db.upsert_session(info)
        except Exception:
            log.exception("could not save the state of session %s", session_id)
        self._publish(HubEvent(HubEventKind.SESSION, session_id, session=info))
        if state in ENDED:
            self._forget_ended()

    def _follow_state(self, info: SessionInfo) -> None:
        """An ended session keeps only its transcript's tail and joins the ended ones
        listed; a resumed one keeps all again."""
        if info.state in ENDED:
            self._transcripts.ended(info.session_id)
            self._ended.ended(info.session_id)
        else:
            self._transcripts.resumed(info.session_id)
            self._ended.resumed(info.session_id)

    def _forget_ended(self) -> None:
        """Forget the ended sessions past `ENDED_SESSIONS_KEPT` (never one whose request
        waits for a person): their info and transcript tail; the ledger keeps their
        requests and decisions, and their row in the database stays."""
        if not self._ended.over_limit():
            return
        waiting = {request.session_id for request in self._broker.pending()}
        for session_id in self._ended.to_forget(waiting):
            self._infos.pop(session_id, None)
            self._unsaved.discard(session_id)
            self._transcripts.forget(session_id)
            self._publish(HubEvent(HubEventKind.FORGOTTEN, session_id))

    def tool_seen(self, session_id: str, tool_use_id: str | None, tool_name: str,
                  tool_input: dict[str, Any], phase: str) -> None:
        """Queue a tool call seen by a hook for the ledger (SessionSink).

        The hook's answer does not wait for the disk: the ledger's writer thread writes
        it (see `Ledger.post_tool_event`).
        """
        try:
            self._ledger.post_tool_event(session_id, tool_use_id, tool_name, tool_input,
                                         ToolEventPhase(phase))
            if phase in (ToolEventPhase.POST_TOOL_USE, ToolEventPhase.POST_TOOL_USE_FAILURE):
                session = self._sessions.get(session_id)
                if session is not None:
                    record_run_under_grant(self._db, self._ledger, session, tool_use_id,
                                           tool_name, tool_input)
        except Exception:
            log.exception("could not record a %s event", phase)

    # -- commands ----------------------------------------------------------------------

    async def start_session(self, options: SessionOptions) -> SessionInfo:
        """Start a session; it shows up (possibly as failed) even when the CLI won't start.

        Raises:
            SessionStartError: the CLI could not be started (the session is kept as failed).
        """
        trust = decide_sources(options, self._is_trusted(options.cwd))
        options = options.model_copy(update={"setting_sources": trust.sources})
        info = SessionInfo(name=options.display_name(), backend=options.backend, cwd=options.cwd,
                           permission_mode=options.permission_mode)
        self._infos[info.session_id] = info
        self._db.upsert_session(info)
        session = self._factory(info, options, self._broker, self)
        self._sessions[info.session_id] = session
        self._publish(HubEvent(HubEventKind.SESSION, info.session_id, session=info))
        note = trust.transcript_text(options.cwd)
        if note:
            self.add_transcript_line(TranscriptEvent(
                session_id=info.session_id, kind=TranscriptKind.SYSTEM, text=note))
        await session.start()
        return self._infos[info.session_id]

    def external_session(self, client_name: str, cwd: str = "") -> SessionInfo:
        """A new "external" session for one run of an agent started elsewhere.

        The gateway opens one per MCP session; its requests go through the same broker,
        rules and ledger, and its grants stay with that run.
        """
        info = SessionInfo(name=client_name, backend=Backend.EXTERNAL, cwd=cwd,
                           state=SessionState.RUNNING)
        self._infos[info.session_id] = info
        self._db.upsert_session(info)
        self._publish(HubEvent(HubEventKind.SESSION, info.session_id, session=info))
        return info

    def terminal_session(self, session_id: str, agent_label: str, cwd: str,
                         permission_mode: str | None = None,
                         host: str | None = None) -> SessionInfo:
        """The session of an agent a person started in a terminal, by the CLI's session id.

        Created on first use (named for its host, agent and folder); its permission mode
        follows what the CLI reports with each request, and a request of an ended
        session (resumed in a new CLI) makes it run again. It has no adapter here: its CLI
        runs elsewhere, so it cannot be sent prompts, interrupted or stopped from the app.
        """
        info = self._infos.get(session_id)
        mode = known_mode(permission_mode)
        if info is not None:
            followed = followed_terminal_info(info, mode)
            if followed is not None:
                info = self._infos[session_id] = followed
                self._follow_state(info)
                self._save_terminal(info)
                self._publish(HubEvent(HubEventKind.SESSION, session_id, session=info))
            elif session_id in self._unsaved:
                self._save_terminal(info)
            return info
        info = first_terminal_info(session_id, agent_label, cwd, mode, host)
        self._infos[session_id] = info
        self._save_terminal(info)
        self._publish(HubEvent(HubEventKind.SESSION, session_id, session=info))
        return info

    def _save_terminal(self, info: SessionInfo) -> None:
        """Write a terminal session's row. A storage fault does not drop its request:
        the session lives in memory (the broker then denies the request it cannot
        record, and the person is told), and its row is written with its next request."""
        try:
            self._db.upsert_session(info)
        except StorageError as exc:
            self._unsaved.add(info.session_id)
            log.warning("could not save terminal session %s: %s", info.session_id, exc)
        else:
            self._unsaved.discard(info.session_id)

    def _running(self, session_id: str) -> AgentSession:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    async def send(self, session_id: str, prompt: str) -> None:
        """Send a follow-up prompt."""
        await self._running(session_id).send(prompt)

    async def interrupt(self, session_id: str) -> None:
        """Interrupt the session's current turn."""
        await self._running(session_id).interrupt()

    async def set_mode(self, session_id: str, mode: PermissionMode, *,
                       consent: ModeConsent | None = None) -> None:
        """Switch a running session's permission mode (a risky one needs the person's
        `consent` from the confirmation dialog; see `AgentSession.set_mode`).

        The adapter reports the new mode through `state_changed`, which stores and
        publishes it once.
        """
        await self._running(session_id).set_mode(mode, consent=consent)

    async def stop(self, session_id: str) -> None:
        """Stop a session and its CLI; a session that has already ended stays as it is.

        Raises:
            UnknownSession: no session has that id.
        """
        if session_id not in self._sessions and self.session(session_id).state in ENDED:
            return
        await self._running(session_id).stop()

    async def stop_all(self) -> None:
        """Stop every session (the app is quitting)."""
        for session_id, session in list(self._sessions.items()):
            if session.info.state not in (SessionState.STOPPED, SessionState.FAILED):
                try:
                    await session.stop()
                except Exception:
                    log.exception("stopping session %s failed", session_id)

    def removals_due(self, session_id: str) -> list[SessionRule]:
        """Revoked allow rules whose removal has not reached the session's CLI yet."""
        return removals_due(self._db, session_id)

    def removals_delivered(self, session_id: str, rule_ids: list[str]) -> None:
        """An answer carrying these removals reached the CLI (SessionSink); the session's
        rules are published again, so the rules pane says so."""
        if mark_delivered(self._db, rule_ids):
            self._publish_rules(session_id)

    def revoke_rule(self, rule_id: str) -> SessionRule | None:
        """Revoke a session rule; its removal travels with the session's next allow.

        In-app sessions also ask again at once for matching calls (their PreToolUse hook);
        terminal and gateway agents keep the rule until that answer reaches them.
        """
        rule = self._db.get_rule(rule_id)
        if rule is None or not rule.active:
            return rule
        self._db.revoke_rule(rule_id)
        session = self._sessions.get(rule.session_id)
        if session is not None:
            session.revoke([rule])
        self._publish_rules(rule.session_id)
        return self._db.get_rule(rule_id)
