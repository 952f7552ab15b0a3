"""The scripted model: a loopback Anthropic Messages API endpoint that plays scenarios.

It lets the real Claude Code CLI run with no network and no account (``--demo`` and the
end-to-end tests). See ``server`` for the endpoint, ``scenario`` for the data files,
``request_info`` for how sessions, positions and side requests are recognised, and
``cli_env`` for the environment the CLI needs.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cli_env import build_cli_env, scripted_api_key
    from .request_info import SCENARIO_HEADER, RequestInfo, ToolResultRecord, analyse_request
    from .scenario import (
        Scenario,
        ScenarioError,
        ScenarioLibrary,
        ScenarioResolver,
        ScenarioStep,
        SubagentScript,
        ToolCall,
        load_builtin_scenario,
        load_scenario_file,
        parse_scenario,
    )
    from .scenario_names import builtin_scenario_names
    from .server import RequestRecord, ScriptedModelServer, ThreadedScriptedModel, run_in_thread

_HOMES = {
    "build_cli_env": "cli_env", "scripted_api_key": "cli_env",
    "SCENARIO_HEADER": "request_info", "RequestInfo": "request_info",
    "ToolResultRecord": "request_info", "analyse_request": "request_info",
    "Scenario": "scenario", "ScenarioError": "scenario", "ScenarioLibrary": "scenario",
    "ScenarioResolver": "scenario", "ScenarioStep": "scenario", "SubagentScript": "scenario",
    "ToolCall": "scenario",
    "builtin_scenario_names": "scenario_names", "load_builtin_scenario": "scenario",
    "load_scenario_file": "scenario", "parse_scenario": "scenario",
    "RequestRecord": "server", "ScriptedModelServer": "server",
    "ThreadedScriptedModel": "server", "run_in_thread": "server",
}
"""Where each public name lives. The names load on first use: a session that only needs
the CLI's environment (`cli_env`, an external scripted model) never loads the server and
the scenario models (they cost start-up time and memory)."""


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "SCENARIO_HEADER",
    "RequestInfo",
    "RequestRecord",
    "Scenario",
    "ScenarioError",
    "ScenarioLibrary",
    "ScenarioResolver",
    "ScenarioStep",
    "ScriptedModelServer",
    "SubagentScript",
    "ThreadedScriptedModel",
    "ToolCall",
    "ToolResultRecord",
    "analyse_request",
    "build_cli_env",
    "builtin_scenario_names",
    "load_builtin_scenario",
    "load_scenario_file",
    "parse_scenario",
    "run_in_thread",
    "scripted_api_key",
]
