"""A way in's permission prompt as our `ApprovalRequest`: the one builder, the one
parser of the CLI's suggestions and its one check (see `approval.source`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from qoder_desktop.domain.models import ApprovalRequest, Backend, PermissionSuggestion

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class SessionRef:
    """The session a call belongs to, and the folders it works in."""

    session_id: str
    name: str
    backend: Backend
    cwd: str | None = None
    add_dirs: tuple[str, ...] = ()
    project_settings_file: str | None = None
    """Where "save to the project" writes, if the session loads that file."""
    host: str | None = None
    """The remote host the session runs on (None: this machine), known by the socket
    its requests arrive on, never by what they claim."""


@dataclass(frozen=True)
class ToolCall:
    """One permission prompt in the way in's own terms (suggestions still raw).

    Each field goes to the `ApprovalRequest` field of the same name (see
    `build_request`), where what it means is written.
    """

    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str | None = None
    suggestions: Any = None
    """The CLI's permission suggestions as received: a list of wire dicts or of SDK
    objects with ``to_dict()``; anything else means none."""
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    decision_reason: str | None = None
    blocked_path: str | None = None
    agent_id: str | None = None


UpdateCheck = Callable[[PermissionSuggestion], str | None]
"""Why an update would not reach the agent's CLI as sent, or None when it would."""

_NEEDS = {"addRules": ("rules", "behavior"), "replaceRules": ("rules", "behavior"),
          "removeRules": ("rules", "behavior"), "setMode": ("mode",),
          "addDirectories": ("directories",), "removeDirectories": ("directories",)}


def wire_problem(update: PermissionSuggestion) -> str | None:
    """Why the agent's CLI would refuse `update`, or None.

    Claude Code refuses an update that lacks a field its type needs, and then ignores
    every update of the same answer; the Claude SDK's conversion
    (``PermissionUpdate.to_dict``) refuses exactly these. This is that check without
    loading an SDK, for every way in (`tests/approval/test_source.py` holds it to the
    SDK's own conversion).
    """
    needs = _NEEDS.get(update.type)
    if needs is None:
        return f"the CLI does not know the update type {update.type!r}"
    missing = [name for name in needs if getattr(update, name) is None]
    if missing:
        article = "an" if update.type[:1].lower() in "aeiou" else "a"
        return f"{article} {update.type} update without {' or '.join(missing)}"
    return None


def parse_suggestions(raw: Any, check: UpdateCheck = wire_problem,
                      ) -> tuple[PermissionSuggestion, ...]:
    """The CLI's permission suggestions that would reach it; malformed ones are dropped.

    A dropped suggestion only means no rule is offered for it (a log line says so): the
    person is still asked.

    Raises:
        ValueError: `raw` is not a list at all: the prompt itself is malformed (each way
            in refuses it as it refuses any malformed prompt).
    """
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple):
        raise ValueError(f"permission suggestions must be a list, not {type(raw).__name__}")
    suggestions = []
    for item in raw:
        try:
            wire = item.to_dict() if hasattr(item, "to_dict") else item
            suggestion = PermissionSuggestion.from_wire(wire)
            problem = check(suggestion)
            if problem is not None:
                raise ValueError(problem)
            suggestions.append(suggestion)
        except Exception as exc:
            log.warning("ignored a malformed permission suggestion from the CLI (%s); "
                        "the person is still asked", exc)
    return tuple(suggestions)


def build_request(session: SessionRef, call: ToolCall,
                  check: UpdateCheck = wire_problem) -> ApprovalRequest:
    """The request every way in puts to the broker (the one builder)."""
    said = {field.name: getattr(call, field.name) for field in fields(call)}
    said["suggestions"] = parse_suggestions(call.suggestions, check)
    return ApprovalRequest(
        session_id=session.session_id, session_name=session.name, backend=session.backend,
        cwd=session.cwd, add_dirs=session.add_dirs,
        project_settings_file=session.project_settings_file, host=session.host, **said)
