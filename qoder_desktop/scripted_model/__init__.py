"""The scripted model: a loopback Anthropic Messages API endpoint that plays scenarios.

It lets the real Claude Code CLI run with no network and no account (``--demo`` and the
end-to-end tests). See ``server`` for the endpoint, ``scenario`` for the data files,
``request_info`` for how sessions, positions and side requests are recognised, and
``cli_env`` for the environment the CLI needs.
"""

from .cli_env import build_cli_env, scripted_api_key
from .request_info import SCENARIO_HEADER, RequestInfo, ToolResultRecord, analyse_request
from .scenario import (
    Scenario,
    ScenarioError,
    ScenarioLibrary,
    ScenarioResolver,
    ScenarioStep,
    ToolCall,
    builtin_scenario_names,
    load_builtin_scenario,
    load_scenario_file,
    parse_scenario,
)
from .server import RequestRecord, ScriptedModelServer, ThreadedScriptedModel, run_in_thread

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
