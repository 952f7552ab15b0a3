"""Is an edited rule narrower than the one the agent asked for? Decided by meaning.

`is_narrower(original, edited)` is True only when everything `edited` matches, the
original matched too, by the matcher's semantics (not by text): `Edit(//u/src-evil/**)`
is not narrower than `Edit(//u/src/**)`, `Bash(git diffx *)` is not narrower than
`Bash(git diff *)`, `Bash(git diff --stat *)` is. It is conservative: when it cannot
tell, the answer is False (the dialog then asks the person to confirm a broader rule).

Pure Python, no Qt, no SDK imports.
"""

from __future__ import annotations

import posixpath

from qoder_desktop.domain.models import RuleValue
from qoder_desktop.domain.tools import BASH_TOOL, PATH_RULE_TOOLS, WEBFETCH_TOOL
from qoder_desktop.rules.bash_allow import BashSpec, parse_bash_spec, rule_words, wildcard_match
from qoder_desktop.rules.paths import strict_host

_GLOB_CHARS = frozenset("*?[\\")
_CWD = "/\x00cwd"
_HOME = "/\x00home"


def _is_whole(rule: RuleValue) -> bool:
    content = rule.rule_content
    return content is None or (content.strip() == "*" and rule.tool_name not in PATH_RULE_TOOLS)


def is_narrower(original: RuleValue, edited: RuleValue) -> bool:
    """True when every call `edited` matches is matched by `original` too.

    Equal rules are narrower (nothing changed). A different tool is never narrower,
    except an MCP tool of a server-wide MCP rule (`mcp__srv` → `mcp__srv__tool`).
    """
    if edited == original:
        return True
    if edited.tool_name != original.tool_name:
        server = original.tool_name.removesuffix("__*")
        return (original.rule_content is None and server.startswith("mcp__")
                and server.count("__") == 1 and edited.rule_content is None
                and edited.tool_name.startswith(server + "__")
                and len(edited.tool_name) > len(server) + 2)
    if _is_whole(original):
        return True
    if _is_whole(edited):
        return False
    old, new = original.rule_content or "", edited.rule_content or ""
    if original.tool_name == BASH_TOOL:
        return _bash_narrower(parse_bash_spec(old), parse_bash_spec(new))
    if original.tool_name in PATH_RULE_TOOLS:
        return _path_narrower(old, new)
    if original.tool_name == WEBFETCH_TOOL:
        return _domain_narrower(old, new)
    return False


def _bash_narrower(old: BashSpec, new: BashSpec) -> bool:
    if old.kind == "exact":
        return new.kind == "exact" and rule_words(new.text) == rule_words(old.text) and \
            new.text == old.text
    if new.kind == "glob":
        if old.kind == "prefix":
            # Every text the glob matches starts with the prefix and a space.
            return new.text.startswith(old.text + " ") and "*" not in old.text
        return new == old
    new_words = rule_words(new.text)
    if new_words is None or new.text != " ".join(new_words):
        return False
    if old.kind == "prefix":
        old_words = rule_words(old.text)
        return old_words is not None and new_words[:len(old_words)] == old_words
    # old is a glob over the command text
    if new.kind == "exact":
        return old.glob_matches(new.text)
    pattern = old.text if not old.optional_tail else old.text + " *"
    if not pattern.endswith("*"):
        return False
    # prefix P matches "P" and "P ...": both are covered when some start of P already
    # matches the glob without its final star.
    head = pattern[:-1]
    covers_tail = any(wildcard_match(head, new.text[:k]) for k in range(len(new.text) + 1))
    return covers_tail and old.glob_matches(new.text)


def _path_base(content: str) -> tuple[str, bool] | None:
    """(literal folder the pattern stays below, whether it covers that whole folder)."""
    if content.startswith("//"):
        root, body = "/", content[2:]
    elif content == "~" or content.startswith("~/"):
        root, body = _HOME, content[2:]
    elif content.startswith("/"):
        root, body = _CWD, content[1:]
    else:
        body = content
        while body.startswith("./"):
            body = body[2:]
        if not content.startswith("./") and "/" not in content.rstrip("/"):
            # a bare name matches at any depth below the working folder
            return _CWD, body in ("**", "")
        root = _CWD
    if body.startswith(("!", "#")):
        return None
    parts = body.rstrip("/").split("/") if body.strip("/") else []
    literal: list[str] = []
    for part in parts:
        if _GLOB_CHARS & set(part):
            break
        if part in (".", ".."):
            return None
        literal.append(part)
    rest = parts[len(literal):]
    base = posixpath.join(root, *literal) if literal else root
    whole = not rest or rest == ["**"]
    return base, whole


def _path_narrower(old: str, new: str) -> bool:
    old_base, new_base = _path_base(old), _path_base(new)
    if old_base is None or new_base is None:
        return False
    (old_dir, old_whole), (new_dir, _new_whole) = old_base, new_base
    if not old_whole:
        return False
    if old_dir.startswith(_CWD) != new_dir.startswith(_CWD) or \
            old_dir.startswith(_HOME) != new_dir.startswith(_HOME):
        return False
    return new_dir == old_dir or new_dir.startswith(old_dir.rstrip("/") + "/")


def _domain_narrower(old: str, new: str) -> bool:
    if not (old.startswith("domain:") and new.startswith("domain:")):
        return False
    old_host = old[len("domain:"):].strip().lower()
    new_host = new[len("domain:"):].strip().lower()
    if old_host == "*":
        return new_host == "*" or strict_host("https://" + new_host.removeprefix("*.")) \
            is not None
    if old_host.startswith("*."):
        apex = old_host[2:]
        plain = new_host.removeprefix("*.")
        return plain.endswith("." + apex) and strict_host("https://" + plain) is not None
    return new_host == old_host
