"""packaging/install-linux.sh: the launcher, icon and metainfo land in the user's XDG dirs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "packaging" / "install-linux.sh"
RESOURCES = ROOT / "resources"
DESKTOP = "qoder-desktop.desktop"
ICON = "io.qoder.Desktop.svg"
METAINFO = "io.qoder.Desktop.metainfo.xml"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("bash"),
                                reason="the install script is for Linux desktops")


def make_bundle(folder: Path, *, with_resources: bool = True) -> Path:
    """A fake one-folder bundle: an executable that prints a version, and _internal/."""
    (folder / "_internal").mkdir(parents=True)
    (folder / "_internal" / "payload.txt").write_text("bundled", encoding="utf-8")
    exe = folder / "qoder-desktop"
    exe.write_text('#!/bin/sh\necho "qoder-desktop 0.1.0 $*"\n', encoding="utf-8")
    exe.chmod(0o755)
    if with_resources:
        shutil.copytree(RESOURCES, folder / "resources",
                        ignore=shutil.ignore_patterns("README.md", "tray-icon.svg"))
    return folder


def run_install(home: Path, *args: str, data_home: Path | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    if data_home is not None:
        env["XDG_DATA_HOME"] = str(data_home)
    result = subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def desktop_keys(path: Path) -> dict[str, list[str]]:
    """Every key of the desktop file with its values, in order (actions repeat Exec)."""
    keys: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            keys.setdefault(key, []).append(value)
    return keys


def exec_argv(value: str) -> list[str]:
    """Split an Exec value the way the Desktop Entry Specification says launchers do."""
    unescaped = value.replace("\\\\", "\x00").replace("\\s", " ").replace("\x00", "\\")
    argv: list[str] = []
    word: str | None = None
    chars = iter(unescaped)
    for char in chars:
        if char == '"':
            word = word or ""
            for inner in chars:
                if inner == '"':
                    break
                word += next(chars) if inner == "\\" else inner
        elif char == " ":
            if word is not None:
                argv.append(word)
            word = None
        else:
            word = (word or "") + char
    if word is not None:
        argv.append(word)
    return [arg.replace("%%", "%") for arg in argv if arg not in ("%U", "%u", "%F", "%f")]


NEWER_SPEC_ERRORS = ('value "1.5" for key "Version"', 'key "SingleMainWindow"')
"""What desktop-file-validate < 0.27 (Debian 12) says about valid Desktop Entry 1.5 files."""


def validate(desktop_file: Path) -> None:
    """desktop-file-validate, when installed, finds no error (but old-validator ones)."""
    if not shutil.which("desktop-file-validate"):
        return
    result = subprocess.run(["desktop-file-validate", str(desktop_file)],
                            capture_output=True, text=True, check=False)
    errors = [line for line in (result.stdout + result.stderr).splitlines()
              if ": error:" in line and not any(e in line for e in NEWER_SPEC_ERRORS)]
    assert errors == []


def test_install_puts_files_in_xdg_dirs_and_exec_points_at_the_bundle(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "dist" / "qoder-desktop")
    home, data = tmp_path / "home", tmp_path / "xdg-data"
    result = run_install(home, "--bundle", str(bundle), data_home=data)

    installed = home / ".local" / "lib" / "qoder-desktop"
    executable = installed / "qoder-desktop"
    assert (installed / "_internal" / "payload.txt").read_text(encoding="utf-8") == "bundled"
    assert os.access(executable, os.X_OK)
    desktop = data / "applications" / DESKTOP
    keys = desktop_keys(desktop)
    assert keys["Exec"] == [str(executable), f"{executable} --demo"]
    assert keys["TryExec"] == [str(executable)]
    assert keys["Icon"] == ["io.qoder.Desktop"]
    assert ((data / "icons" / "hicolor" / "scalable" / "apps" / ICON).read_bytes()
            == (RESOURCES / ICON).read_bytes())
    assert (data / "metainfo" / METAINFO).read_bytes() == (RESOURCES / METAINFO).read_bytes()
    link = home / ".local" / "bin" / "qoder-desktop"
    assert link.is_symlink() and link.resolve() == executable.resolve()
    assert not (home / ".local" / "share").exists()  # XDG_DATA_HOME was honoured
    assert str(desktop) in result.stdout
    validate(desktop)
    if shutil.which("appstreamcli"):
        subprocess.run(["appstreamcli", "validate", "--no-net", str(data / "metainfo" / METAINFO)],
                       check=True, capture_output=True)

    launched = subprocess.run(exec_argv(keys["Exec"][1]), capture_output=True, text=True,
                              check=True)
    assert launched.stdout.strip() == "qoder-desktop 0.1.0 --demo"


def test_default_xdg_data_home_is_local_share(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "bundle")
    home = tmp_path / "home"
    run_install(home, "--bundle", str(bundle), "--no-bin-link")
    share = home / ".local" / "share"
    assert (share / "applications" / DESKTOP).is_file()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / ICON).is_file()
    assert (share / "metainfo" / METAINFO).is_file()
    assert not (home / ".local" / "bin").exists()


def test_in_place_with_a_path_that_needs_quoting(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "my apps" / "50% $HOME's")
    data = tmp_path / "data"
    run_install(tmp_path / "home", "--bundle", str(bundle), "--in-place", data_home=data)
    desktop = data / "applications" / DESKTOP
    keys = desktop_keys(desktop)
    assert keys["Exec"][0].startswith('"') and keys["Exec"][0].endswith('"')
    assert exec_argv(keys["Exec"][0]) == [str(bundle / "qoder-desktop")]
    assert exec_argv(keys["Exec"][1]) == [str(bundle / "qoder-desktop"), "--demo"]
    assert keys["TryExec"] == [str(bundle / "qoder-desktop")]
    assert not (tmp_path / "home" / ".local" / "lib").exists()
    validate(desktop)


def test_resources_fall_back_to_the_repository(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "bundle", with_resources=False)
    data = tmp_path / "data"
    run_install(tmp_path / "home", "--bundle", str(bundle), data_home=data)
    assert (data / "metainfo" / METAINFO).read_bytes() == (RESOURCES / METAINFO).read_bytes()


def test_the_bundle_installs_itself(tmp_path: Path) -> None:
    """The spec copies the script into the bundle: run there, it needs no --bundle."""
    bundle = make_bundle(tmp_path / "bundle")
    shutil.copy2(SCRIPT, bundle / "install-linux.sh")
    home, data = tmp_path / "home", tmp_path / "data"
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_DATA_HOME": str(data)}
    subprocess.run(["bash", str(bundle / "install-linux.sh")], env=env, check=True,
                   capture_output=True, text=True, cwd=tmp_path)
    executable = home / ".local" / "lib" / "qoder-desktop" / "qoder-desktop"
    assert desktop_keys(data / "applications" / DESKTOP)["TryExec"] == [str(executable)]


def test_reinstall_replaces_and_uninstall_removes(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "bundle")
    home, data = tmp_path / "home", tmp_path / "data"
    run_install(home, "--bundle", str(bundle), data_home=data)
    installed = home / ".local" / "lib" / "qoder-desktop"
    (installed / "stale.txt").write_text("old", encoding="utf-8")
    run_install(home, "--bundle", str(bundle), data_home=data)
    assert not (installed / "stale.txt").exists()
    (data / "applications" / "other.desktop").write_text("[Desktop Entry]\n", encoding="utf-8")

    run_install(home, "--uninstall", data_home=data)
    assert not installed.exists()
    assert not (data / "applications" / DESKTOP).exists()
    assert not (data / "icons" / "hicolor" / "scalable" / "apps" / ICON).exists()
    assert not (data / "metainfo" / METAINFO).exists()
    assert not (home / ".local" / "bin" / "qoder-desktop").exists()
    assert (data / "applications" / "other.desktop").exists()
    assert bundle.is_dir()


def test_refuses_what_is_not_a_bundle_or_not_its_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "empty").mkdir()
    result = run_install(home, "--bundle", str(tmp_path / "empty"), check=False)
    assert result.returncode != 0
    assert "not a Qoder Desktop bundle" in result.stderr

    bundle = make_bundle(tmp_path / "bundle")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine", encoding="utf-8")
    result = run_install(home, "--bundle", str(bundle), "--dest", str(foreign), check=False)
    assert result.returncode != 0 and "not made by this script" in result.stderr
    assert (foreign / "keep.txt").exists()
    run_install(home, "--uninstall", "--dest", str(foreign))
    assert (foreign / "keep.txt").exists()


def test_a_real_binary_in_local_bin_is_kept(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path / "bundle")
    home = tmp_path / "home"
    own = home / ".local" / "bin" / "qoder-desktop"
    own.parent.mkdir(parents=True)
    own.write_text("#!/bin/sh\n", encoding="utf-8")
    result = run_install(home, "--bundle", str(bundle), data_home=tmp_path / "data")
    assert not own.is_symlink() and own.read_text(encoding="utf-8") == "#!/bin/sh\n"
    assert "kept" in result.stdout
