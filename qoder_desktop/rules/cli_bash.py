"""How the Claude Code CLI reads a Bash call under session rules (for `rules check`).

A model of the bundled CLI's observed behaviour, measured by the differential tests
(tests/differential): it predicts, it never grants. What it models:

- the line is cleaned first: comments, line continuations, a trailing `;` and harmless
  redirections (`2>&1`, `>/dev/null`, `&>/dev/null`, `</dev/null`) do not count;
- each simple command is stripped of the wrappers the CLI looks through (`command`,
  `builtin`, `noglob`, `nohup`, `time`, `nice [-n N]`, `timeout [opts] N`,
  `stdbuf -oX`, `xargs [flags]`); `env`, `exec`, `sudo` and assignments are not;
- an exact rule is compared as text with the trimmed command (`Bash(touch a)` does not
  cover `touch 'a'`); a prefix rule (`touch:*`, `touch *`) and a glob match the raw text
  or the unquoted words with runs of blanks collapsed; a rule's own quotes stay literal
  (`Bash('touch':*)` only covers `'touch' ...`); `X *:*` reads its `*` literally;
- read-only commands (`ls`, `cat`, `echo`, `grep`, ...) run without a rule while their
  paths stay in the session folder or its added directories;
- for the commands whose paths the CLI checks (`PATH_CHECKED`: touch, mkdir, rm, cp,
  cat, grep, git, ...) it asks whenever an argument holds `..`, an unquoted glob
  character, a Windows path shape, a sensitive file, or a path outside the session
  folders (symlinks resolved), and `cd` combined with such a command that writes
  asks; for other commands the CLI looks at none of this (we still ask about
  sensitive files);
  for zsh `=cmd`, `awk` running `system()`, `rm` of `.` or `..`-like targets, and an
  option outside the CLI's safe list for mkdir, touch, rmdir, rm, mv and cp.

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from qoder_desktop.domain.workspace import inside_forms
from qoder_desktop.rules import cli_files
from qoder_desktop.rules.bash_allow import wildcard_match
from qoder_desktop.rules.bash_paths import PathCheck
from qoder_desktop.shell import words as shell_words
from qoder_desktop.shell.words import ShellProblem, SimpleCommand

UNSURE = "unsure: cannot tell how the CLI reads this; it will probably ask"

#: Commands the CLI runs without a rule (when their paths stay inside).
READ_ONLY = frozenset({
    "ls", "cat", "echo", "pwd", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg",
    "find", "true", "false", "date", "whoami", "printf", "sort", "uniq", "cut", "tr",
    "basename", "dirname", "realpath", "stat", "file", "du", "df", "diff", "cd", "which",
    "type", "id", "uname", "hostname", "less", "more", "tree", "nl", "od", "xxd",
})
#: Commands whose path arguments the CLI checks (`..`, globs, Windows shapes, links and
#: folders outside); the keys of its own table of path-taking commands.
PATH_CHECKED = frozenset({
    "cd", "ls", "find", "mkdir", "touch", "rm", "rmdir", "mv", "cp", "cat", "head", "tail",
    "sort", "uniq", "wc", "cut", "paste", "column", "file", "stat", "diff", "awk", "gawk",
    "mawk", "nawk", "strings", "hexdump", "od", "base64", "nl", "sha256sum", "sha1sum",
    "md5sum", "tee", "tr", "grep", "egrep", "fgrep", "tac", "rev", "fold", "expand",
    "unexpand", "fmt", "comm", "cmp", "pr", "numfmt", "tsort", "man", "rg", "sed", "jq",
})
#: git is in that table too, but only its `-C DIR` is a path the CLI checks.
#: The options the CLI counts as safe for the commands that change files (its own
#: table); any other option of these commands makes it ask (`cp -n a b` asks).
SAFE_FLAGS: dict[str, frozenset[str]] = {
    "mkdir": frozenset({"-p", "--parents", "-v", "--verbose"}),
    "touch": frozenset({"-c", "--no-create"}),
    "rmdir": frozenset({"-p", "--parents", "-v", "--verbose"}),
    "rm": frozenset({"-r", "-R", "--recursive", "-f", "--force", "-v", "--verbose"}),
    "mv": frozenset(),
    "cp": frozenset(),
}
#: git subcommands that only read.
GIT_READ_ONLY = frozenset({"status", "log", "show", "diff", "branch", "rev-parse", "ls-files"})
_FIND_WRITES = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                          "-fprintf", "-fls"})
_SAFE_REDIRECT = re.compile(r"(?<![^\s;|&])(?:\d?>&\d|&>\s*/dev/null|\d?>>?\s*/dev/null"
                            r"|<\s*/dev/null)(?=$|[\s;|&])")
_COMMENT = re.compile(r"(?:(?<=\s)|^)#[^\n]*")
_TIME = re.compile(r"(^|[;&|(]\s*)time\s+(?=\S)")
_GLOB = re.compile(r"[*?\[]")
_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")


@dataclass(frozen=True)
class BashRule:
    """One Bash rule's specifier, classified."""

    text: str
    kind: str  # "exact" | "prefix" | "glob" | "never"


def classify(content: str) -> BashRule:
    """Classify a Bash specifier the way the CLI reads it."""
    if content.endswith(":*"):
        base = content[:-2]
        if "*" in base or not base.strip() or base != base.strip():
            return BashRule(base, "never")  # `X *:*` reads its * literally; `X :*` never
        return BashRule(_collapse(base), "prefix")
    if content.endswith(" *") and content.count("*") == 1:
        base = content[:-2]
        return BashRule(_collapse(base.strip()), "prefix")
    if "*" in content:
        return BashRule(_collapse(content), "glob")
    return BashRule(content, "exact")


def _collapse(text: str) -> str:
    return re.sub(r"[ \t]+", " ", text)


def clean(command: str) -> str:
    """The line without what the CLI ignores (comments, continuations, /dev/null ...)."""
    text = command.replace("\\\n", "")  # a line continuation joins the two lines
    if "#" in text and "'" not in text and '"' not in text:
        text = _COMMENT.sub("", text)
    text = _SAFE_REDIRECT.sub(" ", text)
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    text = _TIME.sub(r"\1", " ; ".join(lines))  # the `time` keyword times, nothing more
    return text.strip().rstrip(";").strip()


def _strip_wrappers(words: tuple[str, ...]) -> tuple[tuple[str, ...], int] | None:
    """The words without leading wrappers and how many were removed; None: unsure."""
    index = 0
    while index < len(words):
        head = words[index]
        if head in ("command", "builtin", "noglob", "nohup", "time"):
            if head == "command" and index + 1 < len(words) and words[index + 1].startswith("-"):
                return None
            index += 1
        elif head == "nice":
            index += 1
            if index < len(words) and words[index] == "-n":
                index += 2
            elif index < len(words) and re.match(r"^-\d+$", words[index]):
                index += 1
        elif head == "timeout":
            index += 1
            while index < len(words) and words[index].startswith("-"):
                index += 2 if words[index] in ("-s", "-k", "--signal", "--kill-after") else 1
            if index >= len(words) or not _DURATION.match(words[index]):
                return None
            index += 1
        elif head == "stdbuf":
            index += 1
            while index < len(words) and re.match(r"^-[ioe]\S+$", words[index]):
                index += 1
        elif head == "xargs":
            index += 1
            while index < len(words) and words[index] in ("-0", "-r", "-t"):
                index += 1
        else:
            break
    return words[index:], index


def _raw_tail(text: str, skip: int) -> str:
    """The raw text after its first `skip` blank-separated tokens."""
    rest = text.strip()
    for _ in range(skip):
        parts = rest.split(None, 1)
        rest = parts[1] if len(parts) > 1 else ""
    return rest.strip()


def rule_covers(rule: BashRule, raw: str, words: tuple[str, ...]) -> bool:
    """True when a classified rule covers one (wrapper-stripped) simple command."""
    if rule.kind == "exact":
        return raw == rule.text
    text = _collapse(raw)
    if rule.kind == "prefix":
        if text == rule.text or text.startswith(rule.text + " "):
            return True
        wanted = rule.text.split(" ")  # word by word: a quoted `'git add'` is one word
        return list(words[:len(wanted)]) == wanted
    if rule.kind == "glob":
        plain = not any(re.search(r"\s", w) for w in words)
        return wildcard_match(rule.text, text) or (plain and wildcard_match(rule.text,
                                                                             " ".join(words)))
    return False


def _read_only(words: tuple[str, ...]) -> bool:
    head = words[0]
    if head == "git":
        return len(words) > 1 and words[1] in GIT_READ_ONLY
    if head == "find":
        return not any(w in _FIND_WRITES for w in words[1:])
    return head in READ_ONLY


def _special(words: tuple[str, ...], raw: str) -> str | None:
    """Why the CLI asks about this command whatever the rules say, or None."""
    head = words[0]
    if head.startswith("="):
        return "zsh `=cmd` expansion"
    if head in ("awk", "gawk", "mawk", "nawk") and ("system(" in raw or "|" in raw):
        return "awk runs a command"
    if head == "rm" and any(w.rstrip("/") in (".", "..", "") or w.endswith("/..")
                            or w.endswith("/.") for w in words[1:] if not w.startswith("-")):
        return "rm of the current or parent folder"
    if head in SAFE_FLAGS:
        flag = next((w for w in words[1:] if w.startswith("-") and w != "--"
                     and w not in SAFE_FLAGS[head]), None)
        if flag is not None:
            return f"{head} with the option {flag}, which the CLI does not count as safe"
    if head not in PATH_CHECKED:
        return None
    for word in words[1:]:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if ".." in value.split("/"):
            return f"`..` in a path argument: {word}"
        if cli_files.windows_shape(value):
            return f"Windows path shape: {word}"
    return None


def _unquoted_glob(raw: str) -> bool:
    """True when `raw` has a glob character outside quotes."""
    quote = ""
    escaped = False
    for ch in raw:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif _GLOB.match(ch):
            return True
    return False


def predict_bash(command: object, allow_texts: Sequence[str], whole: bool, cwd: str,
                 add_dirs: Sequence[str]) -> tuple[str, str]:
    """("allow" | "ask", reason) for a Bash call (deny rules are checked before)."""
    if not isinstance(command, str) or not command.strip():
        return "ask", "no command"
    if whole:
        return _whole_bash(command, cwd, add_dirs)
    line = clean(command)
    analysis = shell_words.analyze(line) if line else None
    if analysis is None or not analysis.commands:
        return "ask", "no command"
    problems = set(analysis.problems)
    if problems:
        shown = ", ".join(sorted(p.value for p in problems))
        if problems & {ShellProblem.REDIRECTION, ShellProblem.COMMAND_SUBSTITUTION,
                       ShellProblem.ASSIGNMENT, ShellProblem.SUBSHELL, ShellProblem.BRACE,
                       ShellProblem.VARIABLE_EXPANSION, ShellProblem.PARAMETER_EXPANSION,
                       ShellProblem.PROCESS_SUBSTITUTION}:
            return "ask", f"the CLI asks about this shell syntax: {shown}"
        return "ask", f"{UNSURE} ({shown})"
    rules = [classify(text) for text in allow_texts]
    paths = PathCheck(cwd, add_dirs)
    changes_folder = False
    writes = False
    used: list[str] = []
    for simple in analysis.commands:
        verdict = _segment(simple, rules, allow_texts, paths, used)
        if verdict is not None:
            return "ask", verdict
        stripped = _strip_wrappers(simple.words)
        words = stripped[0] if stripped else simple.words
        changes_folder = changes_folder or words[0] == "cd"
        writes = writes or (not _read_only(words) and words[0] in PATH_CHECKED)
    if changes_folder and writes:
        return "ask", "`cd` together with a command that writes paths the CLI checks"
    if not used:
        return "allow", "read-only commands the CLI runs without a rule"
    return "allow", "allowed by the rule " + ", ".join(f"Bash({t})" for t in used)


def _segment(simple: SimpleCommand, rules: Sequence[BashRule], texts: Sequence[str],
             paths: PathCheck, used: list[str]) -> str | None:
    """Why one simple command asks, or None (recording the rule that allows it)."""
    stripped = _strip_wrappers(simple.words)
    if stripped is None or not stripped[0]:
        return f"{UNSURE} (a wrapper the model does not follow: {simple.text})"
    words, skipped = stripped
    raw = _raw_tail(simple.text, skipped)
    special = _special(words, raw)
    if special is not None:
        return f"the CLI asks: {special}"
    read_only = _read_only(words)
    checked = words[0] in PATH_CHECKED
    if words[0] == "git" and "-C" in words[1:-1]:
        reason = paths.argument(words[words.index("-C", 1) + 1])
        if reason is not None:
            return reason
    if checked and not read_only and _unquoted_glob(raw):
        return "the CLI asks about glob characters in a command that writes"
    matched = next((i for i, rule in enumerate(rules) if rule_covers(rule, raw, words)), None)
    if matched is None and not read_only:
        return f"no allow rule matches the command: {raw}"
    for word in words[1:]:
        if word.startswith("-"):
            continue  # the CLI does not look into `--option=path`
        reason = paths.argument(word) if checked else _plainly_outside(paths, word)
        if reason is None:
            continue
        if (read_only and matched is None and reason.startswith("sensitive")
                and _inside(paths, word)):
            continue  # reading a sensitive file inside needs no rule
        return reason
    if words[0] == "cd":
        paths.command(SimpleCommand(text=raw, words=words))
    if matched is not None and texts[matched] not in used:
        used.append(texts[matched])
    return None


def _plainly_outside(paths: PathCheck, word: str) -> str | None:
    """For a command whose paths the CLI does not check (it allows `chmod 644 ../x` and
    links out under a prefix rule): only a sensitive file asks, as our caution."""
    return cli_files.sensitive_write(word, paths.cwd)


def _inside(paths: PathCheck, word: str) -> bool:
    """True when `word` resolves inside the session folders (as written and really)."""
    forms = paths.resolve(word)
    if isinstance(forms, str):
        return False
    return inside_forms(*forms, paths.lexical_roots, paths.real_roots)


def _whole_bash(command: str, cwd: str, add_dirs: Sequence[str]) -> tuple[str, str]:
    """Under the whole-tool `Bash` rule the CLI still asks about sensitive files."""
    analysis = shell_words.analyze(command)
    targets = re.findall(r">>?\s*([^\s;|&]+)", command)
    words = [w for c in analysis.commands for w in c.words[1:]]
    for value in [*targets, *words]:
        reason = cli_files.sensitive_write(value, cwd)
        if reason is not None:
            return "ask", f"the CLI asks about {reason} even under the rule Bash"
    return "allow", "allowed by the rule Bash"
