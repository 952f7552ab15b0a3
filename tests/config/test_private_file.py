"""A private file is written whole, readable by its owner only, and never left half-done."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from qoder_desktop.config.private_file import write_private


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """A umask that lets everyone read new files, as a careless shell might set."""
    previous = os.umask(0o000)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_whole_text_lands_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    """A reader finds every character written, and the folder holds the file alone."""
    target = tmp_path / "settings.json"
    text = '{"hosts": [' + ", ".join(f'"host-{n}"' for n in range(5000)) + "]}\n"

    write_private(target, text)

    assert target.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_the_file_and_a_new_folder_are_owner_only_even_under_a_permissive_umask(
    tmp_path: Path, permissive_umask: None
) -> None:
    """Nobody but the owner may read what is written, whatever the umask allows."""
    target = tmp_path / "made" / "token.json"

    write_private(target, "secret-free but private")

    assert _mode(target) == 0o600
    assert _mode(target.parent) == 0o700


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_an_existing_file_is_replaced_atomically_and_becomes_private(
    tmp_path: Path, permissive_umask: None
) -> None:
    """A reader that opened the old file still reads all of it; a new reader reads the new."""
    target = tmp_path / "settings.json"
    target.write_text("old settings\n", encoding="utf-8")
    target.chmod(0o644)

    with target.open(encoding="utf-8") as old_reader:
        write_private(target, "new settings\n")
        assert old_reader.read() == "old settings\n"

    assert target.read_text(encoding="utf-8") == "new settings\n"
    assert _mode(target) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_failed_write_keeps_the_old_content_and_leaves_no_temporary_file(
    tmp_path: Path,
) -> None:
    """Text that cannot be encoded fails the write; the old file is untouched and alone."""
    target = tmp_path / "settings.json"
    target.write_text("old settings\n", encoding="utf-8")

    with pytest.raises(UnicodeEncodeError):
        write_private(target, "half written \ud800 never lands")

    assert target.read_text(encoding="utf-8") == "old settings\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
