"""The agent tools the app treats specially, by name: defined once, imported everywhere
(the rule matcher, narrowing, risky session options, diffs, the approval dialog)."""

from __future__ import annotations

BASH_TOOL = "Bash"
WEBFETCH_TOOL = "WebFetch"
QUESTION_TOOL = "AskUserQuestion"
PLAN_TOOL = "ExitPlanMode"
ENTER_PLAN_TOOL = "EnterPlanMode"
"""The tool with which the agent switches itself into plan mode."""

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Tools that write files; the CLI checks them against `Edit(...)` rules."""
READ_TOOLS = frozenset({"Read", "NotebookRead"})
"""Tools that read one file; the CLI checks them against `Read(...)` rules."""
SEARCH_TOOLS = frozenset({"Glob", "Grep", "LS"})
"""Tools that search a folder; the CLI checks them against `Read(...)` rules too."""
PATH_RULE_TOOLS = EDIT_TOOLS | READ_TOOLS
"""Tools whose rule content is a path pattern (gitignore style), not a command."""
DIFF_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})
"""File tools whose input the approval dialog shows as a diff of the file."""
UNATTENDED_RISK_TOOLS = frozenset({BASH_TOOL}) | EDIT_TOOLS
"""Tools a whole-tool allow rule (`Bash`, `Edit(*)` …) lets run unapproved: a session
option granting one needs the same confirmation as a risky mode."""
