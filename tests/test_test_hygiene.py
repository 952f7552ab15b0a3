"""The tests wait on what they mean, not on the clock.

A fixed sleep followed by "nothing happened" proves nothing on a slow machine (the thing
may simply not have happened yet) and slows every run on a fast one. The walk below
finds every fixed sleep in tests/ (`time.sleep(n)`, `asyncio.sleep(n)`, `anyio.sleep(n)`,
`qtbot.wait(n)`) that is not a poll (inside a `while` loop, or a `for` loop that breaks
or returns when its condition holds) and not a bare yield (`sleep(0)`, `sleep(math.inf)`).
Each one must be in `ALLOWED`, with the reason the time itself is what the test is
about; a new one fails this test until it waits on a signal or a state instead
(`helpers.loop.settle`, `helpers.loop.qt_turns`, `qtbot.waitUntil`, `qtbot.waitSignal`,
an `asyncio.Event`).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent

SLEEPS = frozenset({("time", "sleep"), ("asyncio", "sleep"), ("anyio", "sleep"),
                    ("trio", "sleep"), ("qtbot", "wait")})

Site = tuple[str, str]
"""(file under tests/, the enclosing function's dotted name)."""

ARMING = ("the approval dialog arms after a wall-clock delay by design (a press before it "
          "is ignored); the app runs in another process that shows no armed state")
NO_LATER_EVENT = ("a 'nothing more happens' check with no later event to wait on yet; "
                  "replace it once the code under test exposes one")

ALLOWED: dict[Site, tuple[int, str]] = {
    # (file, function): (how many fixed sleeps, why the time itself is the point)
    ("gateway/test_gateway.py",
     "test_an_idle_session_is_closed_but_a_pending_call_keeps_it_open"): (
        2, "the idle timeout is what is tested, and any probe of the session is activity "
           "that restarts its idle timer: the test must stay silent for longer than it"),
    ("ui/test_event_loop.py", "test_an_infinite_cancel_scope_deadline_is_no_error.main"): (
        2, "the subject is a timed sleep on the app's loop inside an infinite cancel scope "
           "(qasync once failed to schedule it); the sleep is the thing under test"),
    ("desktop/test_app_gateway.py", "_dialog"): (1, ARMING),
    ("desktop/test_app_hook_flood.py",
     "test_a_flood_of_idle_connections_leaves_the_app_answering_hooks"): (1, ARMING),
    ("desktop/test_desktop_check.py", "_key"): (1, ARMING),
    ("desktop/test_app_away.py", "_after_arming"): (1, ARMING),
    ("desktop/test_app_remote_host.py",
     "test_a_person_answers_a_remote_hosts_hook_through_the_apps_tunnel"): (1, ARMING),
    ("desktop/test_notifications_app.py",
     "test_the_demo_request_is_allowed_from_its_notification"): (1, ARMING),
    ("desktop/test_notifications_app.py",
     "test_a_process_that_takes_the_notification_service_over_cannot_allow_in_the_app"): (
        1, ARMING),
    ("desktop/test_desktop_check.py", "_screenshot"): (
        1, "no assertion follows: the screenshot is an artifact for a person, taken once a "
           "screen without a window manager has drawn"),
    ("packaging/test_bundle.py", "x_display"): (
        1, "the tray host (trayer) gives no ready signal; the bundle test only needs it up"),
    ("desktop/test_desktop_check.py", "test_demo_request_answered_by_real_key_presses"): (
        1, NO_LATER_EVENT + " (another process: nothing answers a request by itself)"),
    ("desktop/test_second_launch.py",
     "test_a_second_demo_goes_to_the_running_app_and_ctrl_q_asks_then_denies"): (
        1, NO_LATER_EVENT + " (another process: Cancel on the quit box keeps it running)"),
    ("desktop/test_second_launch.py", "test_two_demos_launched_at_once_make_one_app"): (
        1, NO_LATER_EVENT + " (another process: no second main window comes)"),
    ("e2e/test_transcript_lines.py", "test_interrupting_a_slow_model_turn_says_interrupted"): (
        1, "the interrupt must land while the real CLI streams the slow model turn (it has "
           "reached the model by then); the CLI shows no 'streaming' state to wait on"),
}


def _is_fixed_sleep(call: ast.Call) -> bool:
    function = call.func
    if not (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)):
        return False
    if (function.value.id, function.attr) not in SLEEPS or not call.args:
        return False
    argument = call.args[0]
    if isinstance(argument, ast.Constant) and argument.value == 0:
        return False  # a yield to the loop, not a wait
    return not (isinstance(argument, ast.Attribute) and argument.attr == "inf")


def _is_poll(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A `while` loop, or a `for` loop that stops when its condition holds."""
    if isinstance(loop, ast.While):
        return True
    return any(isinstance(node, ast.Break | ast.Return) for node in ast.walk(loop))


def fixed_sleeps(source: str, name: str) -> Counter[Site]:
    """Every fixed sleep in `source` (the file `name`) that is not a poll, by enclosing
    function."""
    found: Counter[Site] = Counter()

    def visit(node: ast.AST, scope: list[str], polling: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scope, polling = [*scope, node.name], False
        elif isinstance(node, ast.ClassDef):
            scope = [*scope, node.name]
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While) and _is_poll(node):
            polling = True
        if isinstance(node, ast.Call) and _is_fixed_sleep(node) and not polling:
            found[(name, ".".join(scope))] += 1
        for child in ast.iter_child_nodes(node):
            visit(child, scope, polling)

    visit(ast.parse(source), [], False)
    return found


def all_fixed_sleeps() -> Counter[Site]:
    """The fixed sleeps of the whole of tests/ (this file's own examples excluded)."""
    found: Counter[Site] = Counter()
    for path in sorted(TESTS.rglob("*.py")):
        if path != Path(__file__).resolve():
            found.update(fixed_sleeps(path.read_text(encoding="utf-8"),
                                      path.relative_to(TESTS).as_posix()))
    return found


def test_no_fixed_sleep_outside_the_allow_list() -> None:
    allowed = Counter({site: count for site, (count, _reason) in ALLOWED.items()})
    found = all_fixed_sleeps()
    new = found - allowed
    assert not new, (
        "a fixed sleep proves nothing on a slow machine; wait on a signal or a state "
        f"(helpers.loop.settle, qtbot.waitUntil/waitSignal) or add it to ALLOWED with "
        f"the reason: {sorted(new.items())}")
    gone = allowed - found
    assert not gone, f"these allowed sleeps are gone; drop them from ALLOWED: {sorted(gone)}"


def test_every_allowed_sleep_says_why() -> None:
    assert all(len(reason) > 30 for _count, reason in ALLOWED.values())


def test_the_walk_tells_a_wait_from_a_poll() -> None:
    """The walk itself can fail: a bare sleep is found, a poll and a yield are not."""
    sample = (
        "import asyncio, math, time\n"
        "async def test_bare(qtbot):\n"
        "    await asyncio.sleep(0.5)\n"
        "    qtbot.wait(100)\n"
        "    await asyncio.sleep(0)\n"
        "    await asyncio.sleep(math.inf)\n"
        "    while not done():\n"
        "        time.sleep(0.01)\n"
        "    for _ in range(10):\n"
        "        if done():\n"
        "            break\n"
        "        time.sleep(0.01)\n"
        "    for _ in range(3):\n"
        "        time.sleep(0.01)\n")
    assert fixed_sleeps(sample, "sample.py") == Counter({("sample.py", "test_bare"): 3})


ISSUE_CITATION = re.compile(r"\bissues? #?\d+|\(#\d+\)", re.IGNORECASE)


def test_no_code_or_test_cites_an_issue_number() -> None:
    """The tracker is not in the repo: a number tells a reader nothing; say the reason."""
    root = TESTS.parent
    cited = [f"{path.relative_to(root)}:{number}: {line.strip()}"
             for folder in ("qoder_desktop", "tests", "benchmarks", "tools", "docs")
             for path in sorted((root / folder).rglob("*"))
             if path.suffix in (".py", ".md", ".json", ".toml", ".qss")
             for number, line in enumerate(
                 path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if ISSUE_CITATION.search(line) and path != Path(__file__).resolve()]
    assert not cited, "say the reason instead of the issue number:\n" + "\n".join(cited)
