"""Session rules: syntax, evaluation, path and domain specifiers, grants."""
