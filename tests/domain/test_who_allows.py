"""Only a person or the agent's CLI allows a call: a rule, a timeout or any other path
of ours can never produce an allow.

Two guards: the `Decision` validator refuses an allowing decision whose `decided_by` is
not `USER` or `CLI`; and the walk below lists every place in `qoder_desktop/` that
constructs an allowing decision or names who decided, and compares it with the short
list of sites where that is a person's own action (or the ledger's record of what the
CLI ran). A new site fails this test until someone adds it here, with its reason.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from qoder_desktop.domain.models import DecidedBy, Decision, DecisionKind

PACKAGE = Path(__file__).resolve().parents[2] / "qoder_desktop"

ALLOW_FACTORIES = frozenset({"allow_once", "allow_session"})
ALLOW_KINDS = frozenset({"ALLOW_ONCE", "ALLOW_SESSION"})
DECIDING_FIELDS = frozenset({"kind", "decided_by", "final_input"})
DEFINITIONS = frozenset({"domain/models.py", "domain/kinds.py"})
"""Where `Decision` and `DecidedBy` are defined: the validator there is the guard."""

Site = tuple[str, str, str]
"""(file under qoder_desktop/, the enclosing class.function, what it does)."""

PERSONS_ACTIONS: Counter[Site] = Counter({
    # The approval dialog's buttons and keys: Ctrl+Return / "Allow once" …
    ("ui/dialogs/approval.py", "ApprovalDialog.allow_once", "Decision.allow_once"): 1,
    # … and Ctrl+Shift+Return / "Allow for this session" (the person's own grant).
    ("ui/dialogs/approval.py", "ApprovalDialog.allow_session", "Decision.allow_session"): 1,
    # The plan dialog's "Approve" button.
    ("ui/dialogs/plan.py", "PlanDialog.approve", "Decision.allow_once"): 1,
    # The question dialog's "Submit" (answers are an allow carrying them).
    ("ui/dialogs/question.py", "QuestionDialog.submit", "Decision.allow_once"): 1,
    # A person's answer on their paired phone (Away mode), verified against the device's
    # key and a single-use nonce before it is read: allow once, an answered question and
    # an approved plan (default mode only) …
    ("away/phone_view.py", "_decide", "Decision.allow_once"): 3,
    # … and "allow for this session" with the offered rules the person chose.
    ("away/phone_view.py", "_decide", "Decision.allow_session"): 1,
    # The person pressed "Allow once" on a desktop notification (armed, whole value).
    ("ui/notifications.py", "RequestNotifier._on_action", "Decision.allow_once"): 1,
    # Not an answer: the ledger's row for a call the agent's CLI already ran under its
    # own session grant (seen through its hooks), decided by the CLI.
    ("store/ledger.py", "Ledger.record_rule_allowed", "Decision.allow_once"): 1,
    ("store/ledger.py", "Ledger.record_rule_allowed", "DecidedBy.CLI"): 1,
    # Deny rules decide (stricter than the CLI is safe): a new request …
    ("approval/rule_decisions.py", "decide_by_rule", "DecidedBy.SESSION_RULE"): 1,
    # … and a request already waiting when the person granted the deny rule.
    ("approval/rule_decisions.py", "sibling_outcome", "DecidedBy.SESSION_RULE"): 1,
    # Not a decision: the words for each decider (the ledger export's `who` column and
    # the history window's counts), keyed by `DecidedBy` …
    ("store/ledger.py", "", "DecidedBy.USER"): 1,
    ("store/ledger.py", "", "DecidedBy.CLI"): 1,
    ("store/ledger.py", "", "DecidedBy.SESSION_RULE"): 1,
    ("store/ledger.py", "", "DecidedBy.WITHDRAWN"): 1,
    ("store/ledger.py", "", "DecidedBy.ERROR"): 1,
    # … and the look-up of those words for an error row.
    ("store/ledger.py", "who_decided", "DecidedBy.ERROR"): 1,
    # A copy whose update is not a literal: a transcript event, not a Decision.
    ("agents/transcript.py", "ToolCallPairing.pair", "model_copy(update=?)"): 1,
})
"""Every site outside the definitions that may construct an allowing decision or says
who decided (reading `decided_by` in a comparison is not listed)."""


def _is_allow_kind(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in ALLOW_KINDS
            and isinstance(node.value, ast.Name) and node.value.id == "DecisionKind")


class _Sites(ast.NodeVisitor):
    """Collects the sites of one module (see `PERSONS_ACTIONS`)."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.scope: list[str] = []
        self.found: Counter[Site] = Counter()
        self.compared: set[int] = set()
        """ids of nodes inside a comparison (reading who decided, not saying it)."""

    def _add(self, what: str) -> None:
        self.found[(self.module, ".".join(self.scope), what)] += 1

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Compare(self, node: ast.Compare) -> None:
        self.compared.update(id(child) for child in ast.walk(node))
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name in ("Decision", "DecidedBy") and alias.asname not in (None,
                                                                             alias.name):
                self._add(f"import {alias.name} as {alias.asname}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        value = node.value
        owner = value.id if isinstance(value, ast.Name) else None
        if node.attr in ALLOW_FACTORIES and owner != "self":
            self._add(f"{ast.unparse(value)}.{node.attr}")
        elif owner == "DecidedBy" and id(node) not in self.compared:
            self._add(f"DecidedBy.{node.attr}")
        elif owner == "Decision" and node.attr.startswith("model_"):
            self._add(f"Decision.{node.attr}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "Decision":
            self._add("Decision(...)")
        if isinstance(func, ast.Name) and func.id == "getattr" and any(
                isinstance(arg, ast.Constant) and arg.value in ALLOW_FACTORIES
                for arg in node.args):
            self._add("getattr(…, allow factory)")
        for keyword in node.keywords:
            if keyword.arg == "kind" and _is_allow_kind(keyword.value):
                self._add("kind=allow")
        if isinstance(func, ast.Attribute) and func.attr == "model_copy":
            for keyword in node.keywords:
                if keyword.arg != "update":
                    continue
                update = keyword.value
                if not isinstance(update, ast.Dict) or None in update.keys:
                    self._add("model_copy(update=?)")
                elif any(isinstance(key, ast.Constant) and key.value in DECIDING_FIELDS
                         for key in update.keys):
                    self._add("model_copy(update=kind/decided_by/final_input)")
        self.generic_visit(node)


def sites_in(module: str, source: str) -> Counter[Site]:
    """The sites of one module's source."""
    visitor = _Sites(module)
    visitor.visit(ast.parse(source, module))
    return visitor.found


def package_sites() -> Counter[Site]:
    """The sites of every module of the package but the definitions."""
    found: Counter[Site] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module not in DEFINITIONS:
            found.update(sites_in(module, path.read_text(encoding="utf-8")))
    return found


def test_only_a_persons_action_or_the_clis_record_constructs_an_allow() -> None:
    found = package_sites()
    new = found - PERSONS_ACTIONS
    gone = PERSONS_ACTIONS - found
    assert not new, ("a new site constructs an allowing Decision or says who decided; if "
                     "it is a person's own action, add it to PERSONS_ACTIONS with the "
                     f"reason: {sorted(new)}")
    assert not gone, f"listed sites that no longer exist (remove them): {sorted(gone)}"


@pytest.mark.parametrize("source, what", [
    ("def sneak(r):\n    return Decision.allow_once(dict(r.tool_input))\n",
     "Decision.allow_once"),
    ("def sneak(r):\n    return Decision(kind=DecisionKind.ALLOW_ONCE, final_input={})\n",
     "Decision(...)"),
    ("def sneak(d):\n    return d.model_copy(update={'kind': DecisionKind.ALLOW_ONCE})\n",
     "model_copy(update=kind/decided_by/final_input)"),
    ("def sneak(d, u):\n    return d.model_copy(update=u)\n", "model_copy(update=?)"),
    ("def sneak(d):\n    return d.model_copy(update={'decided_by': DecidedBy.USER})\n",
     "DecidedBy.USER"),
    ("def sneak(r):\n    return getattr(Decision, 'allow_session')\n",
     "getattr(…, allow factory)"),
    ("from qoder_desktop.domain.models import Decision as D\n", "import Decision as D"),
    ("def sneak(r, d):\n    return d.allow_once(r)\n", "d.allow_once"),
])
def test_the_walk_finds_a_planted_site(source: str, what: str) -> None:
    found = sites_in("approval/sneak.py", source)
    assert any(site[2] == what for site in found), found


def test_reading_who_decided_is_not_a_site() -> None:
    source = "def read(d):\n    return d.decided_by is DecidedBy.USER\n"
    assert sites_in("agents/reader.py", source) == Counter()


@pytest.mark.parametrize("by", [DecidedBy.SESSION_RULE, DecidedBy.ERROR, DecidedBy.WITHDRAWN])
def test_an_allow_by_anyone_but_a_person_or_the_cli_is_refused(by: DecidedBy) -> None:
    with pytest.raises(ValidationError, match="only a person or the agent's CLI allows"):
        Decision.allow_once({"command": "touch a"}, by=by, rule="Bash(touch a *)")
    with pytest.raises(ValidationError, match="only a person or the agent's CLI allows"):
        Decision(kind=DecisionKind.ALLOW_SESSION, final_input={}, decided_by=by)


def test_a_person_and_the_cli_allow_and_a_rule_may_deny() -> None:
    assert Decision.allow_once({"command": "ls"}).decided_by is DecidedBy.USER
    assert Decision.allow_once({"command": "ls"}, by=DecidedBy.CLI).kind.allows
    denied = Decision.deny("no", by=DecidedBy.SESSION_RULE, rule="Bash(rm *)")
    assert not denied.kind.allows and denied.decided_by is DecidedBy.SESSION_RULE
