"""The "allow for this session" section of the approval dialog.

It shows the rules the grant would add (`rules.offer.session_offer`, the same the phone
offers: the CLI's allow suggestions, forced to destination `session`, or our own
narrowest rule when the CLI suggested none; never the person's rule that already covers
the call, which it names instead), each in a
line edit the user may *narrow*; an edit that is not narrower by the matcher's meaning
(`rules.narrowing.is_narrower`) is named as broader and needs an explicit tick of "I
understand this allows more than the agent asked for". The other suggestions (mode
switches, directories, settings-file rules, whole-tool rules such as plain `Bash`) are
separate, unticked check boxes; dangerous ones (a switch to a mode that stops asking)
only a refused note; malformed ones (a directory update without directories, a rule
update without a behaviour or a usable rule: `grants.grant_problem`) are listed as not
offered, each with its reason, never as a box that would do nothing; and an unticked
"save to the project" box turns the granted rules' destination into `localSettings`.

A command (or a suggested rule) longer than `rules.offer.ANALYSIS_LIMIT` gets no rule
at all (not even the CLI's): the section says it is too large to analyse, and only
"allow once" and deny remain.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from qoder_desktop.domain.models import ApprovalRequest, PermissionSuggestion, RuleValue
from qoder_desktop.rules.grants import grant_problem
from qoder_desktop.rules.matcher import is_dangerous, split_suggestions
from qoder_desktop.rules.narrowing import is_narrower
from qoder_desktop.rules.offer import own_grant, session_offer
from qoder_desktop.text.subject import tool_subject
from qoder_desktop.text.visible import make_visible
from qoder_desktop.ui.dialogs.base import button_text
from qoder_desktop.ui.widgets.large_text import too_large_note
from qoder_desktop.ui.widgets.preview import plain_label


def _rule_of(original: RuleValue, edit: QLineEdit) -> RuleValue:
    """The rule an edit box holds; an untouched box keeps the original value exactly
    (its text may show hidden characters as markers)."""
    if edit.text() == make_visible(str(original)):
        return original
    return RuleValue.parse(edit.text())


class SessionGrants(QWidget):
    """Editable rules and optional extra updates for "allow for this session".

    Signals:
        validity_changed(bool): whether the section can produce updates now.
    """

    validity_changed = Signal(bool)

    def __init__(self, request: ApprovalRequest | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.analysed_size = 0
        self.too_large = False
        self._grants: list[PermissionSuggestion] = []
        self.rule_edits: list[tuple[int, RuleValue, QLineEdit]] = []
        self.kept_aside: list[tuple[PermissionSuggestion, QCheckBox]] = []
        self.refused: list[PermissionSuggestion] = []
        self.malformed: list[tuple[PermissionSuggestion, str]] = []
        """Suggestions not offered because the CLI sent them malformed, with the reason."""
        self._valid = False
        self._request: ApprovalRequest | None = None
        self._offered: list[PermissionSuggestion] = []
        self._already: str | None = None
        self._edited = False
        self._project_file = False

        layout = QVBoxLayout(self)
        self._layout = layout
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.hint = plain_label()
        self.hint.setObjectName("sessionHint")
        layout.addWidget(self.hint)
        self._form = QFormLayout()
        self._form.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._form)
        self._first_row = self._new_row()
        self._form.setRowVisible(0, False)
        self.error = plain_label()
        self.error.setObjectName("ruleError")
        layout.addWidget(self.error)
        self.broader_note = plain_label()
        self.broader_note.setObjectName("broaderNote")
        layout.addWidget(self.broader_note)
        self.confirm_broader = QCheckBox(
            "I understand this allows more than the agent asked for", self)
        self.confirm_broader.setObjectName("confirmBroaderCheck")
        self.confirm_broader.setChecked(False)
        self.confirm_broader.toggled.connect(self._revalidate)
        layout.addWidget(self.confirm_broader)
        self.refused_note = plain_label()
        self.refused_note.setObjectName("refusedNote")
        self.refused_note.hide()
        layout.addWidget(self.refused_note)
        self.malformed_note = plain_label()
        self.malformed_note.setObjectName("malformedNote")
        self.malformed_note.hide()
        layout.addWidget(self.malformed_note)
        self.save_to_project = QCheckBox(self)
        self.save_to_project.setObjectName("saveToProjectCheck")
        self.save_to_project.setChecked(False)
        self.save_to_project.hide()
        layout.addWidget(self.save_to_project)
        self._loaded = False
        self._revalidate()
        if request is not None:
            self.load(request)

    def load(self, request: ApprovalRequest) -> None:
        """Offer the rules and updates of `request` (once per section)."""
        if self._loaded:
            raise RuntimeError("a session-grant section shows one request, once")
        self._loaded = True
        split = split_suggestions(request.suggestions)
        offer = session_offer(request)  # (the phone offers the same)
        self.analysed_size, self.too_large = offer.size, offer.too_large
        self._request = request
        self._offered = list(offer.grants)
        self._already = offer.already
        self._show_rules(self._offered)
        at = self._layout.indexOf(self.refused_note)
        self.malformed = [(update, "a rule update without a usable rule")
                          for update in split.dropped]
        for update in split.kept_aside:
            if is_dangerous(update):
                self.refused.append(update)
                continue
            problem = grant_problem(update)
            if problem is not None:
                self.malformed.append((update, problem))
                continue
            box = QCheckBox(button_text("Also: " + update.describe()), self)
            box.setChecked(False)
            self.kept_aside.append((update, box))
            self._layout.insertWidget(at, box)
            at += 1
        if self.refused:
            names = "; ".join(make_visible(u.describe()) for u in self.refused)
            self.refused_note.setText(f"Not offered (it would stop Qoder Desktop from asking "
                                      f"before tools run): {names}.")
        self.refused_note.setVisible(bool(self.refused))
        if self.malformed:
            names = "; ".join(f"{make_visible(update.describe())}: {problem}"
                              for update, problem in self.malformed)
            self.malformed_note.setText(
                f"Not offered (the agent's CLI suggested it malformed): {names}.")
        self.malformed_note.setVisible(bool(self.malformed))
        # Offered only where it takes effect: the session loads the backend's own file.
        project_file = request.project_settings_file
        shown_file = (os.path.relpath(project_file, request.cwd)
                      if project_file and request.cwd else project_file or "")
        self.save_to_project.setText(
            f"Also save these rules to the project's local settings ({shown_file})")
        self._project_file = bool(project_file)
        self._say_what_is_offered(edited=False)
        self._revalidate()

    def follow_input(self, tool_input: dict[str, Any] | None) -> None:
        """The person edited the call's input: offer the rule for what will run, not the
        one the agent's CLI suggested for its original input (back to that when the
        edit is undone, or when what a rule names, the command or the path, is the same).
        An input that is not valid JSON (None) changes nothing."""
        request = self._request
        if request is None or tool_input is None or self.too_large:
            return
        edited = tool_subject(tool_input) != tool_subject(dict(request.tool_input))
        grants = self._offered
        if edited:
            grant = own_grant(request.tool_name, tool_input, request.cwd or "")
            grants = [] if grant is None else [grant]
        shown = [rule for grant in self._grants for rule in grant.rules or ()]
        if edited == self._edited and shown == [r for g in grants for r in g.rules or ()]:
            return
        self._edited = edited
        self._show_rules(grants)
        self._say_what_is_offered(edited=edited)
        self._revalidate()

    def _show_rules(self, grants: list[PermissionSuggestion]) -> None:
        """One edit box per rule of `grants` (the boxes shown before are replaced)."""
        while self._form.rowCount() > 1:
            self._form.removeRow(1)
        self._form.setRowVisible(0, False)
        self.rule_edits = []
        self._grants = grants
        for index, grant in enumerate(grants):
            for rule in grant.rules or ():
                if self.rule_edits:
                    caption, edit = self._new_row()
                else:  # the first rule goes in the row built ahead
                    caption, edit = self._first_row
                    self._form.setRowVisible(0, True)
                self.rule_edits.append((index, rule, edit))
                edit.setText(make_visible(str(rule)))
                caption.setText(f"Rule {len(self.rule_edits)}:")

    def _say_what_is_offered(self, *, edited: bool) -> None:
        already = None if edited else self._already
        self.save_to_project.setVisible(bool(self.rule_edits) and self._project_file)
        if self.rule_edits and edited:
            self.hint.setText("This rule is for the input you edited (the agent's "
                              "suggestion was for its original). It is added for the rest "
                              "of this session; you can narrow it before allowing.")
        elif edited:
            self.hint.setText("No rule can be made for the input you edited, so it can "
                              "only be allowed once.")
        elif self.rule_edits:
            self.hint.setText("These rules are added for the rest of this session. "
                              "You can narrow them before allowing.")
        elif already:
            self.hint.setText(f"Your session rule {make_visible(already)} already covers "
                              "this call; granting it again would change nothing. Allow it "
                              "once, or deny it.")
        elif self.too_large:
            self.hint.setText(too_large_note(self.analysed_size))
        else:
            self.hint.setText("No rule can be made for this request, so it can only be "
                              "allowed once.")

    def _new_row(self) -> tuple[QLabel, QLineEdit]:
        """A caption and an edit box for one rule, added to the form."""
        edit = QLineEdit(self)
        edit.setObjectName(f"ruleEdit{self._form.rowCount()}")
        row = self._form.rowCount()
        edit.setAccessibleName("Session rule" if row == 0 else f"Session rule {row + 1}")
        edit.setAccessibleDescription("What Allow for this session lets run again without "
                                      "asking in this session; you can narrow it")
        edit.textChanged.connect(self._revalidate)
        caption = plain_label(wrap=False)
        self._form.addRow(caption, edit)
        return caption, edit

    def is_valid(self) -> bool:
        """True when there is at least one rule and every rule text is acceptable."""
        return self._valid

    def error_text(self) -> str:
        """The current problem with the rule texts, or the broader-rule note ("" if none)."""
        return " ".join(t for t in (self.error.text(), self.broader_note.text()) if t)

    def updates(self) -> tuple[PermissionSuggestion, ...] | None:
        """The permission updates to send with "allow for this session", or None."""
        if not self._valid:
            return None
        destination = "localSettings" if self.save_to_project.isChecked() else "session"
        edited: dict[int, list[RuleValue]] = {}
        for index, original, edit in self.rule_edits:
            edited.setdefault(index, []).append(_rule_of(original, edit))
        result = [grant.model_copy(update={"rules": tuple(edited[index]),
                                           "destination": destination})
                  for index, grant in enumerate(self._grants) if index in edited]
        result += [update for update, box in self.kept_aside if box.isChecked()]
        return tuple(result)

    def _revalidate(self) -> None:
        problems, broader = [], []
        for number, (_index, original, edit) in enumerate(self.rule_edits, start=1):
            try:
                rule = _rule_of(original, edit)
            except ValueError:
                problems.append(f"Rule {number} is not a rule (expected Tool or "
                                f"Tool(specifier)).")
                continue
            if not is_narrower(original, rule):
                broader.append(number)
        self.error.setText(" ".join(problems))
        self.error.setVisible(bool(problems))
        if broader:
            names = ", ".join(str(n) for n in broader)
            self.broader_note.setText(
                f"Rule {names} is broader than what the agent asked for: it allows calls "
                f"the original rule did not.")
        else:
            self.broader_note.setText("")
            if self.confirm_broader.isChecked():
                self.confirm_broader.setChecked(False)
        self.broader_note.setVisible(bool(broader))
        self.confirm_broader.setVisible(bool(broader))
        confirmed = not broader or self.confirm_broader.isChecked()
        valid = bool(self.rule_edits) and not problems and confirmed
        if valid != self._valid:
            self._valid = valid
            self.validity_changed.emit(valid)
