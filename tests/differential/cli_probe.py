"""Measure the real Claude Code CLI's verdict for each differential case.

One CLI session per group (see :mod:`.cases`), driven by the scripted model:

1. a *priming* call (``touch .differential-primed``: no rule exists yet, so it always asks)
   is answered allow with the group's rules as ``addRules``/``session`` permission
   updates, exactly as "allow for this session" sends them;
2. a *control* call proves the update took effect: ``touch differential-control`` under
   an extra allow rule ``Bash(touch differential-control)`` sent in the same update must
   run without asking, and in groups with deny rules ``touch differential-denied`` under
   a deny rule sent with theirs must be refused. The CLI ignores a whole update it does
   not accept (e.g. one holding ``Bash(*)``): then the group's verdicts are still
   recorded, marked ``grant_applied=False``;
3. each case's call, one model turn each. The verdict is ``ask`` when ``can_use_tool``
   is called (answered deny, so nothing runs), ``allow`` when the tool runs without it
   (a PostToolUse or PostToolUseFailure hook fires), ``deny`` when the CLI refuses it
   by itself, and ``error`` when the call never reached a permission decision (e.g. the
   tool rejected its input): an ``error`` means the case needs fixing.

The CLI gets a scratch HOME and CLAUDE_CONFIG_DIR (:mod:`.sandbox`), no setting sources,
permission mode "default", and ``build_cli_env`` (loopback model, proxies on a closed
loopback port, so a WebFetch can never leave the machine).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)
from claude_agent_sdk.types import (
    HookContext,
    HookInput,
    PermissionRuleValue,
    SyncHookJSONOutput,
    ToolPermissionContext,
)

from qoder_desktop.scripted_model import Scenario, ScenarioStep, ThreadedScriptedModel
from qoder_desktop.scripted_model.cli_env import build_cli_env

from . import sandbox
from .cases import Group, split_rule

GROUP_TIMEOUT = 180.0
"""Seconds one group's CLI session may take before it counts as hung."""

PRIMING = {"command": "touch .differential-primed"}
ALLOW_CONTROL_RULE = "Bash(touch differential-control)"
ALLOW_CONTROL = {"command": "touch differential-control"}
DENY_CONTROL_RULE = "Bash(touch differential-denied)"
DENY_CONTROL = {"command": "touch differential-denied"}
ASKED_MESSAGE = "differential probe: asked, answered deny"
MCP_SERVERS = ("notes", "other")
# What the CLI says when a rule or its own checks refuse a call without asking.
DENIED_RE = re.compile(r"permission|denied|not allowed|blocked", re.IGNORECASE)
# A deny rule naming a whole tool takes the tool away: the model's call finds no such tool.
TOOL_REMOVED = "No such tool available"


@dataclass(frozen=True)
class Verdict:
    """The CLI's verdict for one case (``detail``: what the model saw, shortened)."""

    case_id: str
    verdict: str  # "allow" | "ask" | "deny" | "error"
    detail: str = ""
    grant_applied: bool = True


@dataclass
class _Observed:
    """What one session showed, by tool_use_id."""

    order: list[str] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)
    ran: set[str] = field(default_factory=set)
    results: dict[str, tuple[bool, str]] = field(default_factory=dict)


class GroupFailure(RuntimeError):
    """A group's session did not play out (hung, crashed, or the control failed)."""


def _rule_values(rules: Sequence[str]) -> list[PermissionRuleValue]:
    return [PermissionRuleValue(*split_rule(rule)) for rule in rules]


def permission_updates(allow: Sequence[str], deny: Sequence[str]) -> list[PermissionUpdate]:
    """The session updates that "allow for this session" sends, one per behavior."""
    updates = []
    for behavior, rules in (("allow", allow), ("deny", deny)):
        if rules:
            updates.append(PermissionUpdate(type="addRules", rules=_rule_values(rules),
                                            behavior=behavior,  # type: ignore[arg-type]
                                            destination="session"))
    return updates


def _mcp_servers() -> dict[str, Any]:
    """Two tiny in-process MCP servers (claude_agent_sdk's SDK servers): notes, other."""

    async def ok(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "ok"}]}

    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    notes = create_sdk_mcp_server("notes", tools=[
        tool("read_note", "Read a note by name.", schema)(ok),
        tool("delete_note", "Delete a note by name.", schema)(ok),
    ])
    other = create_sdk_mcp_server("other", tools=[tool("ping", "Ping.", schema)(ok)])
    return {"notes": notes, "other": other}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _classify(case_id: str, tool_use_id: str | None, seen: _Observed) -> Verdict:
    if tool_use_id is None:
        return Verdict(case_id, "error", "the model's call never arrived")
    if tool_use_id in seen.asked:
        return Verdict(case_id, "ask")
    is_error, text = seen.results.get(tool_use_id, (True, "no tool result"))
    short = " ".join(text.split())[:160]
    if tool_use_id in seen.ran:
        return Verdict(case_id, "allow", short if is_error else "")
    if is_error and (DENIED_RE.search(text) or TOOL_REMOVED in text):
        return Verdict(case_id, "deny", short)
    return Verdict(case_id, "error", short)


class GroupProbe:
    """Runs one group's CLI session against a scripted model and classifies each call."""

    def __init__(self, group: Group, box: sandbox.Sandbox, base_url: str, scenario: str) -> None:
        self.group = group
        self.box = box
        self.base_url = base_url
        self.scenario = scenario
        self.seen = _Observed()
        self.priming_answered = False
        self.allow_rules = [*box.fill(list(group.rules)), ALLOW_CONTROL_RULE]
        self.deny_rules = [*box.fill(list(group.deny_rules))]
        self.controls: list[tuple[dict[str, str], str]] = [(ALLOW_CONTROL, "allow")]
        if self.deny_rules:
            self.deny_rules.append(DENY_CONTROL_RULE)
            self.controls.append((DENY_CONTROL, "deny"))

    def build_scenario(self) -> Scenario:
        """Priming call, control calls, then one step per case."""
        steps = [ScenarioStep(tool="Bash", input=PRIMING)]
        steps += [ScenarioStep(tool="Bash", input=call) for call, _ in self.controls]
        steps += [ScenarioStep(tool=c.tool, input=self.box.fill(c.input))
                  for c in self.group.cases]
        return Scenario(name=self.scenario, steps=steps, closing_text="done")

    async def _can_use_tool(self, tool_name: str, tool_input: dict[str, Any],
                            context: ToolPermissionContext) -> Any:
        tool_use_id = context.tool_use_id or ""
        if not self.priming_answered and tool_input == PRIMING:
            self.priming_answered = True
            return PermissionResultAllow(
                updated_permissions=permission_updates(self.allow_rules, self.deny_rules))
        self.seen.asked.add(tool_use_id)
        return PermissionResultDeny(message=ASKED_MESSAGE)

    async def _ran(self, hook_input: HookInput, tool_use_id: str | None,
                   context: HookContext) -> SyncHookJSONOutput:
        if tool_use_id:
            self.seen.ran.add(tool_use_id)
        return {}

    def options(self) -> ClaudeAgentOptions:
        """The CLI session: scratch HOME and config, no settings, default mode."""
        env = build_cli_env(self.base_url, self.box.config, scenario=self.scenario,
                            extra={"HOME": str(self.box.home), "PATH": self.box.path_env()})
        uses_mcp = any(c.tool.startswith("mcp__") for c in self.group.cases)
        hook = HookMatcher(matcher=None, hooks=[self._ran])
        return ClaudeAgentOptions(
            cwd=str(self.box.workspace),
            env=env,
            setting_sources=[],
            permission_mode="default",
            can_use_tool=self._can_use_tool,
            add_dirs=[self.box.fill(d) for d in self.group.add_dirs],
            mcp_servers=_mcp_servers() if uses_mcp else {},
            hooks={"PostToolUse": [hook], "PostToolUseFailure": [hook]},
        )

    async def run(self) -> list[Verdict]:
        """Play the session; return one verdict per case (raises GroupFailure).

        When the control shows that the CLI ignored the grant, the verdicts are still
        the CLI's real verdicts for that grant; each one says ``grant_applied=False``.
        """
        async with ClaudeSDKClient(self.options()) as client:
            await client.query("Run the differential probe.")
            async for message in client.receive_response():
                self._observe(message)
        ids = self.seen.order
        first_case = 1 + len(self.controls)
        if len(ids) != first_case + len(self.group.cases):
            raise GroupFailure(f"{len(ids)} tool calls arrived, expected "
                               f"{first_case + len(self.group.cases)}")
        if not self.priming_answered:
            raise GroupFailure("the priming call did not ask")
        applied = True
        for (_, expected), tool_use_id in zip(self.controls, ids[1:first_case], strict=True):
            control = _classify("control", tool_use_id, self.seen)
            if control.verdict == "error":
                raise GroupFailure(f"a control call reached no verdict: {control.detail}")
            applied = applied and control.verdict == expected
        verdicts = []
        for case, tool_use_id in zip(self.group.cases, ids[first_case:], strict=True):
            verdict = _classify(case.id, tool_use_id, self.seen)
            verdicts.append(replace(verdict, grant_applied=applied,
                                    detail=sandbox.unfill_text(self.box, verdict.detail)))
        return verdicts

    def _observe(self, message: Any) -> None:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    self.seen.order.append(block.id)
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    self.seen.results[block.tool_use_id] = (bool(block.is_error),
                                                            _text(block.content))
        elif isinstance(message, ResultMessage) and message.is_error:
            raise GroupFailure(f"the session ended with an error: {message.result}")


async def measure(groups: Sequence[Group], scratch: Path, *, concurrency: int = 3,
                  progress: Callable[[str], None] | None = None) -> list[Verdict]:
    """Measure every group (at most ``concurrency`` CLI sessions at once).

    Each group runs in its own sandbox under ``scratch``; verdicts come back in case order.
    """
    scenarios: dict[str, Scenario] = {}
    limit = asyncio.Semaphore(concurrency)

    async def one(index: int, group: Group) -> list[Verdict]:
        async with limit:
            box = sandbox.build(scratch / f"group-{index:03d}")
            probe = GroupProbe(group, box, model.base_url, f"differential_{index:03d}")
            scenarios[probe.scenario] = probe.build_scenario()
            try:
                verdicts = await asyncio.wait_for(probe.run(), GROUP_TIMEOUT)
            except (GroupFailure, TimeoutError) as exc:
                reason = f"group {index} failed: {exc or type(exc).__name__}"
                return [Verdict(c.id, "error", reason) for c in group.cases]
            if progress:
                progress(f"group {index:3d}: {len(verdicts)} cases")
            return verdicts

    with ThreadedScriptedModel(scenarios.get, default_scenario="none") as model:
        per_group = await asyncio.gather(*(one(i, g) for i, g in enumerate(groups)))
    return [v for verdicts in per_group for v in verdicts]
