"""Generated rule-matcher cases, and `explain`'s answer to each (for the frozen record).

`cases(root)` builds the same calls every time (a fixed seed) against a folder tree made
by `make_tree(root)`: links inside and outside the session folder, a link to `.git`, a
linked session folder, a missing one. `answers(root)` gives, per case, the behaviour,
the reason (with `root` and `HOME` written as `ROOT` and `HOME`) and the ids of the
deciding rules, from `explain` and from `evaluate`. `tests/rules/data/explain_answers.jsonl`
holds what the matcher answered before it was made faster; run this module
(`python -m tests.rules.explain_cases FILE`) with that code to make the file again.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from qoder_desktop.domain.models import RuleBehavior, RuleValue, SessionRule
from qoder_desktop.rules import matcher

CASES = 2500
_RULES = [
    "Bash(git diff *)", "Bash(git status)", "Bash(npm test)", "Bash(npm run lint:*)",
    "Bash(ls*)", "Bash(rm -rf *)", "Bash(touch f.txt)", "Bash(cat *)", "Bash(cd *)",
    "Bash(echo hello)", "Bash(sudo ls)", "Bash(bash -c *)", "Bash(git *)", "Bash(*)", "Bash",
    "Bash(rm:*)", "Bash(git diff src/a.py)", "Bash(git push *)", "Bash(*.py)",
    "Bash(git diff  src/a.py)", "Bash(env *)", "Read(./src/**)", "Edit(./src/**)", "Read",
    "WebFetch(domain:github.com)", "mcp__github", "Glob", "Bash(xargs rm *)",
    "Bash(cd src && ls)",
]
_BROAD = ["Bash(git *)", "Bash(cat *)", "Bash(ls*)", "Bash(cd *)", "Bash(rm:*)",
          "Bash(touch *)", "Bash(echo *)"]
_HEADS = [
    "git diff", "git status", "rm -rf", "rm", "ls", "ls -la", "cat", "touch", "cd", "npm test",
    "npm run lint", "sudo rm", "bash -c", "/bin/rm", "env X=1 rm", "echo", "xargs rm",
    "X=1 git diff", "git push", "git  diff", "'git' diff", "lsof", "timeout 5 rm", "eval",
    "sh -c 'rm -rf x'",
]
_ARGS = [
    "src/a.py", "src/file-N.py", "src", "/etc/passwd", "etclink/x", "../out", "~/x",
    ".git/config", "gitlink/HEAD", ".bashrc", "-la", "--out=/etc/x", "src/outlink/y",
    "src/deep/../a.py", "'a b'", '"q"', "$HOME", "$(id)", "x > y", "*.py", "-C /tmp",
    "src/./a.py", "src/a.py", "src/deep", "src/deep/b-N.txt", "x-N", "out-N/y",
    "https://x.org/a", "f.txt", "~", "~root/x", "-", "src//a.py", "\u200bhidden", "a\tb",
    "src/.env", "../" * 12 + "etc", "src/a.py/x", "dangling", "src/deep/", "./src",
]
_SEPARATORS = [" && ", "; ", " | ", " || ", " & ", "\n"]


def make_tree(root: Path) -> None:
    """The folders and links the cases name (below `root`)."""
    project = root / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".git").mkdir()
    (root / "out").mkdir()
    (root / "extra" / "x").mkdir(parents=True)
    (project / "src" / "a.py").write_text("")
    (project / ".bashrc").write_text("")
    os.symlink("/etc", project / "etclink")
    os.symlink(root / "out", project / "src" / "outlink")
    os.symlink(project, root / "plink")
    os.symlink(project / ".git", project / "gitlink")
    os.symlink("nothing-here", project / "dangling")


def _command(rng: random.Random) -> str:
    parts = []
    for _ in range(1 + (rng.random() < 0.25) + (rng.random() < 0.1)):
        words = [rng.choice(_HEADS)] + [rng.choice(_ARGS).replace("N", str(rng.randrange(50)))
                                        for _ in range(rng.randrange(4))]
        parts.append(" ".join(words))
    text = parts[0]
    for part in parts[1:]:
        text += rng.choice(_SEPARATORS) + part
    if rng.random() < 0.05:
        text = "  " + text + " "
    return text


def cases(root: Path) -> Iterator[tuple[list[SessionRule], str, dict[str, Any], str,
                                        tuple[str, ...]]]:
    """(rules, tool, input, cwd, add_dirs) of every case, the same ones on every run."""
    rng = random.Random(15)
    folders = [root / "project", root / "plink", root / "project" / "src",
               root / "nowhere", Path("/")]
    cwds = [str(f) for f in folders] + [f"{root}/project/"]
    for _ in range(CASES):
        rules: list[SessionRule] = []

        def add(text: str, behavior: RuleBehavior, rules: list[SessionRule] = rules) -> None:
            rules.append(SessionRule(rule_id=f"r{len(rules)}", session_id="s",
                                     behavior=behavior, rule=RuleValue.parse(text)))

        for text in rng.sample(_RULES, rng.randrange(1, 7)):
            add(text, rng.choices([RuleBehavior.ALLOW, RuleBehavior.DENY, RuleBehavior.ASK],
                                  [8, 1, 1])[0])
        if rng.random() < 0.5:
            for text in _BROAD:
                add(text, RuleBehavior.ALLOW)
        pick = rng.random()
        if pick < 0.85:
            tool, data = "Bash", {"command": _command(rng)}
            if rng.random() < 0.03:
                data["dangerouslyDisableSandbox"] = True
        elif pick < 0.92:
            tool, data = rng.choice(["Read", "Edit", "Write"]), {"file_path": rng.choice(_ARGS)}
        else:
            tool = rng.choice(["WebFetch", "mcp__github__x", "Glob", "Grep"])
            data = {"url": "https://github.com/x", "path": rng.choice(_ARGS), "pattern": "*.py"}
        cwd = rng.choice(cwds) if rng.random() < 0.3 else cwds[0]
        added = tuple(rng.sample([f"{root}/extra", f"{root}/out", "/tmp"], rng.randrange(0, 2)))
        yield rules, tool, data, cwd, added


def answers(root: Path) -> Iterator[str]:
    """One JSON line per case: explain's behaviour, reason and rule ids, evaluate's ids."""
    home = os.path.expanduser("~")
    for rules, tool, data, cwd, added in cases(root):
        explained = matcher.explain(rules, tool, data, cwd, added)
        verdict = matcher.evaluate(rules, tool, data, cwd, added)
        reason = explained.reason.replace(str(root), "ROOT").replace(home, "HOME")
        ids = None if explained.verdict is None else [r.rule_id for r in explained.verdict.rules]
        evaluated = None if verdict is None else [verdict.behavior.value,
                                                  [r.rule_id for r in verdict.rules]]
        yield json.dumps([explained.behavior.value, reason, ids, evaluated], ensure_ascii=False)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder).resolve()
        make_tree(tree)
        Path(sys.argv[1]).write_text("".join(line + "\n" for line in answers(tree)),
                                     encoding="utf-8")
