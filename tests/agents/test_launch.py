"""Launching sessions: credentials per backend, the demo's loopback environment, cleanup."""

from __future__ import annotations

import os
import time
from pathlib import Path

from helpers.memory_keyring import MemoryKeyring

from qoder_desktop.agents.factory import DemoModel, SessionLauncher, sweep_stale_auth_dirs
from qoder_desktop.config.secrets import SecretName, SecretStore
from qoder_desktop.domain.session_options import SessionOptions


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


def test_the_demo_points_the_cli_at_loopback_with_its_own_config_folder(tmp_path: Path) -> None:
    demo = DemoModel("http://127.0.0.1:4567", root=tmp_path / "demo")
    env = SessionLauncher(_store(), demo=demo).claude_env(SessionOptions(scenario="bash"))
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4567"
    assert env["CLAUDE_CONFIG_DIR"] == str(demo.config_dir)
    assert not env["CLAUDE_CONFIG_DIR"].startswith(os.path.expanduser("~"))
    demo.cleanup()
    assert not (tmp_path / "demo").exists()


def test_a_real_session_gets_the_key_from_the_keyring_and_the_users_gateway(
        tmp_path: Path) -> None:
    store = _store()
    store.set(SecretName.ANTHROPIC_API_KEY, "sk-ant-test-key-123456")
    launcher = SessionLauncher(store, anthropic_base_url="http://127.0.0.1:9999")
    env = launcher.claude_env(SessionOptions(cwd=str(tmp_path)))
    assert env == {"ANTHROPIC_API_KEY": "sk-ant-test-key-123456",
                   "ANTHROPIC_BASE_URL": "http://127.0.0.1:9999"}
    assert "sk-ant-test-key-123456" not in repr(launcher)


def test_without_a_key_nothing_is_invented(tmp_path: Path) -> None:
    assert SessionLauncher(_store()).claude_env(SessionOptions(cwd=str(tmp_path))) == {}
