"""`qoder-desktop --help` and each command's help, as a new user meets them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers.entry_point import run_cli, scratch_env

import qoder_desktop
from qoder_desktop.cli import build_parser, parse_app_args, scenario_names
from qoder_desktop.scripted_model.scenario import builtin_scenario_names
from qoder_desktop.subcommands import SUBCOMMANDS


def test_the_help_lists_every_command_and_every_scenario(tmp_path: Path) -> None:
    run = run_cli(scratch_env(tmp_path), "--help")
    assert run.returncode == 0, run.stderr
    for command in SUBCOMMANDS:
        assert f"qoder-desktop {command.usage}\n      {command.summary}\n" in run.stdout
    assert {"ledger", "rules", "hooks", "hook"} <= {command.name for command in SUBCOMMANDS}
    names = builtin_scenario_names()
    assert scenario_names() == names and "demo" in names and len(names) > 3
    flat = " ".join(run.stdout.split())
    assert "one of: " + ", ".join(names) in flat


@pytest.mark.parametrize("name", [command.name for command in SUBCOMMANDS])
def test_each_command_has_a_real_help(tmp_path: Path, name: str) -> None:
    run = run_cli(scratch_env(tmp_path), name, "--help")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"usage: qoder-desktop {name} ")
    assert len(run.stdout.splitlines()) >= 6  # a description, not just the usage line
    assert run.stderr == ""
    assert not (tmp_path / "qd").exists()  # help starts nothing


@pytest.mark.parametrize("name", ["ledger", "rules", "hooks"])
def test_a_command_without_its_verb_says_what_it_takes_and_exits_2(tmp_path: Path,
                                                                  name: str) -> None:
    run = run_cli(scratch_env(tmp_path), name)
    assert run.returncode == 2
    assert f"qoder-desktop {name}" in run.stderr and run.stdout == ""


def test_an_unknown_scenario_is_refused_with_the_list_before_anything_opens(
        tmp_path: Path) -> None:
    run = run_cli(scratch_env(tmp_path), "--demo", "--scenario", "no_such_thing")
    assert run.returncode == 2
    assert "unknown scenario 'no_such_thing'" in run.stderr
    assert ", ".join(builtin_scenario_names()) in run.stderr
    assert not (tmp_path / "qd").exists()  # no window, no session, no data folder


def test_a_known_scenario_gets_past_the_arguments(tmp_path: Path) -> None:
    run = run_cli(scratch_env(tmp_path), "--demo", "--scenario", "bash")
    assert "no display found" in run.stderr  # it went on to open the window


def test_the_self_check_says_where_the_package_is(tmp_path: Path) -> None:
    env = scratch_env(tmp_path, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    run = run_cli(env, "--self-check")
    [app_line] = [line for line in run.stdout.splitlines() if line.split()[1:2] == ["app"]]
    package = Path(qoder_desktop.__file__).parent
    assert app_line.endswith(f", package {package}")
    assert (package / "__main__.py").is_file()  # the package, not one of its folders


ROOT = Path(__file__).resolve().parents[1]


def test_building_the_package_gives_no_license_deprecation_and_ships_the_license(
        tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "qoder_desktop").mkdir(parents=True)
    for name in ("pyproject.toml", "LICENSE", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copy(ROOT / "qoder_desktop" / "__init__.py", source / "qoder_desktop")
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v",
                          "-w", str(tmp_path / "wheels"), str(source)],
                         capture_output=True, text=True, timeout=300, check=False)
    if run.returncode != 0 and "setuptools" in run.stderr and "No matching" in run.stderr:
        pytest.skip("no setuptools>=77 in the configured package index")
    assert run.returncode == 0, run.stderr[-2000:]
    output = run.stdout + run.stderr
    assert "SetuptoolsDeprecationWarning" not in output
    assert "project.license" not in output
    [wheel] = (tmp_path / "wheels").glob("qoder_desktop-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
        [license_file] = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(license_file) == (ROOT / "LICENSE").read_bytes()
    assert "License-Expression: MIT" in text.splitlines()
    assert "License-File: LICENSE" in text.splitlines()


def test_no_arguments_give_every_option_at_the_parsers_default() -> None:
    """A start from a menu skips the parser; what it gets is what the parser gives."""
    assert parse_app_args([]) == build_parser().parse_args([])
    first, second = parse_app_args([]), parse_app_args([])
    first.add_dirs.append("/tmp/elsewhere")  # (a default list is never shared)
    assert second.add_dirs == [] and parse_app_args([]).add_dirs == []
    assert parse_app_args(["--demo"]).demo is True
