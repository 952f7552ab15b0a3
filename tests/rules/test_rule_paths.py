"""Tests for path and domain specifiers (`rule_paths`) through `rules.evaluate`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.rules.matcher import evaluate
from qoder_desktop.rules.paths import escape_path, path_rule_matches

ALLOW, DENY = RuleBehavior.ALLOW, RuleBehavior.DENY


def rule(text: str, behavior: RuleBehavior = ALLOW) -> SessionRule:
    """A session rule from its text."""
    return SessionRule(session_id="s1", behavior=behavior, rule=RuleValue.parse(text))


def decide(rules: list[SessionRule], tool: str, tool_input: dict[str, Any],
           cwd: Path | str) -> RuleBehavior | None:
    """The behaviour the rules give the call, or None."""
    verdict = evaluate(rules, tool, tool_input, str(cwd))
    return None if verdict is None else verdict.behavior


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A working folder with src/, a secret folder and symlinks in and out of src."""
    cwd = tmp_path / "project"
    (cwd / "src" / "a").mkdir(parents=True)
    (cwd / "src" / "a" / "b.py").write_text("x")
    (cwd / "secret").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("x")
    os.symlink(outside, cwd / "src" / "link")
    os.symlink(outside / "evil.py", cwd / "src" / "evil_file.py")
    os.symlink(cwd / "secret", cwd / "to_secret")
    return cwd


# -- Edit(./src/**) ----------------------------------------------------------------------

@pytest.mark.parametrize(("path", "expected"), [
    ("src/a/b.py", ALLOW),
    ("./src/new.py", ALLOW),
    ("{cwd}/src/a/b.py", ALLOW),
    ("src/a/../a/b.py", ALLOW),
    ("src/../../etc/passwd", None),
    ("src/../secret/x", None),
    ("src/link/evil.py", None),
    ("src/evil_file.py", None),
    ("srcx/a.py", None),
    ("src", None),
    ("/etc/passwd", None),
    ("", None),
])
def test_edit_src_rule(project: Path, path: str, expected: RuleBehavior | None) -> None:
    file_path = path.replace("{cwd}", str(project))
    for tool in ("Edit", "Write", "MultiEdit"):
        assert decide([rule("Edit(./src/**)")], tool, {"file_path": file_path},
                      project) is expected


def test_edit_rule_covers_notebooks(project: Path) -> None:
    assert decide([rule("Edit(./src/**)")], "NotebookEdit",
                  {"notebook_path": "src/n.ipynb"}, project) is ALLOW
    assert decide([rule("Edit(./src/**)")], "NotebookEdit",
                  {"file_path": "src/n.ipynb"}, project) is None


@pytest.mark.parametrize("value", [None, 3, ["src/a.py"], "src/\x00x"])
def test_missing_or_odd_path_is_never_allowed(project: Path, value: Any) -> None:
    tool_input = {} if value is None else {"file_path": value}
    assert decide([rule("Edit(./src/**)")], "Edit", tool_input, project) is None
    assert decide([rule("Edit(./src/**)", DENY)], "Edit", tool_input, project) is DENY


def test_write_rule_never_allows(project: Path) -> None:
    # The CLI checks every edit tool against Edit rules: a Write(...) grant still asks.
    assert decide([rule("Write(./src/**)")], "Write", {"file_path": "src/x"}, project) is None
    assert decide([rule("Write(./src/**)")], "Edit", {"file_path": "src/x"}, project) is None
    assert decide([rule("Write(./src/**)", DENY)], "Edit", {"file_path": "src/x"},
                  project) is DENY


def test_star_is_a_pattern_for_path_allow_but_whole_tool_for_deny(project: Path) -> None:
    assert decide([rule("Edit(*)")], "Edit", {"file_path": "src/a/b.py"}, project) is ALLOW
    assert decide([rule("Edit(*)")], "Edit", {"file_path": "/etc/passwd"}, project) is None
    assert decide([rule("Edit"), rule("Edit(*)", DENY)], "Write", {"file_path": "/etc/x"},
                  project) is DENY


def test_deny_follows_symlinks_both_ways(project: Path) -> None:
    deny_real = [rule("Edit(./**)"), rule("Edit(./secret/**)", DENY)]
    assert decide(deny_real, "Edit", {"file_path": "to_secret/k"}, project) is DENY
    deny_link = [rule("Edit(./**)"), rule("Edit(./to_secret/**)", DENY)]
    assert decide(deny_link, "Edit", {"file_path": "secret/k"}, project) is DENY
    assert decide(deny_link, "Edit", {"file_path": "src/a/b.py"}, project) is ALLOW


def test_deny_beats_allow_for_paths(project: Path) -> None:
    rules = [rule("Edit(./src/**)"), rule("Edit(./src/a/**)", DENY)]
    assert decide(rules, "Edit", {"file_path": "src/a/b.py"}, project) is DENY
    assert decide(rules, "Edit", {"file_path": "src/c.py"}, project) is ALLOW


# -- the four path forms -------------------------------------------------------------------

def test_absolute_form(project: Path) -> None:
    rules = [rule("Read(//etc/hosts)")]
    assert decide(rules, "Read", {"file_path": "/etc/hosts"}, project) is ALLOW
    assert decide(rules, "Read", {"file_path": "/etc/hostsx"}, project) is None
    assert decide(rules, "Edit", {"file_path": "/etc/hosts"}, project) is None


def test_home_form(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "x").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    rules = [rule("Read(~/x)")]
    assert decide(rules, "Read", {"file_path": str(home / "x")}, project) is ALLOW
    assert decide(rules, "Read", {"file_path": str(home / "x" / "y.txt")}, project) is ALLOW
    assert decide(rules, "Read", {"file_path": str(home / "xy")}, project) is None
    assert decide(rules, "Read", {"file_path": "x"}, project) is None


def test_root_relative_form_uses_the_working_folder(project: Path) -> None:
    rules = [rule("Edit(/src/*.py)")]
    assert decide(rules, "Edit", {"file_path": "src/c.py"}, project) is ALLOW
    assert decide(rules, "Edit", {"file_path": "src/a/b.py"}, project) is None
    assert decide(rules, "Edit", {"file_path": "/src/c.py"}, project) is None


@pytest.mark.parametrize(("spec", "path", "expected"), [
    ("*.env", ".env", True),
    ("*.env", "a/b/prod.env", True),
    ("./.env", ".env", True),
    ("./.env", "a/.env", False),
    ("secret", "secret/deep/k", True),
    ("secret", "a/secret/k", True),
    ("src/**/*.py", "src/a/b.py", True),
    ("src/**/*.py", "src/b.py", True),
    ("src/**/*.py", "src/a/b.txt", False),
    ("src/*", "src/a/b.py", True),
    ("src/?.py", "src/c.py", True),
    ("src/?.py", "src/cc.py", False),
    ("src/[ab].py", "src/a.py", True),
    ("src/[!ab].py", "src/a.py", False),
    ("build/", "build/x.o", True),
    ("./a\\*b", "a*b", True),
    ("./a\\*b", "axb", False),
    ("!src/**", "src/a.py", False),
    ("src/*/../x", "src/a/../x", False),
    ("**", "anything/at/all", True),
])
def test_gitignore_patterns(project: Path, spec: str, path: str, expected: bool) -> None:
    assert path_rule_matches(spec, path, str(project)) is expected


def test_escape_path_round_trips(project: Path) -> None:
    weird = str(project / "a*b[1]?.txt")
    assert path_rule_matches("/" + escape_path(weird), weird, str(project))
    assert not path_rule_matches("/" + escape_path(weird), str(project / "aXb1Z.txt"),
                                 str(project))


# -- search tools (best effort for Read rules) ---------------------------------------------

@pytest.mark.parametrize(("tool", "tool_input", "expected"), [
    ("Grep", {"pattern": "x", "path": "src"}, ALLOW),
    ("Grep", {"pattern": "x", "path": "src/a/b.py"}, ALLOW),
    ("Grep", {"pattern": "x", "path": "."}, None),
    ("Grep", {"pattern": "x"}, None),
    ("LS", {"path": "{cwd}/src/a"}, ALLOW),
    ("Glob", {"pattern": "**/*.py", "path": "src"}, ALLOW),
    ("Glob", {"pattern": "../**", "path": "src"}, None),
    ("Glob", {"pattern": "/etc/*", "path": "src"}, None),
    ("Glob", {"pattern": "{..,x}/secret/*", "path": "src"}, None),
    ("Glob", {"pattern": "~/x", "path": "src"}, None),
    ("Glob", {"pattern": "**/*.py"}, None),
])
def test_read_rule_on_search_tools(project: Path, tool: str, tool_input: dict[str, Any],
                                   expected: RuleBehavior | None) -> None:
    data = {k: v.replace("{cwd}", str(project)) for k, v in tool_input.items()}
    assert decide([rule("Read(./src/**)")], tool, data, project) is expected


def test_deny_read_rule_on_search_tools(project: Path) -> None:
    rules = [rule("Read(./**)"), rule("Read(./secret)", DENY)]
    assert decide(rules, "Grep", {"pattern": "x", "path": "secret"}, project) is DENY
    assert decide(rules, "Grep", {"pattern": "x", "path": "src"}, project) is ALLOW
    everything = [rule("Grep"), rule("Read(./)", DENY)]
    assert decide(everything, "Grep", {"pattern": "x"}, project) is DENY


# -- WebFetch(domain:...) ----------------------------------------------------------------

@pytest.mark.parametrize(("url", "expected"), [
    ("https://example.com/docs", ALLOW),
    ("http://EXAMPLE.com:8080/x", ALLOW),
    ("https://example.com./x", ALLOW),
    ("https://www.example.com/", None),
    ("https://example.com.evil.com/", None),
    ("https://evilexample.com/", None),
    ("https://example.com@evil.com/", None),
    ("https://evil.com\\@example.com/", None),
    ("https://user@example.com/", None),
    ("https://exa mple.com/", None),
    ("https://exa%6dple.com/", None),
    ("https://example.com:99999/", None),
    ("ftp://example.com/", None),
    ("example.com", None),
    ("not a url", None),
    ("", None),
    (None, None),
])
def test_webfetch_domain_allow(url: Any, expected: RuleBehavior | None) -> None:
    tool_input = {"url": url, "prompt": "x"}
    assert decide([rule("WebFetch(domain:example.com)")], "WebFetch", tool_input,
                  "/") is expected


@pytest.mark.parametrize(("spec", "url", "allow", "deny"), [
    ("*.example.com", "https://api.example.com/", True, True),
    ("*.example.com", "https://a.b.example.com/", True, True),
    ("*.example.com", "https://example.com/", False, True),
    ("*.example.com", "https://badexample.com/", False, False),
    ("*", "https://anything.org/", True, True),
    ("*", "not a url", False, True),
    ("evil.com", "https://evil.com\\@example.com/", False, True),
    ("evil.com", "https://example.com@evil.com/", False, True),
    ("evil.com", "https://EVIL.com./", True, True),
])
def test_webfetch_domain_forms(spec: str, url: str, allow: bool, deny: bool) -> None:
    text = f"WebFetch(domain:{spec})"
    allowed = decide([rule(text)], "WebFetch", {"url": url}, "/")
    denied = decide([rule("WebFetch"), rule(text, DENY)], "WebFetch", {"url": url}, "/")
    assert (allowed is ALLOW) is allow
    assert (denied is DENY) is deny


def test_webfetch_other_specifiers_never_match() -> None:
    assert decide([rule("WebFetch(example.com)")], "WebFetch",
                  {"url": "https://example.com/"}, "/") is None
    assert decide([rule("WebFetch(url:https://example.com/)")], "WebFetch",
                  {"url": "https://example.com/"}, "/") is None
