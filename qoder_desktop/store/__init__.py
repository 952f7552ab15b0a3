"""The SQLite store: sessions, session rules and the decision ledger."""
