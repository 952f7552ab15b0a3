"""The names of the shipped scenarios, without loading the scenario models.

The desktop app lists them in the main window (``--demo``) while its scripted model runs
as a process of its own: listing the files needs neither pydantic nor the models that
parse a scenario (`scenario`), which that process loads.
"""

from __future__ import annotations

from importlib import resources

SCENARIO_FOLDER = "scenarios"
"""The package data folder that holds one ``<name>.json`` file per shipped scenario."""


def builtin_scenario_names() -> list[str]:
    """Names of the scenarios shipped in ``qoder_desktop/scripted_model/scenarios``."""
    folder = resources.files(__package__).joinpath(SCENARIO_FOLDER)
    return sorted(
        entry.name[: -len(".json")] for entry in folder.iterdir() if entry.name.endswith(".json")
    )
