# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'new_session_dialog.ui'
##
## Created by: Qt User Interface Compiler version 6.11.3
##
## WARNING! All changes made in this file will be lost when recompiling UI file!
################################################################################

from PySide6.QtCore import (QCoreApplication, QMetaObject)
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialogButtonBox, QFormLayout,
    QHBoxLayout, QLabel, QLineEdit, QListWidget, QPlainTextEdit, QPushButton,
    QSizePolicy, QSpacerItem, QTabWidget, QVBoxLayout, QWidget)

class Ui_NewSessionDialog(object):
    def setupUi(self, NewSessionDialog):
        if not NewSessionDialog.objectName():
            NewSessionDialog.setObjectName(u"NewSessionDialog")
        NewSessionDialog.resize(620, 560)
        self.dialogLayout = QVBoxLayout(NewSessionDialog)
        self.dialogLayout.setObjectName(u"dialogLayout")
        self.tabs = QTabWidget(NewSessionDialog)
        self.tabs.setObjectName(u"tabs")
        self.generalTab = QWidget()
        self.generalTab.setObjectName(u"generalTab")
        self.generalForm = QFormLayout(self.generalTab)
        self.generalForm.setObjectName(u"generalForm")
        self.generalForm.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.backendLabel = QLabel(self.generalTab)
        self.backendLabel.setObjectName(u"backendLabel")

        self.generalForm.setWidget(0, QFormLayout.ItemRole.LabelRole, self.backendLabel)

        self.backendCombo = QComboBox(self.generalTab)
        self.backendCombo.setObjectName(u"backendCombo")

        self.generalForm.setWidget(0, QFormLayout.ItemRole.FieldRole, self.backendCombo)

        self.nameLabel = QLabel(self.generalTab)
        self.nameLabel.setObjectName(u"nameLabel")

        self.generalForm.setWidget(1, QFormLayout.ItemRole.LabelRole, self.nameLabel)

        self.nameEdit = QLineEdit(self.generalTab)
        self.nameEdit.setObjectName(u"nameEdit")

        self.generalForm.setWidget(1, QFormLayout.ItemRole.FieldRole, self.nameEdit)

        self.cwdLabel = QLabel(self.generalTab)
        self.cwdLabel.setObjectName(u"cwdLabel")

        self.generalForm.setWidget(2, QFormLayout.ItemRole.LabelRole, self.cwdLabel)

        self.cwdRow = QHBoxLayout()
        self.cwdRow.setObjectName(u"cwdRow")
        self.cwdEdit = QLineEdit(self.generalTab)
        self.cwdEdit.setObjectName(u"cwdEdit")

        self.cwdRow.addWidget(self.cwdEdit)

        self.browseCwdButton = QPushButton(self.generalTab)
        self.browseCwdButton.setObjectName(u"browseCwdButton")

        self.cwdRow.addWidget(self.browseCwdButton)


        self.generalForm.setLayout(2, QFormLayout.ItemRole.FieldRole, self.cwdRow)

        self.promptLabel = QLabel(self.generalTab)
        self.promptLabel.setObjectName(u"promptLabel")

        self.generalForm.setWidget(3, QFormLayout.ItemRole.LabelRole, self.promptLabel)

        self.promptEdit = QPlainTextEdit(self.generalTab)
        self.promptEdit.setObjectName(u"promptEdit")
        self.promptEdit.setTabChangesFocus(True)

        self.generalForm.setWidget(3, QFormLayout.ItemRole.FieldRole, self.promptEdit)

        self.modeLabel = QLabel(self.generalTab)
        self.modeLabel.setObjectName(u"modeLabel")

        self.generalForm.setWidget(4, QFormLayout.ItemRole.LabelRole, self.modeLabel)

        self.modeCombo = QComboBox(self.generalTab)
        self.modeCombo.setObjectName(u"modeCombo")

        self.generalForm.setWidget(4, QFormLayout.ItemRole.FieldRole, self.modeCombo)

        self.modelLabel = QLabel(self.generalTab)
        self.modelLabel.setObjectName(u"modelLabel")

        self.generalForm.setWidget(5, QFormLayout.ItemRole.LabelRole, self.modelLabel)

        self.modelEdit = QLineEdit(self.generalTab)
        self.modelEdit.setObjectName(u"modelEdit")

        self.generalForm.setWidget(5, QFormLayout.ItemRole.FieldRole, self.modelEdit)

        self.scenarioLabel = QLabel(self.generalTab)
        self.scenarioLabel.setObjectName(u"scenarioLabel")

        self.generalForm.setWidget(6, QFormLayout.ItemRole.LabelRole, self.scenarioLabel)

        self.scenarioCombo = QComboBox(self.generalTab)
        self.scenarioCombo.setObjectName(u"scenarioCombo")

        self.generalForm.setWidget(6, QFormLayout.ItemRole.FieldRole, self.scenarioCombo)

        self.tabs.addTab(self.generalTab, "")
        self.toolsTab = QWidget()
        self.toolsTab.setObjectName(u"toolsTab")
        self.toolsForm = QFormLayout(self.toolsTab)
        self.toolsForm.setObjectName(u"toolsForm")
        self.toolsForm.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.limitToolsCheck = QCheckBox(self.toolsTab)
        self.limitToolsCheck.setObjectName(u"limitToolsCheck")

        self.toolsForm.setWidget(0, QFormLayout.ItemRole.SpanningRole, self.limitToolsCheck)

        self.toolsLabel = QLabel(self.toolsTab)
        self.toolsLabel.setObjectName(u"toolsLabel")

        self.toolsForm.setWidget(1, QFormLayout.ItemRole.LabelRole, self.toolsLabel)

        self.toolsEdit = QLineEdit(self.toolsTab)
        self.toolsEdit.setObjectName(u"toolsEdit")
        self.toolsEdit.setEnabled(False)

        self.toolsForm.setWidget(1, QFormLayout.ItemRole.FieldRole, self.toolsEdit)

        self.allowedLabel = QLabel(self.toolsTab)
        self.allowedLabel.setObjectName(u"allowedLabel")

        self.toolsForm.setWidget(2, QFormLayout.ItemRole.LabelRole, self.allowedLabel)

        self.allowedEdit = QLineEdit(self.toolsTab)
        self.allowedEdit.setObjectName(u"allowedEdit")

        self.toolsForm.setWidget(2, QFormLayout.ItemRole.FieldRole, self.allowedEdit)

        self.disallowedLabel = QLabel(self.toolsTab)
        self.disallowedLabel.setObjectName(u"disallowedLabel")

        self.toolsForm.setWidget(3, QFormLayout.ItemRole.LabelRole, self.disallowedLabel)

        self.disallowedEdit = QLineEdit(self.toolsTab)
        self.disallowedEdit.setObjectName(u"disallowedEdit")

        self.toolsForm.setWidget(3, QFormLayout.ItemRole.FieldRole, self.disallowedEdit)

        self.addDirsLabel = QLabel(self.toolsTab)
        self.addDirsLabel.setObjectName(u"addDirsLabel")

        self.toolsForm.setWidget(5, QFormLayout.ItemRole.LabelRole, self.addDirsLabel)

        self.addDirsRow = QHBoxLayout()
        self.addDirsRow.setObjectName(u"addDirsRow")
        self.addDirsList = QListWidget(self.toolsTab)
        self.addDirsList.setObjectName(u"addDirsList")

        self.addDirsRow.addWidget(self.addDirsList)

        self.addDirsButtons = QVBoxLayout()
        self.addDirsButtons.setObjectName(u"addDirsButtons")
        self.addDirButton = QPushButton(self.toolsTab)
        self.addDirButton.setObjectName(u"addDirButton")

        self.addDirsButtons.addWidget(self.addDirButton)

        self.removeDirButton = QPushButton(self.toolsTab)
        self.removeDirButton.setObjectName(u"removeDirButton")
        self.removeDirButton.setEnabled(False)

        self.addDirsButtons.addWidget(self.removeDirButton)

        self.addDirsSpacer = QSpacerItem(0, 0, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Expanding)

        self.addDirsButtons.addItem(self.addDirsSpacer)


        self.addDirsRow.addLayout(self.addDirsButtons)


        self.toolsForm.setLayout(5, QFormLayout.ItemRole.FieldRole, self.addDirsRow)

        self.sourcesLabel = QLabel(self.toolsTab)
        self.sourcesLabel.setObjectName(u"sourcesLabel")

        self.toolsForm.setWidget(4, QFormLayout.ItemRole.LabelRole, self.sourcesLabel)

        self.sourcesRow = QHBoxLayout()
        self.sourcesRow.setObjectName(u"sourcesRow")
        self.userSourceCheck = QCheckBox(self.toolsTab)
        self.userSourceCheck.setObjectName(u"userSourceCheck")

        self.sourcesRow.addWidget(self.userSourceCheck)

        self.projectSourceCheck = QCheckBox(self.toolsTab)
        self.projectSourceCheck.setObjectName(u"projectSourceCheck")

        self.sourcesRow.addWidget(self.projectSourceCheck)

        self.localSourceCheck = QCheckBox(self.toolsTab)
        self.localSourceCheck.setObjectName(u"localSourceCheck")

        self.sourcesRow.addWidget(self.localSourceCheck)

        self.sourcesSpacer = QSpacerItem(0, 0, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.sourcesRow.addItem(self.sourcesSpacer)


        self.toolsForm.setLayout(4, QFormLayout.ItemRole.FieldRole, self.sourcesRow)

        self.tabs.addTab(self.toolsTab, "")
        self.advancedTab = QWidget()
        self.advancedTab.setObjectName(u"advancedTab")
        self.advancedForm = QFormLayout(self.advancedTab)
        self.advancedForm.setObjectName(u"advancedForm")
        self.advancedForm.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.mcpLabel = QLabel(self.advancedTab)
        self.mcpLabel.setObjectName(u"mcpLabel")

        self.advancedForm.setWidget(0, QFormLayout.ItemRole.LabelRole, self.mcpLabel)

        self.mcpEdit = QPlainTextEdit(self.advancedTab)
        self.mcpEdit.setObjectName(u"mcpEdit")
        self.mcpEdit.setTabChangesFocus(True)

        self.advancedForm.setWidget(0, QFormLayout.ItemRole.FieldRole, self.mcpEdit)

        self.permissionsLabel = QLabel(self.advancedTab)
        self.permissionsLabel.setObjectName(u"permissionsLabel")

        self.advancedForm.setWidget(1, QFormLayout.ItemRole.LabelRole, self.permissionsLabel)

        self.permissionsEdit = QPlainTextEdit(self.advancedTab)
        self.permissionsEdit.setObjectName(u"permissionsEdit")
        self.permissionsEdit.setTabChangesFocus(True)

        self.advancedForm.setWidget(1, QFormLayout.ItemRole.FieldRole, self.permissionsEdit)

        self.tabs.addTab(self.advancedTab, "")

        self.dialogLayout.addWidget(self.tabs)

        self.errorLabel = QLabel(NewSessionDialog)
        self.errorLabel.setObjectName(u"errorLabel")
        self.errorLabel.setWordWrap(True)
        self.errorLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.dialogLayout.addWidget(self.errorLabel)

        self.buttonBox = QDialogButtonBox(NewSessionDialog)
        self.buttonBox.setObjectName(u"buttonBox")
        self.buttonBox.setStandardButtons(QDialogButtonBox.StandardButton.Cancel|QDialogButtonBox.StandardButton.Ok)

        self.dialogLayout.addWidget(self.buttonBox)

#if QT_CONFIG(shortcut)
        self.backendLabel.setBuddy(self.backendCombo)
        self.nameLabel.setBuddy(self.nameEdit)
        self.cwdLabel.setBuddy(self.cwdEdit)
        self.promptLabel.setBuddy(self.promptEdit)
        self.modeLabel.setBuddy(self.modeCombo)
        self.modelLabel.setBuddy(self.modelEdit)
        self.scenarioLabel.setBuddy(self.scenarioCombo)
        self.toolsLabel.setBuddy(self.toolsEdit)
        self.allowedLabel.setBuddy(self.allowedEdit)
        self.disallowedLabel.setBuddy(self.disallowedEdit)
        self.addDirsLabel.setBuddy(self.addDirsList)
        self.mcpLabel.setBuddy(self.mcpEdit)
        self.permissionsLabel.setBuddy(self.permissionsEdit)
#endif // QT_CONFIG(shortcut)
        QWidget.setTabOrder(self.backendCombo, self.nameEdit)
        QWidget.setTabOrder(self.nameEdit, self.cwdEdit)
        QWidget.setTabOrder(self.cwdEdit, self.browseCwdButton)
        QWidget.setTabOrder(self.browseCwdButton, self.promptEdit)
        QWidget.setTabOrder(self.promptEdit, self.modeCombo)
        QWidget.setTabOrder(self.modeCombo, self.modelEdit)
        QWidget.setTabOrder(self.modelEdit, self.scenarioCombo)

        self.retranslateUi(NewSessionDialog)

        self.tabs.setCurrentIndex(0)


        QMetaObject.connectSlotsByName(NewSessionDialog)
    # setupUi

    def retranslateUi(self, NewSessionDialog):
        NewSessionDialog.setWindowTitle(QCoreApplication.translate("NewSessionDialog", u"New session", None))
        self.backendLabel.setText(QCoreApplication.translate("NewSessionDialog", u"&Backend:", None))
#if QT_CONFIG(accessibility)
        self.backendCombo.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Backend", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.backendCombo.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"The agent that runs the session: Claude Code or qodercli", None))
#endif // QT_CONFIG(accessibility)
        self.nameLabel.setText(QCoreApplication.translate("NewSessionDialog", u"&Name:", None))
#if QT_CONFIG(accessibility)
        self.nameEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Name", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.nameEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"The session's name in the list; empty uses the folder's name", None))
#endif // QT_CONFIG(accessibility)
        self.nameEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"Defaults to the folder's name", None))
        self.cwdLabel.setText(QCoreApplication.translate("NewSessionDialog", u"&Folder:", None))
#if QT_CONFIG(accessibility)
        self.cwdEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Folder", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.cwdEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"The folder the agent works in", None))
#endif // QT_CONFIG(accessibility)
        self.cwdEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"The workspace the agent works in", None))
#if QT_CONFIG(accessibility)
        self.browseCwdButton.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Choose the session's folder", None))
#endif // QT_CONFIG(accessibility)
        self.browseCwdButton.setText(QCoreApplication.translate("NewSessionDialog", u"Bro&wse\u2026", None))
        self.promptLabel.setText(QCoreApplication.translate("NewSessionDialog", u"&Prompt:", None))
#if QT_CONFIG(accessibility)
        self.promptEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Prompt", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.promptEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"What the agent should do first; Ctrl+Return starts the session", None))
#endif // QT_CONFIG(accessibility)
        self.promptEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"What should the agent do? (you can also send it later)", None))
        self.modeLabel.setText(QCoreApplication.translate("NewSessionDialog", u"Permission &mode:", None))
#if QT_CONFIG(accessibility)
        self.modeCombo.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Permission mode", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.modeCombo.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"What the agent may do without asking you", None))
#endif // QT_CONFIG(accessibility)
        self.modelLabel.setText(QCoreApplication.translate("NewSessionDialog", u"M&odel:", None))
#if QT_CONFIG(accessibility)
        self.modelEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Model", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.modelEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"The model the CLI uses; empty uses its default", None))
#endif // QT_CONFIG(accessibility)
        self.modelEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"The CLI's default model", None))
        self.scenarioLabel.setText(QCoreApplication.translate("NewSessionDialog", u"Sc&enario:", None))
#if QT_CONFIG(accessibility)
        self.scenarioCombo.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Scenario", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.scenarioCombo.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"The scripted demo scenario the session plays", None))
#endif // QT_CONFIG(accessibility)
        self.tabs.setTabText(self.tabs.indexOf(self.generalTab), QCoreApplication.translate("NewSessionDialog", u"&General", None))
#if QT_CONFIG(tooltip)
        self.tabs.setTabToolTip(self.tabs.indexOf(self.generalTab), QCoreApplication.translate("NewSessionDialog", u"Backend, name, folder, prompt, permission mode and model", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(accessibility)
        self.limitToolsCheck.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Give the agent only the built-in tools listed below", None))
#endif // QT_CONFIG(accessibility)
        self.limitToolsCheck.setText(QCoreApplication.translate("NewSessionDialog", u"&Limit the built-in tools to:", None))
        self.toolsLabel.setText(QCoreApplication.translate("NewSessionDialog", u"Tools:", None))
#if QT_CONFIG(accessibility)
        self.toolsEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Tools", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.toolsEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"The built-in tools the agent may use, separated by commas", None))
#endif // QT_CONFIG(accessibility)
        self.toolsEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"e.g. Read, Grep, Glob (empty = no built-in tools)", None))
        self.allowedLabel.setText(QCoreApplication.translate("NewSessionDialog", u"&Allowed tools:", None))
#if QT_CONFIG(accessibility)
        self.allowedEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Allowed tools", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.allowedEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Tools and rules that run without asking, separated by commas", None))
#endif // QT_CONFIG(accessibility)
        self.allowedEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"Run without asking, e.g. Read, Bash(npm run test:*)", None))
        self.disallowedLabel.setText(QCoreApplication.translate("NewSessionDialog", u"&Disallowed tools:", None))
#if QT_CONFIG(accessibility)
        self.disallowedEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Disallowed tools", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.disallowedEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Tools and rules that are always refused, separated by commas", None))
#endif // QT_CONFIG(accessibility)
        self.disallowedEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"Always refused, e.g. WebFetch, Bash(rm:*)", None))
        self.addDirsLabel.setText(QCoreApplication.translate("NewSessionDialog", u"Extra folders:", None))
#if QT_CONFIG(accessibility)
        self.addDirsList.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Extra folders", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.addDirsList.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Other folders the agent may read and write", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.addDirButton.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Allow the agent into another folder", None))
#endif // QT_CONFIG(accessibility)
        self.addDirButton.setText(QCoreApplication.translate("NewSessionDialog", u"Add &folder\u2026", None))
#if QT_CONFIG(accessibility)
        self.removeDirButton.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Remove the selected extra folder", None))
#endif // QT_CONFIG(accessibility)
        self.removeDirButton.setText(QCoreApplication.translate("NewSessionDialog", u"&Remove", None))
        self.sourcesLabel.setText(QCoreApplication.translate("NewSessionDialog", u"Setting sources:", None))
#if QT_CONFIG(accessibility)
        self.userSourceCheck.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"User settings", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.userSourceCheck.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Load the user's Claude Code settings", None))
#endif // QT_CONFIG(accessibility)
        self.userSourceCheck.setText(QCoreApplication.translate("NewSessionDialog", u"&User", None))
#if QT_CONFIG(accessibility)
        self.projectSourceCheck.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Project settings", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.projectSourceCheck.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Load the project's shared settings", None))
#endif // QT_CONFIG(accessibility)
        self.projectSourceCheck.setText(QCoreApplication.translate("NewSessionDialog", u"Pro&ject", None))
#if QT_CONFIG(accessibility)
        self.localSourceCheck.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Local settings", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.localSourceCheck.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"Load the project's local settings", None))
#endif // QT_CONFIG(accessibility)
        self.localSourceCheck.setText(QCoreApplication.translate("NewSessionDialog", u"Lo&cal", None))
        self.tabs.setTabText(self.tabs.indexOf(self.toolsTab), QCoreApplication.translate("NewSessionDialog", u"&Tools && access", None))
#if QT_CONFIG(tooltip)
        self.tabs.setTabToolTip(self.tabs.indexOf(self.toolsTab), QCoreApplication.translate("NewSessionDialog", u"Which tools the agent has, which run without asking or never, and which folders and settings it sees", None))
#endif // QT_CONFIG(tooltip)
        self.mcpLabel.setText(QCoreApplication.translate("NewSessionDialog", u"MCP servers:", None))
#if QT_CONFIG(accessibility)
        self.mcpEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"MCP servers", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.mcpEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"MCP servers for the session, as a JSON object", None))
#endif // QT_CONFIG(accessibility)
        self.mcpEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"A JSON object, e.g. {\"docs\": {\"command\": \"docs-mcp\"}}", None))
        self.permissionsLabel.setText(QCoreApplication.translate("NewSessionDialog", u"Permission settings:", None))
#if QT_CONFIG(accessibility)
        self.permissionsEdit.setAccessibleName(QCoreApplication.translate("NewSessionDialog", u"Permission settings", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.permissionsEdit.setAccessibleDescription(QCoreApplication.translate("NewSessionDialog", u"settings.permissions for the session, as a JSON object", None))
#endif // QT_CONFIG(accessibility)
        self.permissionsEdit.setPlaceholderText(QCoreApplication.translate("NewSessionDialog", u"A JSON object for settings.permissions, e.g. {\"deny\": [\"Read(./.env)\"]}", None))
        self.tabs.setTabText(self.tabs.indexOf(self.advancedTab), QCoreApplication.translate("NewSessionDialog", u"Ad&vanced", None))
#if QT_CONFIG(tooltip)
        self.tabs.setTabToolTip(self.tabs.indexOf(self.advancedTab), QCoreApplication.translate("NewSessionDialog", u"MCP servers and permission settings, as JSON", None))
#endif // QT_CONFIG(tooltip)
    # retranslateUi

