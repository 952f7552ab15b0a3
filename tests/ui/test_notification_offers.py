"""What a request's desktop notification offers and says (no service needed)."""

from __future__ import annotations

from pathlib import Path

from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.ui.notifications import ALLOW_LIMIT, actions_for, note_for


def _bash(command: str, **extra: object) -> ApprovalRequest:
    return ApprovalRequest(session_id="s0", session_name="slow", backend=Backend.CLAUDE,
                           tool_name="Bash", tool_input={"command": command, **extra},
                           cwd="/tmp")


def test_allow_once_is_offered_only_when_the_notification_shows_the_whole_request() -> None:
    def offers_allow(request: ApprovalRequest) -> bool:
        return any(action.key == "allow" for action in actions_for(request))

    assert offers_allow(_bash("ls -la", description="List the files"))
    assert not offers_allow(_bash("ls\u202e -la"))  # a hidden character
    assert not offers_allow(_bash("ls  -la"))  # two spaces: the one-line body would hide one
    assert not offers_allow(_bash("ls\nrm -rf ~"))  # a second line
    assert offers_allow(_bash("x" * ALLOW_LIMIT))
    assert not offers_allow(_bash("x" * (ALLOW_LIMIT + 1)))  # more than a notification shows
    assert not offers_allow(_bash("ls", timeout=5))  # a second input value
    write = ApprovalRequest(session_id="s0", backend=Backend.CLAUDE, tool_name="Write",
                            tool_input={"file_path": "/tmp/a", "content": "hi"})
    assert not offers_allow(write)
    hidden_name = _bash("ls").model_copy(update={"session_name": "slo\u200bw"})
    assert not offers_allow(hidden_name)
    # the CLI names the file a command writes: fine inside the session's folder (cwd /tmp)
    assert offers_allow(_bash("echo hi > a.txt").model_copy(
        update={"blocked_path": "/tmp/a.txt"}))
    assert not offers_allow(_bash("echo hi > ../etc/a").model_copy(
        update={"blocked_path": "/etc/a"}))
    assert not offers_allow(_bash("echo hi > /tmp/../etc/a").model_copy(
        update={"blocked_path": "/tmp/../etc/a"}))
    # a request cut short shows its start, and offers no Allow
    long = note_for(_bash("echo " + "y" * 300))
    assert long.body.startswith("echo yyy") and long.body.endswith("…")
    assert [action.key for action in long.actions] == ["deny", "open"]


def test_a_blocked_path_through_a_link_out_of_the_folder_needs_the_dialog(
        tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "work" / "link_out").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "work2").mkdir()

    def offers_allow(blocked: Path) -> bool:
        request = _bash("echo hi > x").model_copy(update={"cwd": str(tmp_path / "work"),
                                                          "blocked_path": str(blocked)})
        return any(action.key == "allow" for action in actions_for(request))

    assert offers_allow(tmp_path / "work" / "x.txt")
    assert not offers_allow(tmp_path / "work" / "link_out" / "x.txt")  # really elsewhere
    assert not offers_allow(tmp_path / "work2" / "x.txt")  # a sibling sharing the prefix


def test_a_request_a_new_rule_covers_keeps_its_whole_value_first_then_says_who_decides() -> None:
    marked = _bash("touch a").model_copy(update={"covered_by_rule": "Bash(touch a *)",
                                                 "granted_while_waiting": True})
    note = note_for(marked)
    first, second = note.body.split("\n")
    assert first == "touch a"  # the whole value, as it runs
    assert second.startswith("Covered by your new rule Bash(touch a *), but the agent asked "
                             "before it held that rule")
    assert [action.key for action in note.actions] == ["allow", "deny", "open"]
    escalated = marked.model_copy(update={"granted_while_waiting": False})
    assert note_for(escalated).body == "touch a"  # (the dialog explains that case)
