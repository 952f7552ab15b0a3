# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'settings_dialog.ui'
##
## Created by: Qt User Interface Compiler version 6.11.3
##
## WARNING! All changes made in this file will be lost when recompiling UI file!
################################################################################

from PySide6.QtCore import (QCoreApplication, QMetaObject)
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialogButtonBox, QFormLayout,
    QGroupBox, QHBoxLayout, QLabel, QLineEdit, QListWidget, QPushButton, QSizePolicy,
    QSpacerItem, QSpinBox, QTabWidget, QVBoxLayout, QWidget)

class Ui_SettingsDialog(object):
    def setupUi(self, SettingsDialog):
        if not SettingsDialog.objectName():
            SettingsDialog.setObjectName(u"SettingsDialog")
        SettingsDialog.resize(600, 500)
        self.dialogLayout = QVBoxLayout(SettingsDialog)
        self.dialogLayout.setObjectName(u"dialogLayout")
        self.tabs = QTabWidget(SettingsDialog)
        self.tabs.setObjectName(u"tabs")
        self.sessionsTab = QWidget()
        self.sessionsTab.setObjectName(u"sessionsTab")
        self.sessionsForm = QFormLayout(self.sessionsTab)
        self.sessionsForm.setObjectName(u"sessionsForm")
        self.sessionsForm.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.backendLabel = QLabel(self.sessionsTab)
        self.backendLabel.setObjectName(u"backendLabel")

        self.sessionsForm.setWidget(0, QFormLayout.ItemRole.LabelRole, self.backendLabel)

        self.backendCombo = QComboBox(self.sessionsTab)
        self.backendCombo.setObjectName(u"backendCombo")

        self.sessionsForm.setWidget(0, QFormLayout.ItemRole.FieldRole, self.backendCombo)

        self.modeLabel = QLabel(self.sessionsTab)
        self.modeLabel.setObjectName(u"modeLabel")

        self.sessionsForm.setWidget(1, QFormLayout.ItemRole.LabelRole, self.modeLabel)

        self.modeCombo = QComboBox(self.sessionsTab)
        self.modeCombo.setObjectName(u"modeCombo")

        self.sessionsForm.setWidget(1, QFormLayout.ItemRole.FieldRole, self.modeCombo)

        self.modelLabel = QLabel(self.sessionsTab)
        self.modelLabel.setObjectName(u"modelLabel")

        self.sessionsForm.setWidget(2, QFormLayout.ItemRole.LabelRole, self.modelLabel)

        self.modelEdit = QLineEdit(self.sessionsTab)
        self.modelEdit.setObjectName(u"modelEdit")

        self.sessionsForm.setWidget(2, QFormLayout.ItemRole.FieldRole, self.modelEdit)

        self.allowedLabel = QLabel(self.sessionsTab)
        self.allowedLabel.setObjectName(u"allowedLabel")

        self.sessionsForm.setWidget(3, QFormLayout.ItemRole.LabelRole, self.allowedLabel)

        self.allowedEdit = QLineEdit(self.sessionsTab)
        self.allowedEdit.setObjectName(u"allowedEdit")

        self.sessionsForm.setWidget(3, QFormLayout.ItemRole.FieldRole, self.allowedEdit)

        self.disallowedLabel = QLabel(self.sessionsTab)
        self.disallowedLabel.setObjectName(u"disallowedLabel")

        self.sessionsForm.setWidget(4, QFormLayout.ItemRole.LabelRole, self.disallowedLabel)

        self.disallowedEdit = QLineEdit(self.sessionsTab)
        self.disallowedEdit.setObjectName(u"disallowedEdit")

        self.sessionsForm.setWidget(4, QFormLayout.ItemRole.FieldRole, self.disallowedEdit)

        self.notificationsGroup = QGroupBox(self.sessionsTab)
        self.notificationsGroup.setObjectName(u"notificationsGroup")
        self.notificationsLayout = QVBoxLayout(self.notificationsGroup)
        self.notificationsLayout.setObjectName(u"notificationsLayout")
        self.notifyCheck = QCheckBox(self.notificationsGroup)
        self.notifyCheck.setObjectName(u"notifyCheck")

        self.notificationsLayout.addWidget(self.notifyCheck)

        self.inactiveCheck = QCheckBox(self.notificationsGroup)
        self.inactiveCheck.setObjectName(u"inactiveCheck")

        self.notificationsLayout.addWidget(self.inactiveCheck)

        self.soundCheck = QCheckBox(self.notificationsGroup)
        self.soundCheck.setObjectName(u"soundCheck")

        self.notificationsLayout.addWidget(self.soundCheck)


        self.sessionsForm.setWidget(5, QFormLayout.ItemRole.SpanningRole, self.notificationsGroup)

        self.tabs.addTab(self.sessionsTab, "")
        self.workspacesTab = QWidget()
        self.workspacesTab.setObjectName(u"workspacesTab")
        self.workspacesLayout = QVBoxLayout(self.workspacesTab)
        self.workspacesLayout.setObjectName(u"workspacesLayout")
        self.workspacesHint = QLabel(self.workspacesTab)
        self.workspacesHint.setObjectName(u"workspacesHint")
        self.workspacesHint.setWordWrap(True)

        self.workspacesLayout.addWidget(self.workspacesHint)

        self.workspacesRow = QHBoxLayout()
        self.workspacesRow.setObjectName(u"workspacesRow")
        self.workspacesList = QListWidget(self.workspacesTab)
        self.workspacesList.setObjectName(u"workspacesList")

        self.workspacesRow.addWidget(self.workspacesList)

        self.workspacesButtons = QVBoxLayout()
        self.workspacesButtons.setObjectName(u"workspacesButtons")
        self.addWorkspaceButton = QPushButton(self.workspacesTab)
        self.addWorkspaceButton.setObjectName(u"addWorkspaceButton")

        self.workspacesButtons.addWidget(self.addWorkspaceButton)

        self.removeWorkspaceButton = QPushButton(self.workspacesTab)
        self.removeWorkspaceButton.setObjectName(u"removeWorkspaceButton")
        self.removeWorkspaceButton.setEnabled(False)

        self.workspacesButtons.addWidget(self.removeWorkspaceButton)

        self.workspacesSpacer = QSpacerItem(0, 0, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Expanding)

        self.workspacesButtons.addItem(self.workspacesSpacer)


        self.workspacesRow.addLayout(self.workspacesButtons)


        self.workspacesLayout.addLayout(self.workspacesRow)

        self.tabs.addTab(self.workspacesTab, "")
        self.accountsTab = QWidget()
        self.accountsTab.setObjectName(u"accountsTab")
        self.accountsForm = QFormLayout(self.accountsTab)
        self.accountsForm.setObjectName(u"accountsForm")
        self.accountsForm.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.keyringLabel = QLabel(self.accountsTab)
        self.keyringLabel.setObjectName(u"keyringLabel")
        self.keyringLabel.setWordWrap(True)
        self.keyringLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.accountsForm.setWidget(0, QFormLayout.ItemRole.SpanningRole, self.keyringLabel)

        self.qoderTokenLabel = QLabel(self.accountsTab)
        self.qoderTokenLabel.setObjectName(u"qoderTokenLabel")

        self.accountsForm.setWidget(1, QFormLayout.ItemRole.LabelRole, self.qoderTokenLabel)

        self.qoderTokenRow = QHBoxLayout()
        self.qoderTokenRow.setObjectName(u"qoderTokenRow")
        self.qoderTokenEdit = QLineEdit(self.accountsTab)
        self.qoderTokenEdit.setObjectName(u"qoderTokenEdit")
        self.qoderTokenEdit.setEchoMode(QLineEdit.EchoMode.Password)

        self.qoderTokenRow.addWidget(self.qoderTokenEdit)

        self.qoderTokenRemoveButton = QPushButton(self.accountsTab)
        self.qoderTokenRemoveButton.setObjectName(u"qoderTokenRemoveButton")

        self.qoderTokenRow.addWidget(self.qoderTokenRemoveButton)


        self.accountsForm.setLayout(1, QFormLayout.ItemRole.FieldRole, self.qoderTokenRow)

        self.qoderTokenStatus = QLabel(self.accountsTab)
        self.qoderTokenStatus.setObjectName(u"qoderTokenStatus")
        self.qoderTokenStatus.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.qoderTokenStatus.setWordWrap(True)

        self.accountsForm.setWidget(2, QFormLayout.ItemRole.FieldRole, self.qoderTokenStatus)

        self.anthropicKeyLabel = QLabel(self.accountsTab)
        self.anthropicKeyLabel.setObjectName(u"anthropicKeyLabel")

        self.accountsForm.setWidget(3, QFormLayout.ItemRole.LabelRole, self.anthropicKeyLabel)

        self.anthropicKeyRow = QHBoxLayout()
        self.anthropicKeyRow.setObjectName(u"anthropicKeyRow")
        self.anthropicKeyEdit = QLineEdit(self.accountsTab)
        self.anthropicKeyEdit.setObjectName(u"anthropicKeyEdit")
        self.anthropicKeyEdit.setEchoMode(QLineEdit.EchoMode.Password)

        self.anthropicKeyRow.addWidget(self.anthropicKeyEdit)

        self.anthropicKeyRemoveButton = QPushButton(self.accountsTab)
        self.anthropicKeyRemoveButton.setObjectName(u"anthropicKeyRemoveButton")

        self.anthropicKeyRow.addWidget(self.anthropicKeyRemoveButton)


        self.accountsForm.setLayout(3, QFormLayout.ItemRole.FieldRole, self.anthropicKeyRow)

        self.anthropicKeyStatus = QLabel(self.accountsTab)
        self.anthropicKeyStatus.setObjectName(u"anthropicKeyStatus")
        self.anthropicKeyStatus.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.anthropicKeyStatus.setWordWrap(True)

        self.accountsForm.setWidget(4, QFormLayout.ItemRole.FieldRole, self.anthropicKeyStatus)

        self.baseUrlLabel = QLabel(self.accountsTab)
        self.baseUrlLabel.setObjectName(u"baseUrlLabel")

        self.accountsForm.setWidget(5, QFormLayout.ItemRole.LabelRole, self.baseUrlLabel)

        self.baseUrlEdit = QLineEdit(self.accountsTab)
        self.baseUrlEdit.setObjectName(u"baseUrlEdit")

        self.accountsForm.setWidget(5, QFormLayout.ItemRole.FieldRole, self.baseUrlEdit)

        self.portLabel = QLabel(self.accountsTab)
        self.portLabel.setObjectName(u"portLabel")

        self.accountsForm.setWidget(6, QFormLayout.ItemRole.LabelRole, self.portLabel)

        self.portSpin = QSpinBox(self.accountsTab)
        self.portSpin.setObjectName(u"portSpin")
        self.portSpin.setMinimum(1024)
        self.portSpin.setMaximum(65535)

        self.accountsForm.setWidget(6, QFormLayout.ItemRole.FieldRole, self.portSpin)

        self.tabs.addTab(self.accountsTab, "")

        self.dialogLayout.addWidget(self.tabs)

        self.errorLabel = QLabel(SettingsDialog)
        self.errorLabel.setObjectName(u"errorLabel")
        self.errorLabel.setWordWrap(True)
        self.errorLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.dialogLayout.addWidget(self.errorLabel)

        self.buttonBox = QDialogButtonBox(SettingsDialog)
        self.buttonBox.setObjectName(u"buttonBox")
        self.buttonBox.setStandardButtons(QDialogButtonBox.StandardButton.Cancel|QDialogButtonBox.StandardButton.Save)

        self.dialogLayout.addWidget(self.buttonBox)

#if QT_CONFIG(shortcut)
        self.backendLabel.setBuddy(self.backendCombo)
        self.modeLabel.setBuddy(self.modeCombo)
        self.modelLabel.setBuddy(self.modelEdit)
        self.allowedLabel.setBuddy(self.allowedEdit)
        self.disallowedLabel.setBuddy(self.disallowedEdit)
        self.qoderTokenLabel.setBuddy(self.qoderTokenEdit)
        self.anthropicKeyLabel.setBuddy(self.anthropicKeyEdit)
        self.baseUrlLabel.setBuddy(self.baseUrlEdit)
        self.portLabel.setBuddy(self.portSpin)
#endif // QT_CONFIG(shortcut)

        self.retranslateUi(SettingsDialog)

        self.tabs.setCurrentIndex(0)


        QMetaObject.connectSlotsByName(SettingsDialog)
    # setupUi

    def retranslateUi(self, SettingsDialog):
        SettingsDialog.setWindowTitle(QCoreApplication.translate("SettingsDialog", u"Settings", None))
        self.backendLabel.setText(QCoreApplication.translate("SettingsDialog", u"Default &backend:", None))
#if QT_CONFIG(accessibility)
        self.backendCombo.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Default backend", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.backendCombo.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"The backend a new session starts with", None))
#endif // QT_CONFIG(accessibility)
        self.modeLabel.setText(QCoreApplication.translate("SettingsDialog", u"Default permission &mode:", None))
#if QT_CONFIG(accessibility)
        self.modeCombo.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Default permission mode", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.modeCombo.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"The permission mode a new session starts with", None))
#endif // QT_CONFIG(accessibility)
        self.modelLabel.setText(QCoreApplication.translate("SettingsDialog", u"Default m&odel:", None))
#if QT_CONFIG(accessibility)
        self.modelEdit.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Default model", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.modelEdit.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"The model a new session starts with; empty uses the CLI's", None))
#endif // QT_CONFIG(accessibility)
        self.modelEdit.setPlaceholderText(QCoreApplication.translate("SettingsDialog", u"The CLI's default model", None))
        self.allowedLabel.setText(QCoreApplication.translate("SettingsDialog", u"&Allowed tools:", None))
#if QT_CONFIG(accessibility)
        self.allowedEdit.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Default allowed tools", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.allowedEdit.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Tools and rules new sessions run without asking", None))
#endif // QT_CONFIG(accessibility)
        self.allowedEdit.setPlaceholderText(QCoreApplication.translate("SettingsDialog", u"e.g. Read, Grep, Bash(npm run test:*)", None))
        self.disallowedLabel.setText(QCoreApplication.translate("SettingsDialog", u"&Disallowed tools:", None))
#if QT_CONFIG(accessibility)
        self.disallowedEdit.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Default disallowed tools", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.disallowedEdit.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Tools and rules new sessions always refuse", None))
#endif // QT_CONFIG(accessibility)
        self.disallowedEdit.setPlaceholderText(QCoreApplication.translate("SettingsDialog", u"e.g. WebFetch, Bash(rm:*)", None))
        self.notificationsGroup.setTitle(QCoreApplication.translate("SettingsDialog", u"Notifications", None))
#if QT_CONFIG(accessibility)
        self.notifyCheck.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Show a desktop notification when a request arrives", None))
#endif // QT_CONFIG(accessibility)
        self.notifyCheck.setText(QCoreApplication.translate("SettingsDialog", u"&Notify me of new requests", None))
#if QT_CONFIG(accessibility)
        self.inactiveCheck.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Notify only when this window is not the active one", None))
#endif // QT_CONFIG(accessibility)
        self.inactiveCheck.setText(QCoreApplication.translate("SettingsDialog", u"Only while Qoder Desktop is &not the active window", None))
#if QT_CONFIG(accessibility)
        self.soundCheck.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Play a sound with each notification", None))
#endif // QT_CONFIG(accessibility)
        self.soundCheck.setText(QCoreApplication.translate("SettingsDialog", u"Play a &sound", None))
        self.tabs.setTabText(self.tabs.indexOf(self.sessionsTab), QCoreApplication.translate("SettingsDialog", u"&New sessions", None))
#if QT_CONFIG(tooltip)
        self.tabs.setTabToolTip(self.tabs.indexOf(self.sessionsTab), QCoreApplication.translate("SettingsDialog", u"What new sessions start with, and notifications", None))
#endif // QT_CONFIG(tooltip)
        self.workspacesHint.setText(QCoreApplication.translate("SettingsDialog", u"Trusted workspaces: folders you trust agents to work in.", None))
#if QT_CONFIG(accessibility)
        self.workspacesList.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Trusted workspaces", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.workspacesList.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Folders you trust; the agents' project settings load only there", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.addWorkspaceButton.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Add a trusted folder\u2026", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.addWorkspaceButton.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Trust another folder", None))
#endif // QT_CONFIG(accessibility)
        self.addWorkspaceButton.setText(QCoreApplication.translate("SettingsDialog", u"&Add folder\u2026", None))
#if QT_CONFIG(accessibility)
        self.removeWorkspaceButton.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Remove the trusted folder", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.removeWorkspaceButton.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Stop trusting the selected folder", None))
#endif // QT_CONFIG(accessibility)
        self.removeWorkspaceButton.setText(QCoreApplication.translate("SettingsDialog", u"&Remove", None))
        self.tabs.setTabText(self.tabs.indexOf(self.workspacesTab), QCoreApplication.translate("SettingsDialog", u"&Workspaces", None))
#if QT_CONFIG(tooltip)
        self.tabs.setTabToolTip(self.tabs.indexOf(self.workspacesTab), QCoreApplication.translate("SettingsDialog", u"The folders you trust", None))
#endif // QT_CONFIG(tooltip)
        self.qoderTokenLabel.setText(QCoreApplication.translate("SettingsDialog", u"&Qoder access token:", None))
#if QT_CONFIG(accessibility)
        self.qoderTokenEdit.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Qoder token", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.qoderTokenEdit.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Your Qoder access token, kept in the OS keyring", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.qoderTokenRemoveButton.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Remove the Qoder token", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.qoderTokenRemoveButton.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Delete the Qoder token from the keyring", None))
#endif // QT_CONFIG(accessibility)
        self.qoderTokenRemoveButton.setText(QCoreApplication.translate("SettingsDialog", u"Remove", None))
        self.anthropicKeyLabel.setText(QCoreApplication.translate("SettingsDialog", u"Anthropic API &key:", None))
#if QT_CONFIG(accessibility)
        self.anthropicKeyEdit.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Anthropic API key", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.anthropicKeyEdit.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Your Anthropic API key, kept in the OS keyring", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.anthropicKeyRemoveButton.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Remove the Anthropic API key", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.anthropicKeyRemoveButton.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Delete the Anthropic API key from the keyring", None))
#endif // QT_CONFIG(accessibility)
        self.anthropicKeyRemoveButton.setText(QCoreApplication.translate("SettingsDialog", u"Remove", None))
        self.baseUrlLabel.setText(QCoreApplication.translate("SettingsDialog", u"Anthropic &base URL:", None))
#if QT_CONFIG(accessibility)
        self.baseUrlEdit.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Anthropic base URL", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.baseUrlEdit.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"Where Claude sessions send their model requests; empty uses Anthropic's", None))
#endif // QT_CONFIG(accessibility)
        self.baseUrlEdit.setPlaceholderText(QCoreApplication.translate("SettingsDialog", u"https://api.anthropic.com (default)", None))
        self.portLabel.setText(QCoreApplication.translate("SettingsDialog", u"&Gateway port:", None))
#if QT_CONFIG(accessibility)
        self.portSpin.setAccessibleName(QCoreApplication.translate("SettingsDialog", u"Gateway port", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.portSpin.setAccessibleDescription(QCoreApplication.translate("SettingsDialog", u"The loopback port agents started elsewhere send their approvals to", None))
#endif // QT_CONFIG(accessibility)
        self.tabs.setTabText(self.tabs.indexOf(self.accountsTab), QCoreApplication.translate("SettingsDialog", u"A&ccounts", None))
#if QT_CONFIG(tooltip)
        self.tabs.setTabToolTip(self.tabs.indexOf(self.accountsTab), QCoreApplication.translate("SettingsDialog", u"Tokens and keys (kept in the OS keyring), the model endpoint and the gateway port", None))
#endif // QT_CONFIG(tooltip)
    # retranslateUi

