"""Is this path inside the workspace? `domain.workspace.is_inside`, on a real folder tree,
with fresh generated paths of each kind; and the parts that ask the question (trusted
workspaces, the risk lens, the matcher's path arguments) give its answer. (Notifications
ask it too: tests/ui/test_notification_offers.py.)"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qoder_desktop.config.settings import Settings
from qoder_desktop.domain.workspace import is_inside, path_forms, within
from qoder_desktop.rules.bash_paths import PathCheck
from qoder_desktop.shell.risk import RiskKind, analyze_command

_FIXTURES = settings(max_examples=150,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])

names = st.text(alphabet="abcxyz019-_.", min_size=1, max_size=8).filter(
    lambda n: n not in (".", ".."))
"""One path component (never `.` or `..`, never `app`), as an agent might write it."""
tails = st.lists(names, max_size=4).map(lambda parts: "/".join(parts))
"""Zero or more components below a folder."""
plain_tails = st.lists(st.text(alphabet="abcxyz019-_", min_size=1, max_size=8),
                       max_size=4).map(lambda parts: "/".join(parts))
"""Components no file rule finds sensitive (none starts with a dot)."""


class Tree:
    """A workspace `app` with its neighbours, built once for the module:

    base/app          the workspace (src/ inside it)
    base/app2         a sibling sharing its name as a prefix
    base/outside      a folder outside it
    base/app/link_out -> base/outside     a link inside that leads out
    base/outside/link_in -> base/app      a link outside that leads in
    base/alias -> base/app                another spelling of the workspace itself
    """

    def __init__(self, base: Path) -> None:
        self.base = str(base)
        self.app = str(base / "app")
        for folder in ("app/src", "app2", "outside"):
            (base / folder).mkdir(parents=True)
        (base / "app" / "link_out").symlink_to(base / "outside")
        (base / "outside" / "link_in").symlink_to(base / "app")
        (base / "alias").symlink_to(base / "app")

    def at(self, *parts: str) -> str:
        return "/".join([self.base, *[p for p in parts if p]])


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    yield Tree(tmp_path_factory.mktemp("workspace"))


# -- by category ------------------------------------------------------------------------


@_FIXTURES
@given(tail=tails)
def test_the_workspace_and_anything_below_it_are_inside(tree: Tree, tail: str) -> None:
    path = tree.at("app", tail)
    assert is_inside(path, [tree.app])
    assert is_inside(tail or ".", [tree.app], cwd=tree.app)  # relative to the folder


@_FIXTURES
@given(tail=tails, slashes=st.sampled_from(["/", "//", "/./"]), trailing=st.booleans())
def test_repeated_slashes_dots_and_trailing_slashes_change_nothing(
        tree: Tree, tail: str, slashes: str, trailing: bool) -> None:
    path = tree.app + slashes + tail + ("/" if trailing else "")
    assert is_inside(path, [tree.app + "/"])
    assert is_inside(path, [tree.app])


@_FIXTURES
@given(inner=names, tail=tails)
def test_dot_dot_that_stays_inside_is_inside_and_one_that_climbs_out_is_not(
        tree: Tree, inner: str, tail: str) -> None:
    assert is_inside(tree.at("app", inner, "..", tail), [tree.app])
    assert not is_inside(tree.at("app", "..", "outside", tail), [tree.app])
    assert not is_inside(tree.at("app", "src", "..", "..", "outside", tail), [tree.app])


@_FIXTURES
@given(suffix=names, tail=tails)
def test_a_sibling_sharing_the_name_as_a_prefix_is_outside(
        tree: Tree, suffix: str, tail: str) -> None:
    assert not is_inside(tree.at("app2", tail), [tree.app])
    assert not is_inside(tree.at("app" + suffix, tail), [tree.app])


@_FIXTURES
@given(tail=tails)
def test_a_link_that_leads_out_is_outside_and_so_is_dot_dot_after_it(
        tree: Tree, tail: str) -> None:
    assert not is_inside(tree.at("app", "link_out", tail), [tree.app])
    assert not is_inside(f"link_out/{tail}", [tree.app], cwd=tree.app)
    # `..` after a link climbs from the link's target, not from the folder the link is
    # in: written, this is below app; really, it is next to it
    assert not is_inside(tree.at("app", "link_out", "..", tail), [tree.app])
    assert not is_inside(f"link_out/../{tail}", [tree.app], cwd=tree.app)


@_FIXTURES
@given(tail=tails)
def test_a_path_written_outside_is_outside_although_a_link_leads_it_in(
        tree: Tree, tail: str) -> None:
    assert not is_inside(tree.at("outside", "link_in", tail), [tree.app])


@_FIXTURES
@given(tail=tails)
def test_a_workspace_named_through_a_link_holds_both_spellings(tree: Tree, tail: str) -> None:
    alias = tree.at("alias")
    assert is_inside(tree.at("alias", tail), [alias])
    assert is_inside(tree.at("app", tail), [alias])
    assert is_inside(tree.at("alias", tail), [tree.app]) is False  # written outside app


@_FIXTURES
@given(tail=tails)
def test_case_is_compared_as_the_platform_compares_file_names(tree: Tree, tail: str) -> None:
    shouted = tree.at("APP", tail)
    folds = os.path.normcase("A") == os.path.normcase("a")
    assert is_inside(shouted, [tree.app]) is folds


@pytest.mark.parametrize("path", [None, 3, "", "a\x00b", "relative/without/a/folder"])
def test_anything_unusable_is_outside(tree: Tree, path: object) -> None:
    assert not is_inside(path, [tree.app])


def test_unusable_roots_hold_nothing(tree: Tree) -> None:
    assert not is_inside(tree.app, [None, "", "app", "x\x00"])
    assert is_inside(tree.app, [None, "", tree.app])


def test_within_compares_whole_components() -> None:
    assert within("/work/app", "/work/app") and within("/work/app/x", "/work/app/")
    assert not within("/work/app2", "/work/app") and within("/work", "/")


@_FIXTURES
@given(first=st.sampled_from(["src", "link_out", "missing", "src/../link_out"]), tail=tails,
       cwd=st.sampled_from(["app", "alias", "outside/link_in"]))
def test_resolving_from_the_folders_real_path_finds_what_realpath_finds(
        tree: Tree, first: str, tail: str, cwd: str) -> None:
    folder = tree.at(cwd)
    relative = "/".join(p for p in (first, tail) if p)
    assert path_forms(relative, folder, os.path.realpath(folder)) == \
        path_forms(relative, folder)


# -- every part that asks gives the same answer ------------------------------------------


@_FIXTURES
@given(where=st.sampled_from(["app", "app2", "outside", "app/link_out", "outside/link_in",
                              "app/link_out/..", "app/src/.."]),
       tail=plain_tails)
def test_trust_the_risk_lens_and_the_matcher_agree_with_is_inside(
        tree: Tree, where: str, tail: str) -> None:
    path = tree.at(where, tail)
    inside = is_inside(path, [tree.app])
    assert Settings(trusted_workspaces=[tree.app]).is_trusted(path) is inside
    flagged = {f.kind for f in analyze_command(f"cat {path}", tree.app)}
    assert (RiskKind.OUTSIDE_WORKSPACE not in flagged) is inside
    if ".." not in where:  # the matcher models the CLI, which collapses `..` first
        reason = PathCheck(tree.app, []).argument(path)
        assert (reason is None) is inside, reason
