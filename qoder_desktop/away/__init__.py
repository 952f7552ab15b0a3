"""Away mode: a paired phone as a second screen of this desk (Qt-free).

The contract between its parts is `docs/AWAY-PROTOCOL.md`.
"""
