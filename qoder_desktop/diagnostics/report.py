"""One line of the self-check report and how it came out."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    """How a check came out."""

    OK = "OK"
    WARN = "WARN"
    FAIL = "FAIL"


@dataclass(frozen=True)
class CheckResult:
    """One line of the report.

    Attributes:
        name: what was checked, e.g. ``"keyring"``.
        status: OK, WARN or FAIL.
        found: what the check found (paths, versions, names).
        advice: what to do about a WARN or FAIL (empty for OK).
    """

    name: str
    status: Status
    found: str
    advice: str = ""

    def line(self) -> str:
        """The report line: status, name, finding and advice."""
        text = f"{self.status.value:<6}{self.name:<13}{self.found}"
        return f"{text} -> {self.advice}" if self.advice else text
