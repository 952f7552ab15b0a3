"""Scenario data model for the scripted model, and loading of the shipped scenarios.

A scenario is what the scripted model "says", one model turn at a time:

* every step but the last is a *tool step*: optional assistant ``text``, then one tool
  call (``tool`` + ``input``) or several parallel ones (``calls``); the model turn ends
  with ``stop_reason: "tool_use"``;
* the last step may be a *text step* (only ``text``): the closing message, ending the turn
  with ``stop_reason: "end_turn"``. When the last step is a tool step, ``closing_text`` is
  used as the closing message instead.

A tool step may say how the model reacts to what the person decided about its calls
(read from the results the CLI sends back, see :mod:`.outcome`): ``on_deny``,
``on_edit`` (a Write/Edit whose input the person changed), ``on_answer`` (an answered
question) and ``on_fail`` (the tool itself failed). Each is a *reaction*: a ``text``, and
``then``: ``"stop"`` (the default: the text closes the turn) or ``"next"`` (the text comes
first, then the scenario goes on, skipping ``skip`` steps). In a reaction's text,
``{answers}`` is replaced by the answers given and ``{reason}`` by what the denied or failed
call said back. A step without a reaction for an outcome goes on as if it was allowed, so
scenario files written before reactions play as they did.

Any step may carry ``delay_seconds``: the server streams ``message_start`` (and the text, if
any), then waits that long before sending the rest, so a user can interrupt a "slow" model.

A scenario may also script the *sub-agents* its steps start (``subagents``). A step
starts one with an ``Agent`` tool call (the name the bundled Claude Code 2.1.332 gives
the model in the request's ``tools``; its init message still lists the tool as ``Task``,
the earlier name, which scenarios may use too) whose input holds ``description`` and
``prompt``, and ``"run_in_background": false`` so the main conversation waits for its
report; several such calls in one step run at the same time. Each entry of
``subagents`` is a scenario of its own (``name``, ``steps``, ``closing_text``, reactions,
nested ``subagents``) plus the ``prompt`` it answers: the CLI runs a sub-agent as a
separate conversation whose first user message is the prompt of its ``Agent`` call, so
the server plays the sub-agent script whose ``prompt`` that message contains (the
longest one, should several match; see :meth:`Scenario.script_for`). Every sub-agent's
``prompt`` must be the ``prompt`` of an ``Agent``/``Task`` call in the scenario, and
prompts must differ, so a typo fails at load time instead of replaying the main script
inside the sub-agent::

    {"name": "helpers", "steps": [
       {"calls": [
          {"tool": "Agent", "input": {"description": "Touch a", "prompt": "Run touch a.",
                                      "subagent_type": "general-purpose",
                                      "run_in_background": false}},
          {"tool": "Agent", "input": {"description": "Touch b", "prompt": "Run touch b.",
                                      "subagent_type": "general-purpose",
                                      "run_in_background": false}}]},
       {"text": "Both helpers are done."}],
     "subagents": [
       {"name": "touch_a", "prompt": "Run touch a.",
        "steps": [{"tool": "Bash", "input": {"command": "touch a"}}, {"text": "Made a."}]},
       {"name": "touch_b", "prompt": "Run touch b.",
        "steps": [{"tool": "Bash", "input": {"command": "touch b"}}, {"text": "Made b."}]}]}

String values in tool inputs may contain placeholders, filled by the server from the
request (see :mod:`.request_info`): ``{cwd}`` (the session's working directory) and
``{plan_file}`` (the plan file the CLI names in plan mode). Only these exact placeholders
are replaced, so other braces (HTML, JSON, f-strings) in inputs are safe.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .scenario_names import SCENARIO_FOLDER, builtin_scenario_names

CWD_PLACEHOLDER = "{cwd}"
SUBAGENT_TOOLS = ("Agent", "Task")
"""Names of the CLI's sub-agent tool: ``Agent`` (what Claude Code 2.1.332 offers the model)
and ``Task`` (its earlier name, still in the CLI's init message)."""
PLAN_FILE_PLACEHOLDER = "{plan_file}"
DEFAULT_CLOSING_TEXT = "Done. That was the whole scripted scenario."


class ScenarioError(ValueError):
    """A scenario file is missing, unreadable or invalid. The message says which and why."""


class ToolCall(BaseModel):
    """One tool call the model makes."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1, description="Tool name as the CLI lists it, e.g. 'Bash'.")
    input: dict[str, Any] = Field(default_factory=dict, description="The tool input.")


class Reaction(BaseModel):
    """What the model says (and does next) after a person decided about a step's calls."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, description="What the model says; {answers}/{reason} filled.")
    then: Literal["stop", "next"] = Field(
        default="stop", description="'stop': the text ends the turn; 'next': go on after it.")
    skip: int = Field(default=0, ge=0, description="With 'next': how many steps to leave out.")


class ScenarioStep(BaseModel):
    """One model turn: optional text, then a tool call (or parallel calls), or only text."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(default=None, description="Assistant text sent before any tool call.")
    tool: str | None = Field(default=None, min_length=1, description="Tool name for a single call.")
    input: dict[str, Any] | None = Field(default=None, description="Tool input for a single call.")
    calls: list[ToolCall] | None = Field(
        default=None, min_length=1, description="Several tool calls sent in the same model turn."
    )
    delay_seconds: float = Field(default=0.0, ge=0.0, le=600.0)
    on_deny: Reaction | None = None
    on_edit: Reaction | None = None
    on_answer: Reaction | None = None
    on_fail: Reaction | None = None

    @model_validator(mode="after")
    def _check_shape(self) -> ScenarioStep:
        if self.calls is not None and (self.tool is not None or self.input is not None):
            raise ValueError("use either 'tool'+'input' or 'calls', not both")
        if self.input is not None and self.tool is None:
            raise ValueError("'input' given without 'tool'")
        if self.tool is None and self.calls is None and not self.text:
            raise ValueError("a step needs a 'tool', 'calls' or a non-empty 'text'")
        if self.tool is None and self.calls is None and self.reactions:
            raise ValueError("a text-only step has no calls to react to")
        return self

    @property
    def reactions(self) -> dict[str, Reaction]:
        """This step's reactions by outcome name ("denied", "edited", "answered", "failed")."""
        found = {"denied": self.on_deny, "edited": self.on_edit, "answered": self.on_answer,
                 "failed": self.on_fail}
        return {outcome: reaction for outcome, reaction in found.items() if reaction is not None}

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls of this step (empty for a text-only step)."""
        if self.calls is not None:
            return list(self.calls)
        if self.tool is not None:
            return [ToolCall(tool=self.tool, input=self.input or {})]
        return []

    @property
    def is_text_only(self) -> bool:
        return not self.tool_calls


class Scenario(BaseModel):
    """A scripted conversation: tool steps in order, then a closing text."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_\-]+$")
    description: str = ""
    steps: list[ScenarioStep] = Field(default_factory=list)
    closing_text: str = DEFAULT_CLOSING_TEXT
    subagents: list[SubagentScript] = Field(
        default_factory=list, description="Scripts of the sub-agents the steps start.")

    @model_validator(mode="after")
    def _check_steps(self) -> Scenario:
        for index, step in enumerate(self.steps[:-1]):
            if step.is_text_only:
                raise ValueError(
                    f"step {index}: only the last step may be text-only"
                    " (a text-only step ends the turn)"
                )
        started = {call.input.get("prompt") for step in self.steps for call in step.tool_calls
                   if call.tool in SUBAGENT_TOOLS}
        prompts = [sub.prompt for sub in self.subagents]
        for sub in self.subagents:
            if sub.prompt not in started:
                raise ValueError(f"sub-agent {sub.name!r}: no Agent call in this scenario "
                                 f"has the prompt {sub.prompt!r}")
            if prompts.count(sub.prompt) > 1:
                raise ValueError(f"sub-agent {sub.name!r}: another sub-agent has the same "
                                 "prompt")
        return self

    def script_for(self, prompt: str | None) -> Scenario:
        """The script that answers a conversation whose first prompt is ``prompt``.

        A sub-agent's conversation starts with the prompt of its ``Agent`` call: the
        sub-agent script (searched in nested ``subagents`` too) whose ``prompt`` that text
        contains, the longest if several do. Any other conversation plays this scenario.
        """
        if not prompt:
            return self
        found: list[SubagentScript] = []
        pending = list(self.subagents)
        while pending:
            sub = pending.pop()
            pending.extend(sub.subagents)
            if sub.prompt in prompt:
                found.append(sub)
        return max(found, key=lambda sub: len(sub.prompt)) if found else self

    @property
    def tool_steps(self) -> list[ScenarioStep]:
        return [s for s in self.steps if not s.is_text_only]

    @property
    def closing_step(self) -> ScenarioStep:
        """The step that ends the turn: the last text-only step, or ``closing_text``."""
        if self.steps and self.steps[-1].is_text_only:
            return self.steps[-1]
        return ScenarioStep(text=self.closing_text)

    def step_for_tool_count(self, tool_uses_so_far: int) -> tuple[int, ScenarioStep]:
        """Which step comes after ``tool_uses_so_far`` tool calls in this turn.

        Returns ``(index, step)``; the index equals ``len(tool_steps)`` for the closing step.
        A count between the boundaries of a parallel step (which should not happen) moves on
        to the next step, so the scenario never repeats a call.
        """
        seen = 0
        for index, step in enumerate(self.tool_steps):
            if tool_uses_so_far <= seen:
                return index, step
            seen += len(step.tool_calls)
        return len(self.tool_steps), self.closing_step

    def step_after(self, last_index: int, outcome: str | None,
                   fills: dict[str, str]) -> tuple[int, ScenarioStep]:
        """The step that follows tool step ``last_index``, given how its calls ended.

        ``outcome`` is an :class:`~.outcome.Outcome` value (or None); ``fills`` the values
        of ``{answers}`` and ``{reason}``. Returns ``(index, step)`` like
        :meth:`step_for_tool_count`; a reaction that stops gives the closing index and a
        text-only step with the reaction's text.
        """
        steps = self.tool_steps
        closing = len(steps)
        reaction = steps[last_index].reactions.get(outcome or "") if last_index < closing else None
        if reaction is None:
            index = min(last_index + 1, closing)
            return index, steps[index] if index < closing else self.closing_step
        text = substitute(reaction.text, fills)
        if reaction.then == "stop":
            return closing, ScenarioStep(text=text)
        index = min(last_index + 1 + reaction.skip, closing)
        step = steps[index] if index < closing else self.closing_step
        joined = f"{text}\n\n{step.text}" if step.text else text
        return index, step.model_copy(update={"text": joined})

    @property
    def total_tool_calls(self) -> int:
        return sum(len(s.tool_calls) for s in self.tool_steps)


class SubagentScript(Scenario):
    """What one sub-agent says: a scenario of its own, played for the conversation that
    starts with ``prompt`` (the prompt of the ``Agent`` call that starts it)."""

    prompt: str = Field(min_length=1, description="The prompt of the Agent call it answers.")


Scenario.model_rebuild()


def _format_validation_error(source: str, err: ValidationError) -> str:
    lines = [f"invalid scenario {source}:"]
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "<root>"
        lines.append(f"  - {loc}: {e['msg']}")
    return "\n".join(lines)


def parse_scenario(data: str | bytes | dict[str, Any], source: str = "<data>") -> Scenario:
    """Validate scenario data (JSON text or a parsed dict); raise :class:`ScenarioError`."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"invalid scenario {source}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"invalid scenario {source}: top level must be a JSON object")
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(_format_validation_error(source, exc)) from exc


def load_scenario_file(path: str | Path) -> Scenario:
    """Load and validate one scenario JSON file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"cannot read scenario file {path}: {exc}") from exc
    scenario = parse_scenario(text, source=str(path))
    if scenario.name != path.stem:
        raise ScenarioError(
            f"invalid scenario {path}: name {scenario.name!r}"
            f" does not match the file name {path.stem!r}"
        )
    return scenario


def load_builtin_scenario(name: str) -> Scenario:
    """Load one shipped scenario by name; raise :class:`ScenarioError` if unknown or invalid."""
    if name not in builtin_scenario_names():
        raise ScenarioError(
            f"unknown scenario {name!r}; known: {', '.join(builtin_scenario_names())}"
        )
    entry = resources.files(__package__).joinpath(SCENARIO_FOLDER, f"{name}.json")
    scenario = parse_scenario(entry.read_text(encoding="utf-8"), source=f"{name}.json")
    if scenario.name != name:
        raise ScenarioError(f"invalid scenario {name}.json: name {scenario.name!r} != {name!r}")
    return scenario


ScenarioResolver = Callable[[str], Scenario | None]
"""Maps a scenario name to a :class:`Scenario`, or ``None`` if the name is unknown."""


class ScenarioLibrary:
    """A resolver over the shipped scenarios plus extra ones (extras win on name clashes).

    Unknown names resolve to ``None``; the server then falls back to its default scenario.
    """

    def __init__(self, extra: Iterable[Scenario] = (), include_builtin: bool = True) -> None:
        self._cache: dict[str, Scenario] = {}
        self._include_builtin = include_builtin
        for scenario in extra:
            self._cache[scenario.name] = scenario

    def names(self) -> list[str]:
        names = set(self._cache)
        if self._include_builtin:
            names.update(builtin_scenario_names())
        return sorted(names)

    def __call__(self, name: str) -> Scenario | None:
        if name in self._cache:
            return self._cache[name]
        if self._include_builtin and name in builtin_scenario_names():
            self._cache[name] = load_builtin_scenario(name)
            return self._cache[name]
        return None


def substitute(value: Any, placeholders: dict[str, str]) -> Any:
    """Return ``value`` (deep copy) with each placeholder key in its strings replaced.

    ``placeholders`` maps the literal placeholder (e.g. ``"{cwd}"``) to its value.
    """
    if isinstance(value, str):
        for key, replacement in placeholders.items():
            value = value.replace(key, replacement)
        return value
    if isinstance(value, list):
        return [substitute(v, placeholders) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, placeholders) for k, v in value.items()}
    return value
