"""Generated differential cases: (rule, call) pairs by category, from a fixed seed.

Each category is a set of rule sets and a pool of call templates; a seeded
``random.Random`` picks which calls each rule set meets, and fills the templates'
``{P}`` (the program a rule names), ``{a}``/``{b}`` (file names) and ``{f}`` (a file
under the workspace). Two splits exist:

- ``tune``: the cases the matcher was improved against;
- ``holdout``: another seed, another vocabulary (the two-word ``rm -f`` instead of
  ``touch``, other file names) and three categories of its own (``combined``: the other
  categories' traits in one call; ``add-dirs``: a session with an added directory;
  ``deny-spelling``: a Bash deny rule against spellings, wrappers and nesting),
  measured the same way but never looked at while the model of the CLI
  (``qoder_desktop.rules.cli_model``) was written; its agreement shows whether that
  model generalises. (Five earlier held-out splits, ``mkdir``, ``mkfifo``, ``git add``,
  ``chmod 644`` and ``cp -n``, were looked at after their blind measurement and so were
  retired.)

The output is deterministic: the same split always yields the same cases in the same
order (``cli_verdicts.json`` records them by id).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .cases import Case

SEEDS = {"tune": 20261202, "holdout": 6006}
VOCAB: dict[str, dict[str, str]] = {
    "tune": {"P": "touch", "a": "a", "b": "b", "f": "src/gen.txt", "n": "notes"},
    "holdout": {"P": "rm -f", "a": "k1", "b": "k2", "f": "src/k3", "n": "memo6"},
}
CONTENT = "differential\n"


@dataclass(frozen=True)
class Pool:
    """``sets`` of the rule sets, each meeting ``take`` calls drawn from ``calls``."""

    category: str
    rule_sets: Sequence[tuple[tuple[str, ...], ...]]  # (allow, deny[, add_dirs])
    calls: Sequence[tuple[str, dict[str, Any]]]
    take: int
    sets: int = 2
    splits: tuple[str, ...] = ("tune", "holdout")


def _bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("Bash", {"command": command})


def _read(path: str) -> tuple[str, dict[str, Any]]:
    return ("Read", {"file_path": path})


def _write(path: str) -> tuple[str, dict[str, Any]]:
    return ("Write", {"file_path": path, "content": CONTENT})


def _edit(path: str) -> tuple[str, dict[str, Any]]:
    return ("Edit", {"file_path": path, "old_string": "", "new_string": CONTENT})


def _fetch(url: str) -> tuple[str, dict[str, Any]]:
    return ("WebFetch", {"url": url, "prompt": "Summarise."})


def _mcp(tool: str) -> tuple[str, dict[str, Any]]:
    return (tool, {"name": "todo"})


def _allow(*rules: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (tuple(rules), ())


def _deny(allow: Sequence[str], deny: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (tuple(allow), tuple(deny))


def pools() -> list[Pool]:
    """Every category's rule sets and call templates (templates still hold ``{P}`` ...)."""
    spelled = [
        "{P} {a}", "{P}  {a}", "{P} {a} ", " {P} {a}", "'{P}' {a}", "\"{P}\" {a}",
        "{P} '{a}'", "{P} \"{a}\"", "{P}\t{a}", "{P} \\{a}",
    ]
    return [
        Pool("spelling", [_allow(f"Bash({r})") for r in spelled[1:]] + [_allow("Bash({P} {a})")],
             [_bash(c) for c in spelled] + [_bash("{P} {a} {b}"), _bash("{P} {b}"),
                                            _bash("{P}{a}")], 5, 4),
        Pool("spelling-prefix",
             [_allow("Bash({P}  {a}:*)"), _allow("Bash('{P}':*)"), _allow("Bash({P} :*)"),
              _allow("Bash({P}  *)"), _allow("Bash(\"{P}\" {a} *)")],
             [_bash("{P} {a}"), _bash("{P} {a} {b}"), _bash("{P}  {a}"), _bash("'{P}' {a}"),
              _bash("{P} {b}"), _bash("{P}"), _bash("{P}{a}"), _bash("\"{P}\" {a} {b}")], 5, 3),
        Pool("rule-dotdot",
             [_allow("Read(/{cwd}/src/../README.md)"), _allow("Edit(/{cwd}/src/../**)"),
              _allow("Edit(./src/../**)"), _allow("Read(/{elsewhere}/../**)"),
              _allow("Edit(./out-link/../**)"), _allow("Bash({P} src/../{a})")],
             [_read("{cwd}/README.md"), _read("{cwd}/src/main.py"), _write("{cwd}/{a}.txt"),
              _write("{cwd}/{f}"), _read("{elsewhere}/notes.txt"), _write("{elsewhere}/{a}.txt"),
              _bash("{P} src/../{a}"), _bash("{P} {a}"), _read("{home}/.profile"),
              _write("{cwd}/src/../{b}.txt")], 5, 3),
        Pool("star-rules",
             [_allow("Edit(*)"), _allow("Read(*)"), _allow("Edit(**)"), _allow("Bash({P} *:*)"),
              _allow("Bash({P}:*:*)"), _allow("Bash(*:*)"), _allow("WebFetch(*)"),
              _allow("mcp__notes__read_note(*)"), _allow("mcp__notes(*)")],
             [_write("{cwd}/{a}.txt"), _write("{cwd}/{f}"), _write("{elsewhere}/{a}.txt"),
              _read("{cwd}/src/main.py"), _read("{elsewhere}/notes.txt"),
              _bash("{P} {a}"), _bash("{P} {a} {b}"), _bash("{P}"), _bash("rm -f zz"),
              _fetch("https://example.com/"), _mcp("mcp__notes__read_note"),
              _mcp("mcp__notes__delete_note"), _mcp("mcp__other__ping"),
              _write("{cwd}/.claude/settings.json")], 5, 5),
        Pool("dotdot-symlink",
             [_allow("Edit(./**)", "Bash({P}:*)"), _allow("Read(./**)", "Bash(cat:*)")],
             [_bash("{P} out-link/../{a}"), _bash("{P} src/../{a}"),
              _bash("{P} deep-link/../{a}"), _bash("{P} out-link/{a}"),
              _bash("{P} {cwd}/out-link/../{b}"), _write("{cwd}/out-link/../{a}.txt"),
              _write("{cwd}/src/../{a}.txt"), _write("{cwd}/deep-link/../{b}.txt"),
              _write("{cwd}/deep-link/{b}.txt"), _read("{cwd}/out-link/../elsewhere/notes.txt"),
              _read("{cwd}/deep-link/../main.py"), _read("{cwd}/src/pkg/../main.py"),
              _bash("cat out-link/../elsewhere/notes.txt"), _bash("cat deep-link/../main.py"),
              _bash("cat src/../README.md")], 8, 2),
        Pool("compound-special",
             [_allow("Bash({P}:*)", "Bash(cd:*)"), _allow("Bash({P}:*)"),
              _allow("Bash(awk:*)", "Bash(rm:*)")],
             [_bash("cd src && {P} {a}"), _bash("cd {elsewhere} && {P} {a}"),
              _bash("cd .. && {P} {a}"), _bash("=" + "{P} {a}"), _bash("{P} *.txt"),
              _bash("{P} {a}*"), _bash("{P} {a}?"), _bash("{P} [ab]"), _bash("{P} {{{a},{b}}}"),
              _bash("cd src; {P} {a}"), _bash("awk 'BEGIN{{system(\"{P} {a}\")}}'"),
              _bash("awk '{{print}}' README.md"), _bash("rm -rf ."), _bash("rm -rf ./"),
              _bash("rm -rf src/.."), _bash("rm -f {a}.tmp"), _bash("cd src && ls")], 6, 3),
        Pool("windows-paths",
             [_allow("Edit(./**)", "Bash({P}:*)"), _allow("Read(./src/**)")],
             [_write("{cwd}/FILE~1.TXT"), _write("{cwd}/{a}.txt."), _write("{cwd}/{a}..."),
              _write("{cwd}/.claude./settings.json"), _write("{cwd}/.git./config"),
              _write("{cwd}/CLAUDE~1/settings.json"), _write("{cwd}/{a}.txt "),
              _write("{cwd}/src/.../{b}.txt"), _read("{cwd}/src/main.py."),
              _read("{cwd}/src/MAIN~1.PY"), _read("{cwd}/SRC~1/main.py"),
              _bash("{P} FILE~1.TXT"), _bash("{P} {a}..."), _bash("{P} .git./x"),
              _write("{cwd}/.claude/settings.json:stream")], 7, 2),
        Pool("deny-case-depth",
             [_deny(["Bash", "Edit(./**)", "Read"], ["Bash(rm:*)", "Read(./secret/**)"]),
              _deny(["Edit", "Read"], ["Edit(**/.env)", "Read(*.key)"]),
              _deny(["Edit(./**)"], ["Edit(./src/**)"])],
             [_bash("RM -f zz"), _bash("Rm -f zz"), _bash("rm -f zz"),
              _read("{cwd}/secret/x.txt"), _read("{cwd}/SECRET/x.txt"),
              _write("{cwd}/secret/{a}.txt"), _edit("{cwd}/Secret/{a}.txt"),
              _write("{cwd}/.env"), _write("{cwd}/src/.env"), _write("{cwd}/src/pkg/.ENV"),
              _read("{cwd}/id.key"), _read("{cwd}/src/id.key"), _write("{cwd}/src/id.key"),
              _read("{cwd}/src/ID.KEY"), _write("{cwd}/SRC/{a}.txt"), _write("{cwd}/src/{a}.txt"),
              _write("{cwd}/{a}.txt")], 7, 3),
        Pool("deny-webfetch",
             [_deny(["WebFetch"], ["WebFetch(domain:127.0.0.1)", "WebFetch(domain:example.com)"]),
              _deny(["WebFetch"],
                    ["WebFetch(domain:bücher.example)", "WebFetch(domain:10.0.0.1)"])],
             [_fetch("http://2130706433/"), _fetch("http://0x7f000001/"), _fetch("http://127.1/"),
              _fetch("http://127.0.0.1/"), _fetch("http://0177.0.0.1/"),
              _fetch("https://ｅｘａｍｐｌｅ.com/"), _fetch("https://EXAMPLE.COM/"),
              _fetch("https://example.com./"), _fetch("https://www.example.com/"),
              _fetch("https://xn--bcher-kva.example/"), _fetch("https://bücher.example/"),
              _fetch("https://BÜCHER.example/"), _fetch("http://167772161/"),
              _fetch("http://10.1/"), _fetch("https://example.org/")], 7, 2),
        Pool("wrappers",
             [_allow("Bash({P}:*)"), _allow("Bash({P} {a})")],
             [_bash("command {P} {a}"), _bash("builtin {P} {a}"), _bash("nice {P} {a}"),
              _bash("nice -n 5 {P} {a}"), _bash("nohup {P} {a}"), _bash("time {P} {a}"),
              _bash("timeout 5 {P} {a}"), _bash("timeout -s KILL 5 {P} {a}"),
              _bash("echo {a} | xargs {P}"), _bash("xargs {P} < /dev/null"),
              _bash("env {P} {a}"), _bash("env X=1 {P} {a}"), _bash("stdbuf -o0 {P} {a}"),
              _bash("nice nohup {P} {a}"), _bash("exec {P} {a}"), _bash("noglob {P} {a}"),
              _bash("command -v {P}")], 8, 2),
        Pool("shell-syntax",
             [_allow("Bash({P}:*)"), _allow("Bash({P} {a})")],
             [_bash("{P} {a} 2>&1"), _bash("{P} {a} > /dev/null"), _bash("{P} {a} &>/dev/null"),
              _bash("{P} {a} >/dev/null 2>&1"), _bash("X=1 {P} {a}"), _bash("{P} {a} # note"),
              _bash("{P} {a}\n{P} {b}"), _bash("{P} \\\n{a}"), _bash("{P} {a};"),
              _bash("({P} {a})"), _bash("{{ {P} {a}; }}"), _bash("{P} {a} < /dev/null"),
              _bash("# c\n{P} {a}"), _bash("{P} {a} 2>/dev/null | cat"),
              _bash("{P} {a} > {b}.log")], 8, 2),
        Pool("mcp",
             [_allow("mcp__notes__*"), _allow("mcp__notes"), _allow("mcp__notes__read_note"),
              _allow("mcp__notes__read*"), _allow("mcp__*")],
             [_mcp("mcp__notes__read_note"), _mcp("mcp__notes__delete_note"),
              _mcp("mcp__other__ping")], 3, 4),
        Pool("combined",
             [_allow("Bash({P}:*)", "Edit(./**)"), _allow("Bash({P} {a})", "Read(./src/**)"),
              _deny(["Bash", "Edit(./**)"], ["Bash({P}:*)", "Read(./SRC/**)"])],
             [_bash("nohup {P} {a} 2>&1 # note"), _bash("timeout 5 '{P}' {a} > /dev/null"),
              _bash("command {P} src/../{a}"), _bash("cd src && {P} {a} 2>/dev/null"),
              _bash("echo {a} | xargs {P} > /dev/null"), _bash("nice {P}  {a};"),
              _bash("time {P} {a}\n{P} {b}"), _bash("env {P} {a} # c"),
              _bash("X=1 nohup {P} {a}"), _bash("{P} {a} && cat README.md | head -1"),
              _bash("{P} {a} &&  ls ~/.ssh"), _write("{cwd}/src/../FILE~1.TXT"),
              _read("{cwd}/deep-link/../../README.md"), _write("{cwd}/Src/../src/{a}.txt"),
              _edit("{cwd}/src/pkg/../{b}.txt")], 8, 3, ("holdout",)),
        Pool("add-dirs",
             [((), (), ("{extra}",)), (("Bash({P}:*)",), (), ("{extra}",)),
              (("Edit(/{extra}/**)", "Bash(cat:*)"), (), ("{extra}",))],
             [_read("{extra}/docs/guide.md"), _write("{extra}/new-{a}.txt"),
              _bash("{P} {extra}/{a}"), _bash("cat {extra}/docs/guide.md"), _bash("ls {extra}"),
              _read("{extra}/../elsewhere/notes.txt"), _bash("{P} {extra}/../{a}"),
              _write("{extra}/.git/config"), _edit("{extra}/docs/new-{b}.md"),
              _bash("cd {extra} && {P} {a}"), _write("{extra}/docs/../{b}.txt"),
              _bash("cat {extra}/docs/../../elsewhere/notes.txt")], 7, 3, ("holdout",)),
        Pool("deny-spelling",
             [_deny(["Bash"], ["Bash({P}:*)"]), _deny(["Bash({P}:*)"], ["Bash({P} {b})"])],
             [_bash("'{P}' {a}"), _bash("{P}  {a}"), _bash("\\{P} {a}"), _bash("/bin/{P} {a}"),
              _bash("sudo {P} {a}"), _bash("bash -c '{P} {a}'"), _bash("echo $({P} {a})"),
              _bash("{P}{a}"), _bash("nice -n 5 {P} {a}"), _bash("{P} {a} 2>&1"),
              _bash("true && {P} {a}"), _bash("X=1 {P} {a}"), _bash("timeout 5 {P} {a}"),
              _bash("{P} -v {a}"), _bash("{P} {b}"), _bash("{P}  {b}"),
              _bash("command {P} {b}")], 8, 2, ("holdout",)),
        Pool("no-rules-readonly",
             [_allow()],
             [_bash("ls"), _bash("cat README.md"), _bash("echo hi"), _bash("pwd"),
              _bash("cat {elsewhere}/notes.txt"), _bash("ls ~/.ssh"), _bash("head -1 README.md"),
              _bash("wc -l README.md"), _bash("cat .git/config"), _bash("grep -r x src"),
              _bash("find . -name '*.py'"), _bash("ls | head"), _read("{cwd}/src/main.py"),
              _read("{elsewhere}/notes.txt"), _read("{cwd}/.git/config"),
              ("Glob", {"pattern": "**/*.py"}), ("Grep", {"pattern": "main"}),
              _bash("git status"), _bash("echo hi > {a}.txt")], 10, 1),
    ]


def _fill(value: Any, vocab: dict[str, str]) -> Any:
    if isinstance(value, str):
        out = value
        for key in ("P", "a", "b", "f", "n"):
            out = out.replace("{" + key + "}", vocab[key])
        return out.replace("{{", "{").replace("}}", "}")
    if isinstance(value, dict):
        return {k: _fill(v, vocab) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_fill(v, vocab) for v in value)
    return value


def _protect(text: str) -> str:
    """Keep the sandbox placeholders ({cwd} ...) through the brace unescaping."""
    for name in ("cwd", "elsewhere", "extra", "home"):
        text = text.replace("{" + name + "}", "\x00" + name + "\x01")
    return text


def _unprotect(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "{").replace("\x01", "}")
    if isinstance(value, dict):
        return {k: _unprotect(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_unprotect(v) for v in value)
    return value


def _protected(value: Any) -> Any:
    if isinstance(value, str):
        return _protect(value)
    if isinstance(value, dict):
        return {k: _protected(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_protected(v) for v in value)
    return value


def _render(value: Any, vocab: dict[str, str]) -> Any:
    return _unprotect(_fill(_protected(value), vocab))


#: Calls that must come last in their group (they may change the workspace).
_LAST = ("rm -rf",)


def generate(split: str) -> list[Case]:
    """The generated cases of one split (``tune`` or ``holdout``), deterministic."""
    rng = random.Random(SEEDS[split])
    vocab = VOCAB[split]
    cases: list[Case] = []
    for pool in pools():
        if split not in pool.splits:
            continue
        chosen = sorted(rng.sample(range(len(pool.rule_sets)), min(pool.sets, len(pool.rule_sets))))
        take = pool.take if split == "tune" else max(3, pool.take - 1)
        for index in chosen:
            allow, deny, *more = pool.rule_sets[index]
            add_dirs = more[0] if more else ()
            picked = rng.sample(range(len(pool.calls)), min(take, len(pool.calls)))
            calls = [pool.calls[i] for i in sorted(picked)]
            calls.sort(key=lambda c: any(str(c[1].get("command", "")).startswith(x)
                                         for x in _LAST))
            for number, (tool, call_input) in enumerate(calls):
                cases.append(Case(
                    id=f"{split}-{pool.category}-{index}-{number}",
                    tool=_render(tool, vocab),
                    input=_render(call_input, vocab),
                    rules=tuple(_render(list(allow), vocab)),
                    deny_rules=tuple(_render(list(deny), vocab)),
                    add_dirs=tuple(add_dirs),
                    category=pool.category,
                    split=split,
                ))
    return cases


def iter_all() -> Iterator[Case]:
    """Both splits' generated cases, tune first."""
    for split in SEEDS:
        yield from generate(split)
