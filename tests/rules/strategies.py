"""Generated shell text for the rule tests: the pieces a command line is made of."""

from __future__ import annotations

from hypothesis import strategies as st

_SHELL_PIECES = [
    "a", "b", "x1", "git", "diff", "ls", "rm", "-rf", "sudo", "bash", "-c", "env", "X=1",
    "eval", "/bin/rm", "sh5", "xargs", "ssh", "cat",
    "if", "[[", "src/x.py", "~/", "..", ".", "/", "-", "_", "=", "*", "?", "[", "]", " ",
    "  ", "\t", "\n", "\r", "'", '"', "\\", "$", "$(", "${", "`", "{", "}", "!", "(", ")",
    "#", "<", ">", "<<", "2>", "&>", "|&", ";", ";;", ";&", "&", "&&", "|", "||", "\u00a0",
    "\u200b", "\u202e", "\x0b", "\x00", "é", "\u0131",
]
shell_text = st.lists(st.sampled_from(_SHELL_PIECES), max_size=14).map("".join)
