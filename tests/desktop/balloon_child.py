"""Run by test_tray_balloon.py on a real X display with a tray: show a request's balloon,
report what it shows, answer the request (withdraw), report whether the balloon is gone."""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from qoder_desktop.domain.models import ApprovalRequest, Backend
from qoder_desktop.ui.tray import Tray


def balloons(app: QApplication) -> list[QWidget]:
    return [w for w in app.topLevelWidgets()
            if w.metaObject().className() == "QBalloonTip" and w.isVisible()]


def main() -> None:
    app = QApplication([])
    tray = Tray()
    tray.show()
    request = ApprovalRequest(session_id="s", session_name="slow", backend=Backend.CLAUDE,
                              tool_name="Bash", tool_input={"command": sys.argv[1]})
    report: dict[str, object] = {}
    tries = {"left": 50}

    def announce() -> None:
        if not tray.is_available() and tries["left"]:
            tries["left"] -= 1
            QTimer.singleShot(100, announce)
            return
        tray.notify(request)
        QTimer.singleShot(500, shown)

    def shown() -> None:
        report["texts"] = [label.text() for b in balloons(app)
                           for label in b.findChildren(QLabel) if label.text()]
        tray.withdraw(request.request_id)
        QTimer.singleShot(300, gone)

    def gone() -> None:
        report["after"] = len(balloons(app))
        print(json.dumps(report), flush=True)
        tray.dispose()
        app.quit()

    QTimer.singleShot(200, announce)
    app.exec()


if __name__ == "__main__":
    main()
