"""Guards around the SDKs' permission path that both adapters share.

- `result_problem`: what is wrong with a permission result before it goes to the SDK
  (anything but a well-formed allow or deny becomes a deny in `AgentSession`).
- `track_every_request`: both SDKs keep one in-flight handler per control request id,
  so a second request with a reused id hides the first from the CLI's cancel. The
  replacement table keeps all of them, and a cancel withdraws every one.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


def result_problem(result: Any, allow_type: type, deny_type: type) -> str | None:
    """Why `result` is not a well-formed permission result of this SDK (None: it is).

    An allow must carry the input to run as a dict (and a list of updates or none); a
    deny must carry a non-empty message and a boolean interrupt.
    """
    if isinstance(result, allow_type):
        if getattr(result, "behavior", None) != "allow":
            return "an allow result whose behavior is not 'allow'"
        if not isinstance(getattr(result, "updated_input", None), dict):
            return (f"an allow result without the input as an object (got "
                    f"{type(getattr(result, 'updated_input', None)).__name__})")
        updates = getattr(result, "updated_permissions", None)
        if updates is not None and not isinstance(updates, list):
            return f"an allow result whose updates are a {type(updates).__name__}, not a list"
        return None
    if isinstance(result, deny_type):
        if getattr(result, "behavior", None) != "deny":
            return "a deny result whose behavior is not 'deny'"
        message = getattr(result, "message", None)
        if not isinstance(message, str) or not message.strip():
            return "a deny result without a message"
        if not isinstance(getattr(result, "interrupt", None), bool):
            return "a deny result whose interrupt is not a boolean"
        return None
    return f"a {type(result).__name__}, not a permission result of this SDK"


class _Handlers:
    """The live handler tasks of one control request id (cancelling cancels them all)."""

    def __init__(self) -> None:
        self.tasks: list[Any] = []

    def __bool__(self) -> bool:
        return True

    def prune(self) -> None:
        """Forget finished tasks."""
        self.tasks = [task for task in self.tasks if not task.done()]

    def cancel(self) -> None:
        """Cancel every task still running under this id."""
        for task in list(self.tasks):
            task.cancel()


class EveryRequestById(dict[str, Any]):
    """An SDK's in-flight table that keeps every handler of a reused id, not only the last.

    The SDK stores `table[id] = task`, pops the id when a task finishes, and on a
    cancel pops it and cancels what it got. Here a store adds to the id's handlers, a
    pop returns them all (for the cancel) and drops the entry only once none runs.
    """

    def __setitem__(self, key: str, task: Any) -> None:
        handlers = dict.get(self, key)
        if handlers is None:
            handlers = _Handlers()
            dict.__setitem__(self, key, handlers)
        else:
            handlers.prune()
            if handlers.tasks:
                log.warning("the CLI reused the control request id %s while it was still "
                            "pending; a cancel for it withdraws every request with that id",
                            key)
        handlers.tasks.append(task)

    def pop(self, key: str, *default: Any) -> Any:
        """The id's handlers; the entry goes once every handler finished."""
        handlers = dict.get(self, key)
        if handlers is None:
            return default[0] if default else dict.pop(self, key)
        handlers.prune()
        if not handlers.tasks:
            dict.pop(self, key, None)
        return handlers


def track_every_request(client: Any) -> bool:
    """Make a connected SDK client's query keep every handler per request id.

    Returns False (and logs) when the SDK does not have the table this relies on, so a
    changed SDK is noticed rather than silently unguarded.
    """
    query: Any = getattr(client, "_query", None)
    table = getattr(query, "_inflight_requests", None)
    if isinstance(table, EveryRequestById):
        return True
    if not isinstance(table, dict):
        log.warning("the agent SDK has no in-flight request table; a cancel for a reused "
                    "request id may leave an earlier request open")
        return False
    replacement = EveryRequestById()
    for key, task in table.items():
        replacement[key] = task
    query._inflight_requests = replacement
    return True
