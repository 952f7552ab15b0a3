"""The real Claude Code CLI: a plan approved "and accept edits" goes on in that mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.claude_harness import Harness

from qoder_desktop.domain.consent_mint import mint_consent
from qoder_desktop.domain.models import PLAN_TOOL, Decision, PermissionMode
from qoder_desktop.scripted_model.scenario import ScenarioLibrary, parse_scenario
from qoder_desktop.scripted_model.server import ThreadedScriptedModel

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio]

PLAN_THEN_EDIT = """{
  "name": "plan_then_edit",
  "description": "Plan, then write a file in the workspace once the plan is approved.",
  "steps": [
    {"text": "This needs a plan first.", "tool": "EnterPlanMode", "input": {}},
    {"text": "Here is my plan.", "tool": "Write",
     "input": {"file_path": "{plan_file}", "content": "# Plan\\n\\n1. Write greeting.py\\n"}},
    {"text": "The plan is ready.", "tool": "ExitPlanMode", "input": {}},
    {"text": "Writing it.", "tool": "Write",
     "input": {"file_path": "{cwd}/greeting.py", "content": "print('hi')\\n"}}
  ],
  "closing_text": "Done."
}"""


@pytest.fixture(scope="module")
def scripted_model() -> Iterator[ThreadedScriptedModel]:
    """The shipped scenarios plus `plan_then_edit`."""
    library = ScenarioLibrary([parse_scenario(PLAN_THEN_EDIT, source="plan_then_edit.json")])
    with ThreadedScriptedModel(library) as model:
        yield model


@pytest.mark.parametrize("mode", [PermissionMode.ACCEPT_EDITS, PermissionMode.DEFAULT])
async def test_the_mode_chosen_with_the_plan_decides_whether_the_next_edit_asks(
        harness: Harness, mode: PermissionMode) -> None:
    session_id = await harness.start("plan_then_edit")
    request = await harness.next_request()
    assert request.tool_name == PLAN_TOOL
    # acceptEdits goes with the consent the plan dialog's confirmation box mints (the
    # dialog side is proven in tests/ui/test_plan_dialog.py)
    consent = mint_consent(session_id, mode) if mode.needs_confirmation else None
    harness.broker.answer(request.request_id, Decision.allow_once(
        dict(request.tool_input), next_mode=mode, consent=consent))
    if mode is PermissionMode.DEFAULT:
        write = await harness.next_request()
        assert write.tool_name == "Write"
        harness.broker.answer(write.request_id, Decision.allow_once(dict(write.tool_input)))
    await harness.wait_idle()
    assert (harness.workspace / "greeting.py").read_text() == "print('hi')\n"
    assert harness.requests.empty(), "accept edits: the CLI wrote without asking again"
    assert harness.hub.session(session_id).permission_mode is mode
