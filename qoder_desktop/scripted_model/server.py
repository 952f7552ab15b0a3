"""A loopback-only HTTP endpoint that speaks the Anthropic Messages API and plays scenarios.

Point the Claude Code CLI at it with ``ANTHROPIC_BASE_URL=server.base_url`` (see
:mod:`.cli_env`). How the scenario and the position in it are found, and how side
requests are told apart, is documented in :mod:`.request_info`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.config import Config
from uvicorn.server import Server

from .outcome import answers_text, reason_text, step_outcome
from .request_info import RequestInfo, ToolResultRecord, analyse_request, estimate_tokens
from .scenario import CWD_PLACEHOLDER, PLAN_FILE_PLACEHOLDER, Scenario, ScenarioLibrary, substitute
from .wire import ScriptedReply, error_body, stream_reply, text_block, tool_use_block

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
SIDE_REPLY_TEXT = "OK"
# Compaction asks for "an <analysis> block followed by a <summary> block".
SUMMARY_REPLY_TEXT = (
    "<analysis>A scripted demo session.</analysis>\n"
    "<summary>Scripted session: the scripted model played a prepared scenario.</summary>"
)
DEFAULT_MODEL = "scripted-model"


@dataclass(frozen=True)
class RequestRecord:
    """One request the server answered (for tests and debugging)."""

    method: str
    path: str
    kind: str  # "main", "side", "count_tokens" or "other"
    model: str | None = None
    scenario: str | None = None
    step_index: int | None = None
    session_id: str | None = None
    stream: bool | None = None


class _QuietServer(Server):
    """uvicorn without signal handling: the host application owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ScriptedModelServer:
    """Serves ``POST /v1/messages`` (+ ``count_tokens``) on 127.0.0.1, on a free port.

    ``scenario_resolver`` maps a scenario name to a :class:`Scenario` (or ``None`` if
    unknown); by default the shipped scenarios. ``default_scenario`` is played when a
    session names none. ``default_cwd`` fills ``{cwd}`` when a request doesn't reveal the
    working directory. ``record_bodies`` keeps raw request bodies in ``raw_requests``.

    Readable state (appended on the server's event loop; safe to read from other threads):
    ``tool_results`` (each tool result once, in order of arrival), ``requests``.
    """

    def __init__(
        self,
        scenario_resolver: Callable[[str], Scenario | None] | None = None,
        *,
        default_scenario: str = "demo",
        default_cwd: str | None = None,
        record_bodies: bool = False,
    ) -> None:
        self.scenario_resolver = scenario_resolver or ScenarioLibrary()
        self.default_scenario = default_scenario
        self.default_cwd = default_cwd
        self.record_bodies = record_bodies
        self.tool_results: list[ToolResultRecord] = []
        self.requests: list[RequestRecord] = []
        self.raw_requests: list[dict[str, Any]] = []
        self._seen_tool_results: set[str] = set()
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._port: int | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._count_tokens, methods=["POST"]),
                Route(
                    "/{path:path}",
                    self._fallback,
                    methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
                ),
            ]
        )

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("ScriptedModelServer is not started")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    async def start(self) -> None:
        """Bind 127.0.0.1 on a free port and start serving (returns once listening)."""
        if self._task is not None:
            raise RuntimeError("ScriptedModelServer already started")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((LOOPBACK, 0))
        self._port = sock.getsockname()[1]
        config = Config(
            self.app,
            host=LOOPBACK,
            port=self._port,
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=1,
            ws="none",  # plain HTTP: uvicorn's "auto" would import a WebSocket library
        )
        self._server = _QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # re-raise the startup error
                raise RuntimeError("scripted model server stopped during startup")
            await asyncio.sleep(0.01)
        log.info("scripted model listening on %s", self.base_url)

    async def stop(self) -> None:
        """Stop serving; open streams are cut after a short grace period."""
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=3)
        except TimeoutError:
            self._server.force_exit = True
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        except Exception:
            # It is stopped either way. (Seen under heavy load with qasync: a timer of the
            # server's main loop fired while Qt processed events outside the running
            # loop, so its asyncio.sleep found no running loop.)
            log.warning("the scripted model server stopped with an error", exc_info=True)
        self._server = None
        self._task = None

    async def __aenter__(self) -> ScriptedModelServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ handlers

    async def _json_body(self, request: Request) -> dict[str, Any] | None:
        try:
            body = await request.json()
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    async def _messages(self, request: Request) -> Response:
        body = await self._json_body(request)
        if body is None:
            error = error_body("invalid_request_error", "body must be a JSON object")
            return JSONResponse(error, status_code=400)
        if self.record_bodies:
            self.raw_requests.append(
                {"path": request.url.path, "headers": dict(request.headers), "body": body}
            )
        info = analyse_request(body, dict(request.headers))
        self._record_tool_results(info)
        reply, step_index, script = self._reply_for(info, body)
        stream = bool(body.get("stream"))
        self.requests.append(
            RequestRecord(
                method="POST",
                path=request.url.path,
                kind="side" if info.is_side_request else "main",
                model=info.model,
                scenario=script,
                step_index=step_index,
                session_id=info.session_id,
                stream=stream,
            )
        )
        log.debug(
            "messages: side=%s scenario=%s step=%s model=%s",
            info.is_side_request,
            info.scenario_name,
            step_index,
            info.model,
        )
        if stream:
            return StreamingResponse(
                stream_reply(reply),
                media_type="text/event-stream",
                headers={"cache-control": "no-cache", "request-id": reply.message_id},
            )
        if reply.delay_seconds:
            await asyncio.sleep(reply.delay_seconds)
        return JSONResponse(reply.to_message(), headers={"request-id": reply.message_id})

    async def _count_tokens(self, request: Request) -> Response:
        body = await self._json_body(request)
        self.requests.append(RequestRecord("POST", request.url.path, "count_tokens"))
        return JSONResponse({"input_tokens": estimate_tokens(body)})

    async def _fallback(self, request: Request) -> Response:
        """Anything else: ``HEAD`` gets 200 (the CLI's ``HEAD /api/hello`` reachability
        probe, sent when non-essential traffic is not disabled); the rest a 404 JSON error."""
        self.requests.append(RequestRecord(request.method, request.url.path, "other"))
        log.debug("scripted model: unhandled %s %s", request.method, request.url.path)
        if request.method == "HEAD":
            return Response(status_code=200)
        return JSONResponse(
            error_body("not_found_error", f"{request.method} {request.url.path} is not served"),
            status_code=404,
        )

    # ------------------------------------------------------------------ scenario logic

    def _record_tool_results(self, info: RequestInfo) -> None:
        if info.is_side_request:
            return
        for record in info.tool_results:
            if record.tool_use_id not in self._seen_tool_results:
                self._seen_tool_results.add(record.tool_use_id)
                self.tool_results.append(record)

    def _scenario_name(self, info: RequestInfo) -> str:
        return info.scenario_name or self.default_scenario

    def _placeholders(self, info: RequestInfo) -> dict[str, str]:
        """Values for ``{cwd}`` and ``{plan_file}``; unknown ones are left in place."""
        values: dict[str, str] = {}
        cwd = info.cwd or self.default_cwd
        if cwd:
            values[CWD_PLACEHOLDER] = cwd.rstrip("/") or "/"
        if info.plan_file:
            values[PLAN_FILE_PLACEHOLDER] = info.plan_file
        elif cwd:  # not in plan mode: a harmless stand-in inside the workspace
            values[PLAN_FILE_PLACEHOLDER] = f"{cwd.rstrip('/')}/PLAN.md"
        return values

    def _reply_for(
        self, info: RequestInfo, body: dict[str, Any]
    ) -> tuple[ScriptedReply, int | None, str | None]:
        """The reply, the step it plays (None: not a step) and the script's name (a
        sub-agent's own script when the conversation is a sub-agent's)."""
        model = info.model or DEFAULT_MODEL
        tokens = estimate_tokens(body.get("messages"))
        if info.is_side_request:
            summary = info.side_reason == "text-only instruction"
            text = SUMMARY_REPLY_TEXT if summary else SIDE_REPLY_TEXT
            return ScriptedReply(model, [text_block(text)], "end_turn", tokens), None, None
        name = self._scenario_name(info)
        try:
            scenario = self.scenario_resolver(name)
        except Exception as exc:  # a broken scenario file must show up in the chat, not crash
            log.exception("scenario %r could not be loaded", name)
            text = f"[scripted model] scenario {name!r} could not be loaded: {exc}"
            return ScriptedReply(model, [text_block(text)], "end_turn", tokens), None, name
        if scenario is None:
            known = getattr(self.scenario_resolver, "names", None)
            listing = f" Known scenarios: {', '.join(known())}." if callable(known) else ""
            text = f"[scripted model] unknown scenario {name!r}.{listing}"
            return ScriptedReply(model, [text_block(text)], "end_turn", tokens), None, name
        scenario = scenario.script_for(info.first_prompt)

        if info.last_step_index is None:
            index, step = scenario.step_for_tool_count(info.tool_uses_in_turn)
        else:
            records = info.last_step_results
            fills = {"{answers}": answers_text(records), "{reason}": reason_text(records)}
            index, step = scenario.step_after(info.last_step_index, step_outcome(records), fills)
        content: list[dict[str, Any]] = []
        if step.text:
            content.append(text_block(step.text))
        placeholders = self._placeholders(info)
        for k, call in enumerate(step.tool_calls):
            tool_input = substitute(call.input, placeholders)
            content.append(tool_use_block(call.tool, tool_input, tag=f"{index:02d}{k}"))
        stop_reason = "tool_use" if step.tool_calls else "end_turn"
        reply = ScriptedReply(model, content, stop_reason, tokens, step.delay_seconds)
        return reply, index, scenario.name


class ThreadedScriptedModel:
    """Runs a :class:`ScriptedModelServer` on its own event loop in a daemon thread.

    For synchronous code and tests::

        with ThreadedScriptedModel() as model:
            env = build_cli_env(model.base_url, config_dir)
            ...
            assert model.server.tool_results
    """

    def __init__(
        self, scenario_resolver: Callable[[str], Scenario | None] | None = None, **kwargs: Any
    ) -> None:
        self.server = ScriptedModelServer(scenario_resolver, **kwargs)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def tool_results(self) -> list[ToolResultRecord]:
        return self.server.tool_results

    def start(self) -> None:
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.server.start())
            except BaseException as exc:  # report to the starting thread
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="scripted-model", daemon=True)
        self._thread.start()
        ready.wait(timeout=10)
        if errors:
            raise errors[0]
        if not ready.is_set():
            raise RuntimeError("scripted model server did not start within 10 s")

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        future = asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop)
        with contextlib.suppress(Exception):
            future.result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop = None
        self._thread = None

    def __enter__(self) -> ThreadedScriptedModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def run_in_thread(
    scenario_resolver: Callable[[str], Scenario | None] | None = None, **kwargs: Any
) -> Iterator[ScriptedModelServer]:
    """Context manager: a started server on a background thread; yields the server."""
    with ThreadedScriptedModel(scenario_resolver, **kwargs) as threaded:
        yield threaded.server
