"""Launching sessions: credentials per backend, the demo's loopback environment, cleanup."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.loop import LoopTicks
from helpers.memory_keyring import MemoryKeyring, SlowKeyring

from qoder_desktop.agents.factory import DemoModel, SessionLauncher, sweep_stale_auth_dirs
from qoder_desktop.agents.hub import SessionHub
from qoder_desktop.agents.sink import SessionStartError
from qoder_desktop.approval.broker import ApprovalBroker
from qoder_desktop.config.secrets import SERVICE_NAME, SecretName, SecretStore
from qoder_desktop.domain.models import Backend, SessionState
from qoder_desktop.domain.session_options import SessionOptions
from qoder_desktop.store.database import Database
from qoder_desktop.store.ledger import Ledger


def _store() -> SecretStore:
    return SecretStore(extra_allowed=(MemoryKeyring,))


def test_a_crash_left_token_folder_is_swept_but_a_live_one_is_kept(tmp_path: Path) -> None:
    stale = tmp_path / "qoder-sdk-auth-old"
    stale.mkdir()
    (stale / "payload.json").write_text('{"accessToken": "pat_x"}')
    old = time.time() - 3 * 24 * 3600
    os.utime(stale, (old, old))
    live = tmp_path / "qoder-sdk-auth-new"
    live.mkdir()
    (live / "payload.json").write_text('{"accessToken": "pat_y"}')
    unrelated = tmp_path / "something-else"
    unrelated.mkdir()
    os.utime(unrelated, (old, old))
    assert sweep_stale_auth_dirs(str(tmp_path)) == [stale]
    assert not stale.exists()
    assert live.exists() and unrelated.exists()


@pytest.mark.asyncio
async def test_the_demo_points_the_cli_at_loopback_with_its_own_config_folder(
        tmp_path: Path) -> None:
    demo = DemoModel("http://127.0.0.1:4567", root=tmp_path / "demo")
    env = await SessionLauncher(_store(), demo=demo).claude_env(SessionOptions(scenario="bash"))
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4567"
    assert env["CLAUDE_CONFIG_DIR"] == str(demo.config_dir)
    assert not env["CLAUDE_CONFIG_DIR"].startswith(os.path.expanduser("~"))
    demo.cleanup()
    assert not (tmp_path / "demo").exists()


@pytest.mark.asyncio
async def test_a_real_session_gets_the_key_from_the_keyring_and_the_users_gateway(
        tmp_path: Path) -> None:
    store = _store()
    store.set(SecretName.ANTHROPIC_API_KEY, "sk-ant-test-key-123456")
    launcher = SessionLauncher(store, anthropic_base_url="http://127.0.0.1:9999")
    env = await launcher.claude_env(SessionOptions(cwd=str(tmp_path)))
    assert env == {"ANTHROPIC_API_KEY": "sk-ant-test-key-123456",
                   "ANTHROPIC_BASE_URL": "http://127.0.0.1:9999"}
    assert "sk-ant-test-key-123456" not in repr(launcher)


@pytest.mark.asyncio
async def test_without_a_key_nothing_is_invented(tmp_path: Path) -> None:
    assert await SessionLauncher(_store()).claude_env(SessionOptions(cwd=str(tmp_path))) == {}


@pytest.fixture
def slow_keyring() -> Iterator[SlowKeyring]:
    """A keyring holding an Anthropic key that answers only once released."""
    backend = SlowKeyring()
    backend.passwords[(SERVICE_NAME, SecretName.ANTHROPIC_API_KEY.value)] = SLOW_KEY
    try:
        yield backend
    finally:
        backend.release.set()


SLOW_KEY = "sk-ant-slow-session-key-0123456789"


@pytest.mark.asyncio
async def test_a_session_whose_key_the_keyring_never_gives_does_not_start_and_says_why(
        tmp_path: Path, db: Database, slow_keyring: SlowKeyring) -> None:
    store = SecretStore(slow_keyring, extra_allowed=(MemoryKeyring,))
    launcher = SessionLauncher(store, keyring_timeout=0.6)
    ledger = Ledger(db)
    built: list[Any] = []

    def factory(*args: Any) -> Any:
        built.append(launcher(*args))
        return built[-1]

    hub = SessionHub(db, ledger, ApprovalBroker(db, ledger), factory)
    async with LoopTicks() as ticks:
        with pytest.raises(SessionStartError, match="did not answer"):
            await hub.start_session(SessionOptions(cwd=str(tmp_path), backend=Backend.CLAUDE))
    assert ticks.count > 3  # the loop served other work while the keyring hung
    [info] = hub.sessions()
    assert info.state is SessionState.FAILED
    assert info.error is not None and "keyring did not answer" in info.error
    assert "not started" in info.error
    texts = [line.text for line in hub.transcript(info.session_id)]
    assert "Waiting for the keyring to give the Anthropic API key…" in texts
    assert any("did not answer" in text for text in texts)
    assert built[0]._client is None  # the CLI was never started
    assert all(SLOW_KEY not in text for text in texts)


@pytest.mark.asyncio
async def test_a_slow_keyring_still_gives_the_session_its_key(slow_keyring: SlowKeyring,
                                                              tmp_path: Path) -> None:
    store = SecretStore(slow_keyring, extra_allowed=(MemoryKeyring,))
    notes: list[str] = []

    def waiting(text: str) -> None:
        notes.append(text)
        slow_keyring.release.set()  # the person unlocks the keyring

    env = await SessionLauncher(store).claude_env(SessionOptions(cwd=str(tmp_path)), waiting)
    assert env == {"ANTHROPIC_API_KEY": SLOW_KEY}
    assert notes == ["Waiting for the keyring to give the Anthropic API key…"]
