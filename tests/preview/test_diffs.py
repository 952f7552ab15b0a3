"""Diffs for Write/Edit/MultiEdit against the file on disk, and the JSON edit diff."""

from __future__ import annotations

import os
import threading

import pytest

from qoder_desktop.preview.diffs import (
    MAX_DIFF_FILE_BYTES,
    DiffUnavailable,
    diff_for_tool,
    json_edit_diff,
    read_text_capped,
)


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "app.py"
    path.write_text("def main():\n    print('hello')\n    return 0\n")
    return path


def test_write_against_existing_file(source, tmp_path):
    diff = diff_for_tool("Write", {"file_path": str(source), "content": "print('bye')\n"},
                         None)
    assert diff.ok
    assert f"--- a{source}" in diff.text and f"+++ b{source}" in diff.text
    assert "-    print('hello')" in diff.text and "+print('bye')" in diff.text


def test_write_new_file_relative_to_cwd(tmp_path):
    diff = diff_for_tool("Write", {"file_path": "sub/new.txt", "content": "one\ntwo"},
                         str(tmp_path))
    assert diff.ok and diff.path == str(tmp_path / "sub" / "new.txt")
    assert diff.note.startswith("New file")
    assert "--- /dev/null" in diff.text and "+one" in diff.text
    assert "\\ No newline at end of file" in diff.text


def test_write_same_content(source):
    diff = diff_for_tool("Write", {"file_path": str(source), "content": source.read_text()},
                         None)
    assert diff.text == "" and "No changes" in diff.note


def test_edit_once(source):
    diff = diff_for_tool("Edit", {"file_path": "app.py", "old_string": "'hello'",
                                  "new_string": "'world'"}, str(source.parent))
    assert diff.ok
    assert "-    print('hello')" in diff.text and "+    print('world')" in diff.text


def test_edit_not_found_says_so(source):
    diff = diff_for_tool("Edit", {"file_path": str(source), "old_string": "nope",
                                  "new_string": "x"}, None)
    assert not diff.ok and "not found" in diff.note


def test_edit_ambiguous_and_replace_all(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("a\na\n")
    edit = {"file_path": str(path), "old_string": "a", "new_string": "b"}
    assert "occurs 2 times" in diff_for_tool("Edit", edit, None).note
    diff = diff_for_tool("Edit", {**edit, "replace_all": True}, None)
    assert diff.ok and diff.text.count("+b") == 2


def test_edit_missing_file(tmp_path):
    diff = diff_for_tool("Edit", {"file_path": str(tmp_path / "x"), "old_string": "a",
                                  "new_string": "b"}, None)
    assert not diff.ok and "does not exist" in diff.note


def test_multiedit_applies_in_order(source):
    edits = [{"old_string": "hello", "new_string": "one"},
             {"old_string": "one", "new_string": "two"}]
    diff = diff_for_tool("MultiEdit", {"file_path": str(source), "edits": edits}, None)
    assert diff.ok and "+    print('two')" in diff.text
    bad = [*edits, {"old_string": "missing", "new_string": "z"}]
    diff = diff_for_tool("MultiEdit", {"file_path": str(source), "edits": bad}, None)
    assert not diff.ok and "Edit 3 of 3" in diff.note


def test_other_tools_have_no_diff():
    assert diff_for_tool("Bash", {"command": "ls"}, None) is None


def test_bad_inputs_do_not_raise(tmp_path):
    assert not diff_for_tool("Write", {}, None).ok
    assert not diff_for_tool("Write", {"file_path": "rel.txt", "content": "x"}, None).ok
    assert not diff_for_tool("MultiEdit", {"file_path": str(tmp_path / "a"), "edits": [3]},
                             None).ok


def test_too_large(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * (MAX_DIFF_FILE_BYTES + 1))
    diff = diff_for_tool("Write", {"file_path": str(path), "content": "y"}, None)
    assert not diff.ok and "too large" in diff.note


def test_binary_and_directory(tmp_path):
    (tmp_path / "b.bin").write_bytes(b"\0\1\2")
    with pytest.raises(DiffUnavailable, match="binary"):
        read_text_capped(str(tmp_path / "b.bin"))
    with pytest.raises(DiffUnavailable, match="not a regular file"):
        read_text_capped(str(tmp_path))


def test_fifo_is_never_opened(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(
        diff_for_tool("Write", {"file_path": str(fifo), "content": "x"}, None)), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert "not a regular file" in result[0].note  # type: ignore[union-attr]
    with pytest.raises(OSError) as info:  # no reader ever opened it
        os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    assert info.value.errno == 6  # ENXIO


def test_device_is_not_read():
    assert not diff_for_tool("Write", {"file_path": "/dev/zero", "content": "x"}, None).ok


def test_json_edit_diff():
    text = json_edit_diff({"command": "rm -rf /"}, {"command": "rm -rf ./build"})
    assert '-  "command": "rm -rf /"' in text
    assert '+  "command": "rm -rf ./build"' in text
    assert json_edit_diff({"a": 1}, {"a": 1}) == ""


def test_json_edit_diff_shows_hidden_characters():
    assert "\\u202e" in json_edit_diff({"a": "x"}, {"a": "\u202ex"})
