"""The SQLite store: opening, migrations, sessions and session rules."""

from __future__ import annotations

import sqlite3
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.domain.models import (
    Backend,
    PermissionMode,
    RuleBehavior,
    RuleValue,
    SessionInfo,
    SessionRule,
    SessionState,
)
from qoder_desktop.store.database import Database, NotFoundError, StorageError
from qoder_desktop.store.schema import MIGRATIONS


def _session(name: str = "s1") -> SessionInfo:
    return SessionInfo(name=name, backend=Backend.CLAUDE, cwd="/tmp/work")


def _rule(session_id: str, text: str = "Bash(npm run test:*)") -> SessionRule:
    return SessionRule(session_id=session_id, behavior=RuleBehavior.ALLOW,
                       rule=RuleValue.parse(text))


def test_app_paths_follow_qoder_desktop_home(tmp_path: Path) -> None:
    paths = AppPaths.default({"QODER_DESKTOP_HOME": str(tmp_path / "h")}).ensure()
    assert paths.config_dir == tmp_path / "h" / "config"
    assert paths.database == tmp_path / "h" / "data" / "qoder-desktop.sqlite3"
    assert paths.settings_file == tmp_path / "h" / "config" / "settings.json"
    assert paths.window_state_file == tmp_path / "h" / "state" / "window.json"
    for folder in (paths.config_dir, paths.data_dir, paths.state_dir, paths.cache_dir):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_app_paths_default_uses_the_fixture_home(app_paths: AppPaths,
                                                 isolated_home: Path) -> None:
    assert "qoder-desktop" in str(app_paths.data_dir)
    assert app_paths.data_dir.is_dir()
    assert not str(app_paths.data_dir).startswith(str(isolated_home))


def test_app_paths_without_override_use_platform_dirs() -> None:
    paths = AppPaths.default({})
    assert "qoder-desktop" in str(paths.config_dir)


def test_open_sets_pragmas_and_schema_version(db: Database) -> None:
    assert db.schema_version == len(MIGRATIONS)
    assert db.fetchall("PRAGMA journal_mode")[0][0] == "wal"
    assert db.fetchall("PRAGMA foreign_keys")[0][0] == 1
    assert db.fetchall("PRAGMA synchronous")[0][0] == 2  # FULL
    assert stat.S_IMODE(db.path.stat().st_mode) == 0o600


def test_reopen_does_not_migrate_again(tmp_path: Path) -> None:
    with Database.open(tmp_path / "x.sqlite3") as first:
        first.upsert_session(_session())
    with Database.open(tmp_path / "x.sqlite3") as second:
        assert second.schema_version == len(MIGRATIONS)
        assert len(second.fetchall("SELECT * FROM sessions")) == 1


def test_corrupt_file_gives_a_clear_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(StorageError) as info:
        Database.open(path)
    assert str(path) in str(info.value)
    assert "not a database" in str(info.value)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(StorageError, match="newer"):
        Database.open(path)


def test_closed_database_says_so(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "c.sqlite3")
    db.close()
    db.close()
    with pytest.raises(StorageError, match="closed"):
        db.all_rules("any")


def _session_row(db: Database, session_id: str) -> tuple[object, ...] | None:
    rows = db.fetchall("SELECT name, state, permission_mode, error, created_at FROM sessions"
                       " WHERE session_id = ?", (session_id,))
    return tuple(rows[0]) if rows else None


def test_an_upsert_writes_the_session_and_keeps_its_creation_time(db: Database) -> None:
    first = _session("one")
    db.upsert_session(first)
    db.upsert_session(_session("two"))
    created = _session_row(db, first.session_id)
    assert created is not None and created[:4] == ("one", "starting", "default", None)
    changed = first.model_copy(update={"name": "uno", "state": SessionState.FAILED,
                                       "permission_mode": PermissionMode.PLAN,
                                       "error": "CLI died"})
    db.upsert_session(changed)
    assert _session_row(db, first.session_id) == ("uno", "failed", "plan", "CLI died",
                                                  created[4])
    assert len(db.fetchall("SELECT * FROM sessions")) == 2


def test_rules_add_list_revoke(db: Database) -> None:
    session = _session()
    db.upsert_session(session)
    bash = _rule(session.session_id)
    read = _rule(session.session_id, "Read")
    db.add_rules([bash, read])
    assert db.active_rules(session.session_id) == [bash, read]
    assert db.get_rule(read.rule_id) == read

    when = datetime(2030, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
    assert db.revoke_rule(bash.rule_id, revoked_by="tray", at=when) is True
    assert db.revoke_rule(bash.rule_id, revoked_by="someone else") is False
    [(revoked_by,)] = db.fetchall("SELECT revoked_by FROM session_rules WHERE rule_id = ?",
                                  (bash.rule_id,))
    assert revoked_by == "tray"
    assert db.active_rules(session.session_id) == [read]
    everything = db.all_rules(session.session_id)
    assert [r.rule_id for r in everything] == [bash.rule_id, read.rule_id]
    assert everything[0].revoked_at == when
    assert not everything[0].active
    with pytest.raises(NotFoundError):
        db.revoke_rule("no-such-rule")


def test_rule_for_unknown_session_is_refused_and_nothing_saved(db: Database) -> None:
    session = _session()
    db.upsert_session(session)
    good = _rule(session.session_id)
    orphan = _rule("ghost")
    with pytest.raises(NotFoundError, match="ghost"):
        db.add_rules([good, orphan])
    assert db.all_rules(session.session_id) == []


def test_duplicate_rule_id_is_a_storage_error(db: Database) -> None:
    session = _session()
    db.upsert_session(session)
    rule = _rule(session.session_id)
    db.add_rules([rule])
    with pytest.raises(StorageError, match="refused"):
        db.add_rules([rule])


def test_writes_from_many_threads(db: Database) -> None:
    session = _session()
    db.upsert_session(session)
    errors: list[BaseException] = []

    def grant(n: int) -> None:
        try:
            for i in range(20):
                db.add_rules([_rule(session.session_id, f"Bash(cmd{n}-{i}:*)")])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=grant, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(db.active_rules(session.session_id)) == 160


def test_writes_are_visible_to_a_second_connection(db: Database) -> None:
    session = _session()
    db.upsert_session(session)
    other = sqlite3.connect(db.path)
    try:
        rows = other.execute("SELECT name FROM sessions").fetchall()
    finally:
        other.close()
    assert rows == [("s1",)]


def test_active_rules_follow_every_grant_and_revocation_at_once(db: Database) -> None:
    """Active rules are read on every tool call (and cached); a change shows at once."""
    db.upsert_session(SessionInfo(session_id="cache", name="c", backend=Backend.CLAUDE,
                                  cwd="/tmp"))
    assert db.active_rules("cache") == []
    first = SessionRule(session_id="cache", behavior=RuleBehavior.ALLOW,
                        rule=RuleValue.parse("Bash(make)"))
    db.add_rules([first])
    assert [r.rule_id for r in db.active_rules("cache")] == [first.rule_id]
    second = SessionRule(session_id="cache", behavior=RuleBehavior.ALLOW,
                         rule=RuleValue.parse("Bash(make test)"))
    db.add_rules([second])
    assert len(db.active_rules("cache")) == 2
    db.revoke_rule(first.rule_id)
    assert [r.rule_id for r in db.active_rules("cache")] == [second.rule_id]
    db.active_rules("cache").clear()  # a caller changing its copy changes nothing
    assert len(db.active_rules("cache")) == 1
