"""What the ledger says of a call the agent's CLI ran under a session grant it holds.

Such a call never reaches `can_use_tool`; its ``PostToolUse`` hook does. When no approval
row exists for it and one of the session's allow rules covers it, the ledger gets an
approval row decided by the CLI, with the rule our matcher reads it as (it explains; the
CLI decided).
"""

from __future__ import annotations

from typing import Any

from qoder_desktop.agents.base import AgentSession
from qoder_desktop.approval.source import SessionRef, ToolCall, build_request
from qoder_desktop.domain.kinds import RuleBehavior
from qoder_desktop.rules import matcher as rules
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


def record_run_under_grant(db: Database, ledger: Ledger, session: AgentSession,
                           tool_use_id: str | None, tool_name: str,
                           tool_input: dict[str, Any]) -> None:
    """A call of `session` that ran without asking us, under a session grant the CLI
    holds: its approval row, decided by the CLI, with the rule our matcher reads it as
    (nothing when no allow rule covers it, or the call has no id)."""
    if not tool_use_id:
        return
    session_id = session.session_id
    allow = [rule for rule in db.active_rules(session_id)
             if rule.behavior is RuleBehavior.ALLOW]
    verdict = rules.evaluate(allow, tool_name, tool_input, session.options.cwd,
                             add_dirs=tuple(session.options.add_dirs)) if allow else None
    if verdict is None or verdict.behavior is not RuleBehavior.ALLOW:
        return
    ledger.post_rule_allowed(build_request(
        SessionRef(session_id, session.info.name, session.info.backend,
                   cwd=session.options.cwd, add_dirs=tuple(session.options.add_dirs)),
        ToolCall(tool_name, tool_input, tool_use_id)), str(verdict.rule.rule))
