"""The app side behind a way in, without the app: the ledger, the broker and a hub."""

from __future__ import annotations

from typing import Any

from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


def no_in_app_sessions(*args: Any) -> Any:
    """A session factory for a hub that must never start an in-app session."""
    raise AssertionError("this test never starts an in-app session")


def app_side(db: Database) -> tuple[Ledger, ApprovalBroker, SessionHub]:
    """The ledger, the broker and a hub that starts no agent of its own, over `db`: what
    stands behind every way in from outside the app."""
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    return ledger, broker, SessionHub(db, ledger, broker, no_in_app_sessions)
