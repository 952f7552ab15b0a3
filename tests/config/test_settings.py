"""Settings: defaults, validation, repair of broken files, atomic save, trust."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from qoder_desktop.config.paths import AppPaths
from qoder_desktop.config.settings import Settings, load_settings, save_settings
from qoder_desktop.domain.models import Backend, PermissionMode


def _broken_copies(folder: Path) -> list[Path]:
    return sorted(folder.glob("settings.json.broken-*"))


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    loaded = load_settings(tmp_path / "settings.json")
    assert loaded.ok and loaded.problems == ()
    assert loaded.settings == Settings()
    s = loaded.settings
    assert s.default_backend is Backend.CLAUDE
    assert s.default_permission_mode is PermissionMode.DEFAULT
    assert s.gateway_port == 8765
    assert s.notifications.only_when_inactive and not s.notifications.sound
    assert not (tmp_path / "settings.json").exists()


def test_save_then_load_round_trips(app_paths: AppPaths) -> None:
    settings = Settings(default_backend=Backend.QODER, default_model="claude-x",
                        default_allowed_tools=["Read", "Bash(git status:*)", "Read"],
                        trusted_workspaces=[str(app_paths.cache_dir)],
                        anthropic_base_url="http://127.0.0.1:9000")
    assert settings.default_allowed_tools == ["Read", "Bash(git status:*)"]
    save_settings(settings, app_paths.settings_file)
    loaded = load_settings(app_paths.settings_file)
    assert loaded.ok
    assert loaded.settings == settings
    assert stat.S_IMODE(app_paths.settings_file.stat().st_mode) == 0o600


def test_atomic_save_leaves_no_temp_files_and_replaces_whole(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    path = tmp_path / "conf" / "settings.json"
    save_settings(Settings(gateway_port=9000), path)
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]

    def no_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError, match="disk full"):
        save_settings(Settings(gateway_port=9999), path)
    monkeypatch.undo()
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]
    assert load_settings(path).settings.gateway_port == 9000


def test_broken_json_is_kept_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"gateway_port": 9000,', encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings == Settings()
    assert len(loaded.problems) == 1
    assert "not valid JSON" in loaded.problems[0] and "line 1" in loaded.problems[0]
    [kept] = _broken_copies(tmp_path)
    assert loaded.broken_copy == kept
    assert kept.read_text(encoding="utf-8") == '{"gateway_port": 9000,'
    assert str(kept) in loaded.problems[0]
    assert load_settings(path).ok  # the next start is clean


def test_not_an_object_is_broken(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("[1, 2]", encoding="utf-8")
    loaded = load_settings(path)
    assert "JSON object" in loaded.problems[0]
    assert len(_broken_copies(tmp_path)) == 1


def test_invalid_values_fall_back_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = {
        "gateway_port": 80,
        "default_model": "opus",
        "colour": "blue",
        "anthropic_api_key": "sk-ant-do-not-keep-me-here",
        "notifications": {"enabled": False, "sound": "loud", "volume": 3},
        "trusted_workspaces": ["/srv/a", "relative/dir", "/srv/b/../b"],
    }
    path.write_text(json.dumps(original), encoding="utf-8")
    loaded = load_settings(path)
    s = loaded.settings
    assert s.gateway_port == 8765 and s.default_model == "opus"
    assert s.notifications.enabled is False and s.notifications.sound is False
    assert s.trusted_workspaces == ["/srv/a", "/srv/b"]
    text = "\n".join(loaded.problems)
    assert "gateway_port:" in text and "greater than or equal to 1024" in text
    assert "colour: unknown setting, ignored." in text
    assert "notifications.volume: unknown setting" in text
    assert "notifications.sound:" in text
    assert "trusted_workspaces.1: a trusted workspace must be an absolute path" in text
    assert "keyring" in next(p for p in loaded.problems if p.startswith("anthropic_api_key"))
    assert "sk-ant-" not in text
    [kept] = _broken_copies(tmp_path)
    assert json.loads(kept.read_text(encoding="utf-8")) == original
    repaired = json.loads(path.read_text(encoding="utf-8"))
    assert "colour" not in repaired and repaired["default_model"] == "opus"
    assert load_settings(path).ok


def test_bypass_cannot_be_the_default() -> None:
    for mode in ("bypassPermissions", "yolo"):
        with pytest.raises(ValidationError, match="cannot be the default permission mode"):
            Settings(default_permission_mode=mode)  # type: ignore[arg-type]
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.default_permission_mode = PermissionMode.BYPASS
    assert Settings(default_permission_mode=PermissionMode.PLAN).default_permission_mode \
        is PermissionMode.PLAN


def test_bypass_in_the_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"default_permission_mode": "bypassPermissions"}', encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings.default_permission_mode is PermissionMode.DEFAULT
    assert loaded.problems[0].startswith("default_permission_mode: 'bypassPermissions' "
                                         "cannot be the default permission mode")


def test_other_validation() -> None:
    with pytest.raises(ValidationError, match="extra"):
        Settings(unknown=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Settings(gateway_port=70000)
    with pytest.raises(ValidationError, match="http"):
        Settings(anthropic_base_url="ftp://example.com")
    with pytest.raises(ValidationError, match="not a rule"):
        Settings(default_disallowed_tools=["Bash(rm"])
    with pytest.raises(ValidationError, match="unknown settings version"):
        Settings(version=99)
    assert Settings(default_model="  ").default_model is None


def test_trust_list(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (tmp_path / "workshop").mkdir()
    link = tmp_path / "link"
    link.symlink_to(work)
    settings = Settings(trusted_workspaces=[str(work), str(work) + "/", str(link)])
    assert settings.trusted_workspaces == [str(work), str(link)]
    assert settings.is_trusted(work)
    assert settings.is_trusted(work / "sub")
    assert settings.is_trusted(str(work / "sub" / "new-file.txt"))
    assert not settings.is_trusted(tmp_path / "workshop")
    assert not settings.is_trusted(tmp_path)
    assert not settings.is_trusted(work / ".." / "workshop")

    via_link = Settings(trusted_workspaces=[str(link)])
    assert via_link.is_trusted(work / "sub")
    escape = work / "escape"
    escape.symlink_to(tmp_path / "workshop")
    assert not Settings(trusted_workspaces=[str(work)]).is_trusted(escape / "x")
    assert not Settings().is_trusted(work)
