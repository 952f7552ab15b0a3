"""Preview rendering: 1 MB markdown, 1 MB HTML and pathological nesting never block the loop.

Two paths, both offscreen under qasync with a 5 ms heartbeat:

* direct: `PreviewPane.show_preview(payload)` in a shown 600×400 pane, then 400 ms of
  event processing (the pane renders a long preview in stages over the next loop turns,
  and Qt lays large documents out lazily, in later ones) and a scroll to the end; three
  times per payload, and the worst of the three counts (the target says "never"); the
  notes give when the preview was on screen (the pane no longer `rendering`);
* app: an AskUserQuestion request whose four options carry the big/pathological previews
  goes through broker → bridge → `QuestionDialog` (the first preview renders as the
  dialog shows); then focus moves to each other option; then long plans go through
  the plan dialog (`PLANS`; it renders the plan before it opens).

The figure is the longest heartbeat stall over everything (target: never > 200 ms).
The floor beside it: a one-word preview through the same steps after every payload's
window, its longest stall (on a loaded machine the loop stalls without any preview).
"""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from benchmarks.common import Figure, emit, judge, log, now, parse_args, setup_env

LIMIT_MS = 200.0
REPEAT = 3
MB = 1024 * 1024


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def payloads() -> dict[str, tuple[str, str | None]]:
    """name → (text, kind): the big, the barely-under-the-limit and the pathological."""
    md_unit = ("## Section\n\nA paragraph with **bold**, *emphasis*, `code`, a "
               "[link](https://example.com/page) and ![an image](file:///etc/passwd).\n\n"
               "- first item\n- second item with `inline code`\n  - nested item\n\n"
               "```python\ndef handler(event):\n    return event.data\n```\n\n"
               "> A quoted remark.\n\n")
    html_unit = ("<div style=\"border:1px solid #ccc;padding:8px\"><h2>Section</h2>"
                 "<p>Text with <b>bold</b>, <i>italic</i> and <a href=\"https://x.org\">a "
                 "link</a>.</p><ul><li>one</li><li>two</li></ul>"
                 "<table><tr><td>a</td><td>b</td></tr></table><img src=\"file:///etc/passwd\">"
                 "</div>\n")
    rich_html_unit = ("<div style=\"padding:8px\"><h2>Section</h2><p>Text with <b>bold</b>, "
                      "<i>italic</i> and <a href=\"https://x.org\">a link</a>.</p>"
                      "<ul><li>one</li><li>two</li></ul><pre>code()</pre></div>\n")
    table_rows = "".join(f"<tr>{''.join(f'<td colspan=2>{r}.{c}</td>' for c in range(10))}</tr>"
                         for r in range(100))
    return {
        "markdown 1 MB": (_fill(md_unit, MB), "markdown"),
        "HTML 1 MB": ("<div>" + _fill(html_unit, MB) + "</div>", "html"),
        "markdown 63 KB (rendered rich)": (_fill(md_unit, 63 * 1024), "markdown"),
        "HTML 63 KB (rendered rich)": (_fill(rich_html_unit, 63 * 1024), "html"),
        "HTML 10,000 nested <div>": ("<div>" * 10_000 + "deep" + "</div>" * 10_000, "html"),
        "HTML 200 nested tables": ("<table><tr><td>" * 200 + "x" + "</td></tr></table>" * 200,
                                   "html"),
        "HTML table at the limits (100×10, colspan)": (f"<table>{table_rows}</table>", "html"),
        "markdown 20,000 nested quotes": (">" * 20_000 + " deep", "markdown"),
        "markdown 250 nested list levels": (
            "".join("  " * i + "- item\n" for i in range(250)), "markdown"),
        "markdown 20,000 unclosed emphasis": ("*a " * 20_000, "markdown"),
        "markdown 30,000 open brackets": ("[" * 30_000 + "](x)", "markdown"),
        "markdown 60,000-char word": ("x" * 60_000, "markdown"),
        "markdown '![' × 16,000 (was 23–28 s)": ("![" * 16_000, "markdown"),
        "markdown '![' × 32,000 (was 102 s)": ("![" * 32_000, "markdown"),
        "markdown '![x](' × 12,000": ("![x](" * 12_000, "markdown"),
        "HTML 20×50 table, colspan=rowspan=20 (was 18.7 s)": (
            "<table>" + ("<tr>" + "<td colspan=20 rowspan=20>x</td>" * 50 + "</tr>") * 20
            + "</table>", "html"),
        "HTML 10×100 table, colspan=rowspan=8": (
            "<table>" + ("<tr>" + "<td colspan=8 rowspan=8>x</td>" * 100 + "</tr>") * 10
            + "</table>", "html"),
    }


FLOOR_TEXT = "ok"
"""The floor: a one-word preview through the same steps, after every payload's window."""


async def _window(pane: Any, heartbeat: Any, text: str,
                  kind: str | None) -> tuple[float, float, float, Any]:
    """One preview in the pane, then 400 ms and a scroll: (call, stall, on screen) ms."""
    pane.show_message("…")
    await asyncio.sleep(0.05)
    t0 = now()
    pane.show_preview(text, kind)
    call = (now() - t0) * 1e3
    while pane.rendering and now() - t0 < 10:  # a long preview renders in stages
        await asyncio.sleep(0.001)
    shown = (now() - t0) * 1e3
    if pane.rendering:
        log(f"still rendering after 10 s: {text[:40]!r}")
    await asyncio.sleep(max(0.0, 0.3 - (now() - t0)))
    bar = pane.browser.verticalScrollBar()
    bar.setValue(bar.maximum())
    await asyncio.sleep(0.1)
    stall = max(heartbeat.max_stall_ms(t0, now()), call - heartbeat.interval_ms)
    return call, stall, shown, pane.browser.last_preview


async def direct(heartbeat: Any, repeat: int) -> tuple[list[tuple[str, float, float, str]],
                                                       list[float]]:
    """Each payload in a shown PreviewPane: rows of (name, call ms, stall ms, details),
    and the floor's stalls (`FLOOR_TEXT` after each payload's window)."""
    from PySide6.QtWidgets import QWidget

    from qoder_desktop.ui.widgets.preview import PreviewPane

    host = QWidget()
    host.resize(600, 400)
    pane = PreviewPane(host)
    pane.resize(600, 400)
    host.show()
    await asyncio.sleep(0.2)
    from qoder_desktop.preview.sanitize import sanitize_preview

    rows, floor = [], []
    for name, (text, kind) in payloads().items():
        t_sanitize = now()
        sanitize_preview(text, kind)
        sanitize_ms = (now() - t_sanitize) * 1e3
        calls, stalls, shown = [], [], []
        for _ in range(repeat):
            call, stall, on_screen, preview = await _window(pane, heartbeat, text, kind)
            calls.append(call)
            stalls.append(stall)
            shown.append(on_screen)
            floor.append((await _window(pane, heartbeat, FLOOR_TEXT, "markdown"))[1])
        call_ms, worst = max(calls), max(stalls)
        rows.append((name, call_ms, worst,
                     f"{preview.kind}, sanitize {sanitize_ms:.1f} ms, median stall "
                     f"{statistics.median(stalls):.1f} ms, on screen after "
                     f"{max(shown):.1f} ms"))
        log(f"{name}: show_preview {call_ms:.1f} ms, stall {worst:.1f} ms ({preview.kind})")
    host.close()
    return rows, floor


PLANS = ["markdown 63 KB (rendered rich)", "markdown 1 MB", "markdown '![' × 16,000 (was 23–28 s)"]
"""Plans sent through the plan dialog (ExitPlanMode) after the question."""


async def app_path(heartbeat: Any) -> list[tuple[str, float]]:
    """The question dialog path with four hostile previews, then plan dialogs with long
    plans: (step, stall ms)."""
    from benchmarks.qt_support import build_desktop
    from qoder_desktop.domain.models import ApprovalRequest, Backend

    data = payloads()
    chosen = ["markdown 1 MB", "HTML 1 MB", "markdown 60,000-char word",
              "HTML 10,000 nested <div>"]
    options = [{"label": f"Option {n + 1}", "description": name, "preview": data[name][0]}
               for n, name in enumerate(chosen)]
    tool_input = {"questions": [{"question": "Which one?", "header": "Pick",
                                 "multiSelect": False, "options": options}]}
    desktop = build_desktop()
    session = desktop.hub.external_session("bench", cwd="/tmp")
    await asyncio.sleep(0.3)
    opened: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def on_opened(dialog: Any) -> None:
        if not opened.done():
            opened.set_result(dialog)

    desktop.app.dialogs.dialog_opened.connect(on_opened)
    request = ApprovalRequest(session_id=session.session_id, session_name="bench",
                              backend=Backend.CLAUDE, tool_name="AskUserQuestion",
                              tool_input=tool_input, cwd="/tmp")
    t0 = now()
    task = asyncio.ensure_future(desktop.broker.request(request))
    dialog = await asyncio.wait_for(opened, 30)
    await asyncio.sleep(0.5)
    steps = [(f"request → dialog with '{chosen[0]}' preview", heartbeat.max_stall_ms(t0, now()))]
    buttons = [button for button, _option in dialog.boxes[0].option_buttons]
    for index in range(1, len(buttons)):
        t1 = now()
        buttons[index].setFocus()
        await asyncio.sleep(0.5)
        steps.append((f"focus → '{chosen[index]}' preview", heartbeat.max_stall_ms(t1, now())))
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    for plan_name in PLANS:
        # The plan dialog renders its plan before it opens (complete when it can be seen).
        opened = asyncio.get_running_loop().create_future()
        plan = ApprovalRequest(session_id=session.session_id, session_name="bench",
                               backend=Backend.CLAUDE, tool_name="ExitPlanMode",
                               tool_input={"plan": data[plan_name][0]}, cwd="/tmp")
        t2 = now()
        task = asyncio.ensure_future(desktop.broker.request(plan))
        await asyncio.wait_for(opened, 30)
        await asyncio.sleep(0.5)
        steps.append((f"request → plan dialog with '{plan_name}'",
                      heartbeat.max_stall_ms(t2, now())))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    for name, stall in steps:
        log(f"app: {name}: stall {stall:.1f} ms")
    desktop.close()
    return steps


async def run(repeat: int) -> list[Figure]:
    """Both paths; returns the table rows."""
    from benchmarks.qt_support import Heartbeat

    heartbeat = Heartbeat()
    heartbeat.start()
    rows, floor = await direct(heartbeat, repeat)
    steps = await app_path(heartbeat)
    heartbeat.stop()
    worst_name, _call, worst, _kind = max(rows, key=lambda row: row[2])
    app_worst = max(stall for _name, stall in steps)
    overall = max(worst, app_worst)
    notes = [f"{name}: show_preview {call:.1f} ms, stall {stall:.1f} ms (shown as {kind})"
             for name, call, stall, kind in rows]
    notes.insert(0, f"per payload: the maximum of {repeat} repeats (show_preview call, loop "
                    "stall); the figure is the maximum over every payload, repeat and step")
    notes.insert(1, f"floor: a one-word preview through the same steps after every window "
                    f"({len(floor)} windows): stall max {max(floor):.1f} ms, median "
                    f"{statistics.median(floor):.1f} ms (what the machine's load alone costs)")
    notes += [f"app path, {name}: stall {stall:.1f} ms" for name, stall in steps]
    notes.append(f"worst direct case: {worst_name}")
    return [Figure("preview render: longest loop stall (maximum)", "ms", {"value": overall},
                   f"never > {LIMIT_MS:g} ms", judge(overall, LIMIT_MS), notes,
                   floor={"value": max(floor)},
                   floor_label="one-word preview, same steps, interleaved; max",
                   judged="max")]


def main() -> None:
    """Entry point (python -m benchmarks.bench_preview)."""
    args = parse_args()
    setup_env()
    from benchmarks.qt_support import hard_exit, run_qasync

    emit(run_qasync(lambda: run(1 if args.quick else REPEAT)), args.out)
    hard_exit(0)


if __name__ == "__main__":
    main()
