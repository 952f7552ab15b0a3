"""Qt-side helpers: the qasync loop, the real app wiring, a heartbeat, event probes.

Import only after `common.setup_env()` (offscreen platform, private home).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

from benchmarks.common import now
from qoder_desktop.ui.event_loop import AppEventLoop

T = TypeVar("T")


def qapp() -> QApplication:
    """The QApplication, created like `run_gui` does (style sheet, icon, no quit on close)."""
    from qoder_desktop.ui import icons

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    quiet_qt_messages()
    app.setApplicationName("Qoder Desktop")
    app.setQuitOnLastWindowClosed(False)
    app.setWindowIcon(icons.app_icon())
    app.setStyleSheet(icons.stylesheet())
    return app


def run_qasync(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run `main()` to completion on the app's `AppEventLoop` (Qt and asyncio, one thread)."""
    app = qapp()
    loop = AppEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        return loop.run_until_complete(main())


@dataclass
class Desktop:
    """The real app wiring (`DesktopApp`) with its core, as `run_gui` builds it."""

    app: Any
    broker: Any
    hub: Any
    db: Any
    ledger: Any
    demo: Any

    def close(self) -> None:
        """Close the views and the database (sessions must be stopped first)."""
        self.app.dialogs.close_all()
        self.app.bridge.unsubscribe()
        self.app.tray.dispose()
        self.app.window.set_quitting()
        self.app.window.close()
        self.db.close()
        if self.demo is not None:
            self.demo.cleanup()


def build_desktop(base_url: str | None = None, *, show: bool = True, gateway: bool = False,
                  wrap_factory: Callable[[Any], Any] | None = None) -> Desktop:
    """`DesktopApp` wired like `run_gui` does it, over a real SQLite store.

    Sessions go to the scripted model at `base_url`; `gateway` also starts the approval
    gateway (on a free port); `wrap_factory` may wrap the session factory (for timing).
    """
    from qoder_desktop.agents.factory import DemoModel, SessionLauncher
    from qoder_desktop.agents.hub import SessionHub
    from qoder_desktop.approval.broker import ApprovalBroker
    from qoder_desktop.config.paths import AppPaths
    from qoder_desktop.config.secrets import RedactSecrets, SecretStore
    from qoder_desktop.config.settings import load_settings
    from qoder_desktop.store.database import Database
    from qoder_desktop.store.ledger import Ledger
    from qoder_desktop.ui.control.settings import CurrentSettings
    from qoder_desktop.ui.wiring import DesktopApp

    paths = AppPaths.default().ensure()
    loaded = load_settings(paths.settings_file)
    db = Database.open(paths.database)
    ledger = Ledger(db)
    broker = ApprovalBroker(db, ledger)
    demo = DemoModel(base_url) if base_url else None
    redactor = RedactSecrets()
    secrets = SecretStore(redactor=redactor)
    launcher = SessionLauncher(secrets, demo=demo)
    factory: Any = launcher if wrap_factory is None else wrap_factory(launcher)
    settings = CurrentSettings(loaded.settings, paths.settings_file)
    hub = SessionHub(db, ledger, broker, factory, is_trusted=settings.is_trusted)
    desktop = DesktopApp(broker, hub, secrets, settings, demo_scenarios=None)
    if gateway:
        from qoder_desktop.gateway.contract import gateway_token
        from qoder_desktop.gateway.server import ApprovalGateway

        token = gateway_token(secrets, redactor=redactor)
        desktop.start_gateway(ApprovalGateway(broker, hub, token, port=0), token)
    if show:
        desktop.show()
    from qoder_desktop.diagnostics.memory import settle_memory

    settle_memory()  # as run_gui does once the window is on screen
    return Desktop(desktop, broker, hub, db, ledger, demo)


class Heartbeat(QObject):
    """A 5 ms Qt timer that records how late each tick came: the event loop's stalls."""

    def __init__(self, interval_ms: int = 5) -> None:
        super().__init__()
        self.interval_ms = interval_ms
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._last: float | None = None
        self.gaps: list[tuple[float, float]] = []
        """(tick time, gap since the previous tick in ms)"""

    def start(self) -> None:
        """Start ticking (clears earlier gaps)."""
        self.reset()
        self._timer.start()

    def stop(self) -> None:
        """Stop ticking."""
        self._timer.stop()
        self._last = None

    def reset(self) -> None:
        """Forget the gaps so far."""
        self.gaps = []
        self._last = None

    def _tick(self) -> None:
        t = now()
        if self._last is not None:
            self.gaps.append((t, (t - self._last) * 1000.0))
        self._last = t

    def max_stall_ms(self, since: float = 0.0, until: float = float("inf")) -> float:
        """The longest gap minus the nominal interval, among ticks in [since, until]."""
        gaps = [gap for t, gap in self.gaps if since <= t <= until]
        return max(0.0, max(gaps) - self.interval_ms) if gaps else 0.0

    def worst(self, count: int = 3) -> list[tuple[float, float]]:
        """The `count` longest gaps as (tick time, gap ms)."""
        return sorted(self.gaps, key=lambda item: -item[1])[:count]


@dataclass
class Probe:
    """Times of a dialog's show, expose, first paint and hide (perf_counter seconds)."""

    shown: float | None = None
    exposed: float | None = None
    painted: float | None = None
    hidden: float | None = None
    waiters: list[tuple[str, asyncio.Future[float]]] = field(default_factory=list)
    on_shown: Callable[[], None] | None = None

    def mark(self, what: str, t: float) -> None:
        """Record the first time of `what` and wake whoever waits for it."""
        if getattr(self, what) is None:
            setattr(self, what, t)
        for name, future in list(self.waiters):
            if name == what and not future.done():
                future.set_result(t)

    async def wait(self, what: str, timeout: float = 10.0) -> float:
        """The time of `what`, waiting for it if it has not happened yet."""
        value = getattr(self, what)
        if value is not None:
            return float(value)
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiters.append((what, future))
        return await asyncio.wait_for(future, timeout)


class _Filter(QObject):
    """Event filter feeding a `Probe` (installed on a dialog and on its QWindow)."""

    def __init__(self, probe: Probe, on_window: bool) -> None:
        super().__init__()
        self.probe = probe
        self.on_window = on_window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if self.on_window:
            if kind == QEvent.Type.Expose and cast(Any, watched).isExposed():
                self.probe.mark("exposed", now())
        elif kind == QEvent.Type.Paint:
            self.probe.mark("painted", now())
        elif kind == QEvent.Type.Hide:
            self.probe.mark("hidden", now())
        return False


def probe_dialog(dialog: Any, probe: Probe) -> None:
    """Attach `probe` to a dialog before it is shown (expose is hooked at `shown`)."""
    widget_filter = _Filter(probe, on_window=False)
    window_filter = _Filter(probe, on_window=True)
    dialog._bench_filters = (widget_filter, window_filter)
    dialog.installEventFilter(widget_filter)

    def on_shown() -> None:
        probe.mark("shown", now())
        if probe.on_shown is not None:
            probe.on_shown()
        handle = dialog.windowHandle()
        if handle is not None and not getattr(dialog, "_bench_window_hooked", False):
            dialog._bench_window_hooked = True
            handle.installEventFilter(window_filter)

    dialog.shown.connect(on_shown)


def probe_widget(widget: Any, probe: Probe) -> None:
    """Attach `probe` to any widget before it is shown (its native window is made now)."""
    widget_filter = _Filter(probe, on_window=False)
    window_filter = _Filter(probe, on_window=True)
    widget._bench_filters = (widget_filter, window_filter)
    widget.installEventFilter(widget_filter)
    widget.winId()
    handle = widget.windowHandle()
    if handle is not None:
        handle.installEventFilter(window_filter)


class Breakdown:
    """Times named calls on the path (harness-side wrappers; the app code is unchanged)."""

    def __init__(self) -> None:
        self.current: dict[str, float] = {}
        self.samples: list[dict[str, float]] = []

    def wrap(self, obj: Any, name: str, label: str) -> None:
        """Replace `obj.name` by a wrapper that adds its duration (ms) to `label`."""
        function = getattr(obj, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = now()
            try:
                return function(*args, **kwargs)
            finally:
                self.add(label, (now() - start) * 1e3)

        setattr(obj, name, timed)

    def add(self, label: str, ms: float) -> None:
        """Add `ms` to `label` in the current sample."""
        self.current[label] = self.current.get(label, 0.0) + ms

    def next_sample(self, keep: bool = True) -> None:
        """Close the current sample (keep it, or drop it as warm-up)."""
        if keep:
            self.samples.append(self.current)
        self.current = {}

    def medians(self) -> str:
        """"label med/p95" (ms) for every label, largest median first."""
        from benchmarks.common import summarize

        labels = {label for sample in self.samples for label in sample}
        values = {label: summarize([s.get(label, 0.0) for s in self.samples])
                  for label in labels}
        return ", ".join(f"{label} {v['median']:.2f}/{v['p95']:.2f}" for label, v in
                         sorted(values.items(), key=lambda item: -item[1]["median"]))


def quiet_qt_messages() -> None:
    """Drop the offscreen plugin's "does not support" chatter; keep other Qt messages."""
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_mode: Any, _context: Any, message: str) -> None:
        if "This plugin does not support" not in message:
            print(f"Qt: {message}", file=sys.stderr)

    qInstallMessageHandler(handler)


def hard_exit(code: int = 0) -> None:
    """Exit without interpreter teardown (PySide6 6.12 can crash while finalizing)."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def warm_up_as_start_up(desktop: Any) -> None:
    """Start-up's dialog warm-up, which the app runs once its window has painted (seconds
    before a first request); `build_desktop` wires the app without start-up. The first
    (cold) dialog of a process is measured on its own by `bench_dialog`."""
    from qoder_desktop.ui.start_up import warm_dialog

    warm_dialog(desktop.app)
    spares = getattr(desktop.app.dialogs, "spares", None)
    await asyncio.sleep(0.3)  # let the main window paint once
    for _ in range(100):  # and a warm-up that goes on over loop turns finish
        if spares is None or spares.is_idle():
            break
        await asyncio.sleep(0.05)
