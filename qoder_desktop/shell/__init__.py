"""The shell analyzer: one lexer and analysis for rules and the risk lens."""
