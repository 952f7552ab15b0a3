"""The broker over a real SQLite store, with session-1 in it."""

from __future__ import annotations

import pytest

from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.domain.models import Backend, SessionInfo
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


@pytest.fixture
def ledger(db: Database) -> Ledger:
    db.upsert_session(SessionInfo(session_id="session-1", name="demo",
                                  backend=Backend.CLAUDE, cwd="/tmp/ws"))
    return Ledger(db)


@pytest.fixture
def broker(db: Database, ledger: Ledger) -> ApprovalBroker:
    return ApprovalBroker(db, ledger)
