"""Fixtures of the rule tests: a folder tree with links inside and outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session folder with links inside, outside, in a loop, dangling, and via a link."""
    root = tmp_path_factory.mktemp("walk")
    work = root / "work"
    (work / "src" / "deep").mkdir(parents=True)
    (root / "outside" / "sub").mkdir(parents=True)
    (work / "file.txt").write_text("x")
    os.symlink(root / "outside", work / "out")
    os.symlink("src", work / "in")
    os.symlink("deep/../..", work / "src" / "up")
    os.symlink("loop2", work / "loop1")
    os.symlink("loop1", work / "loop2")
    os.symlink("missing", work / "dangling")
    os.symlink("file.txt", work / "filelink")
    os.symlink(work, root / "worklink")
    return root
