# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'approval_dialog.ui'
##
## Created by: Qt User Interface Compiler version 6.11.3
##
## WARNING! All changes made in this file will be lost when recompiling UI file!
################################################################################

from PySide6.QtCore import (QCoreApplication, QMetaObject, QSize)
from PySide6.QtWidgets import (QFormLayout, QFrame, QGroupBox, QHBoxLayout, QLabel,
    QLineEdit, QPushButton, QScrollArea, QSizePolicy, QSpacerItem, QTabWidget,
    QVBoxLayout, QWidget)

from qoder_desktop.ui.widgets.wrap_label import WrapLabel

class Ui_ApprovalDialog(object):
    def setupUi(self, ApprovalDialog):
        if not ApprovalDialog.objectName():
            ApprovalDialog.setObjectName(u"ApprovalDialog")
        ApprovalDialog.resize(820, 720)
        ApprovalDialog.setMinimumSize(QSize(560, 480))
        self.dialogLayout = QVBoxLayout(ApprovalDialog)
        self.dialogLayout.setSpacing(8)
        self.dialogLayout.setObjectName(u"dialogLayout")
        self.dialogLayout.setContentsMargins(16, 14, 16, 14)
        self.headerScroll = QScrollArea(ApprovalDialog)
        self.headerScroll.setObjectName(u"headerScroll")
        sizePolicy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        sizePolicy.setHorizontalStretch(0)
        sizePolicy.setVerticalStretch(0)
        sizePolicy.setHeightForWidth(self.headerScroll.sizePolicy().hasHeightForWidth())
        self.headerScroll.setSizePolicy(sizePolicy)
        self.headerScroll.setMaximumSize(QSize(16777215, 180))
        self.headerScroll.setFrameShape(QFrame.Shape.NoFrame)
        self.headerScroll.setProperty("horizontalScrollBarPolicy", 1)  # Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        self.headerScroll.setWidgetResizable(True)
        self.headerContents = QWidget()
        self.headerContents.setObjectName(u"headerContents")
        self.headerLayout = QVBoxLayout(self.headerContents)
        self.headerLayout.setSpacing(8)
        self.headerLayout.setObjectName(u"headerLayout")
        self.headerLayout.setContentsMargins(0, 0, 0, 0)
        self.titleLabel = WrapLabel(self.headerContents)
        self.titleLabel.setObjectName(u"titleLabel")
        self.titleLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.titleLabel.setWordWrap(True)

        self.headerLayout.addWidget(self.titleLabel)

        self.whoLabel = WrapLabel(self.headerContents)
        self.whoLabel.setObjectName(u"whoLabel")
        self.whoLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.whoLabel.setWordWrap(True)

        self.headerLayout.addWidget(self.whoLabel)

        self.infoForm = QFormLayout()
        self.infoForm.setObjectName(u"infoForm")
        self.infoForm.setHorizontalSpacing(12)
        self.infoForm.setVerticalSpacing(4)
        self.descriptionCaption = QLabel(self.headerContents)
        self.descriptionCaption.setObjectName(u"descriptionCaption")
        self.descriptionCaption.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.infoForm.setWidget(0, QFormLayout.ItemRole.LabelRole, self.descriptionCaption)

        self.descriptionLabel = WrapLabel(self.headerContents)
        self.descriptionLabel.setObjectName(u"descriptionLabel")
        self.descriptionLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.descriptionLabel.setWordWrap(True)

        self.infoForm.setWidget(0, QFormLayout.ItemRole.FieldRole, self.descriptionLabel)

        self.reasonCaption = QLabel(self.headerContents)
        self.reasonCaption.setObjectName(u"reasonCaption")
        self.reasonCaption.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.infoForm.setWidget(1, QFormLayout.ItemRole.LabelRole, self.reasonCaption)

        self.reasonLabel = WrapLabel(self.headerContents)
        self.reasonLabel.setObjectName(u"reasonLabel")
        self.reasonLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.reasonLabel.setWordWrap(True)

        self.infoForm.setWidget(1, QFormLayout.ItemRole.FieldRole, self.reasonLabel)

        self.blockedCaption = QLabel(self.headerContents)
        self.blockedCaption.setObjectName(u"blockedCaption")
        self.blockedCaption.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.infoForm.setWidget(2, QFormLayout.ItemRole.LabelRole, self.blockedCaption)

        self.blockedLabel = WrapLabel(self.headerContents)
        self.blockedLabel.setObjectName(u"blockedLabel")
        self.blockedLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.blockedLabel.setWordWrap(True)

        self.infoForm.setWidget(2, QFormLayout.ItemRole.FieldRole, self.blockedLabel)


        self.headerLayout.addLayout(self.infoForm)

        self.headerScroll.setWidget(self.headerContents)

        self.dialogLayout.addWidget(self.headerScroll)

        self.hiddenWarning = WrapLabel(ApprovalDialog)
        self.hiddenWarning.setObjectName(u"hiddenWarning")
        self.hiddenWarning.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.hiddenWarning.setWordWrap(True)

        self.dialogLayout.addWidget(self.hiddenWarning)

        self.detailTabs = QTabWidget(ApprovalDialog)
        self.detailTabs.setObjectName(u"detailTabs")
        self.detailTabs.setDocumentMode(True)
        self.inspectTab = QWidget()
        self.inspectTab.setObjectName(u"inspectTab")
        self.inspectLayout = QVBoxLayout(self.inspectTab)
        self.inspectLayout.setObjectName(u"inspectLayout")
        self.inspectLayout.setContentsMargins(0, 6, 0, 0)
        self.detailTabs.addTab(self.inspectTab, "")
        self.inputTab = QWidget()
        self.inputTab.setObjectName(u"inputTab")
        self.inputLayout = QVBoxLayout(self.inputTab)
        self.inputLayout.setObjectName(u"inputLayout")
        self.inputLayout.setContentsMargins(0, 6, 0, 0)
        self.detailTabs.addTab(self.inputTab, "")

        self.dialogLayout.addWidget(self.detailTabs)

        self.sessionGroup = QGroupBox(ApprovalDialog)
        self.sessionGroup.setObjectName(u"sessionGroup")
        self.sessionLayout = QVBoxLayout(self.sessionGroup)
        self.sessionLayout.setSpacing(4)
        self.sessionLayout.setObjectName(u"sessionLayout")

        self.dialogLayout.addWidget(self.sessionGroup)

        self.denyRow = QHBoxLayout()
        self.denyRow.setObjectName(u"denyRow")
        self.denyReasonCaption = QLabel(ApprovalDialog)
        self.denyReasonCaption.setObjectName(u"denyReasonCaption")
        self.denyReasonCaption.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.denyRow.addWidget(self.denyReasonCaption)

        self.denyReasonEdit = QLineEdit(ApprovalDialog)
        self.denyReasonEdit.setObjectName(u"denyReasonEdit")
        self.denyReasonEdit.setClearButtonEnabled(True)

        self.denyRow.addWidget(self.denyReasonEdit)


        self.dialogLayout.addLayout(self.denyRow)

        self.buttonRow = QHBoxLayout()
        self.buttonRow.setSpacing(8)
        self.buttonRow.setObjectName(u"buttonRow")
        self.denyButton = QPushButton(ApprovalDialog)
        self.denyButton.setObjectName(u"denyButton")
        self.denyButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.denyButton)

        self.denyStopButton = QPushButton(ApprovalDialog)
        self.denyStopButton.setObjectName(u"denyStopButton")
        self.denyStopButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.denyStopButton)

        self.buttonSpacer = QSpacerItem(20, 10, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.buttonRow.addItem(self.buttonSpacer)

        self.allowSessionButton = QPushButton(ApprovalDialog)
        self.allowSessionButton.setObjectName(u"allowSessionButton")
        self.allowSessionButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.allowSessionButton)

        self.allowOnceButton = QPushButton(ApprovalDialog)
        self.allowOnceButton.setObjectName(u"allowOnceButton")
        self.allowOnceButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.allowOnceButton)


        self.dialogLayout.addLayout(self.buttonRow)

        self.dialogLayout.setStretch(2, 1)
#if QT_CONFIG(shortcut)
        self.denyReasonCaption.setBuddy(self.denyReasonEdit)
#endif // QT_CONFIG(shortcut)
        QWidget.setTabOrder(self.denyReasonEdit, self.denyButton)
        QWidget.setTabOrder(self.denyButton, self.denyStopButton)
        QWidget.setTabOrder(self.denyStopButton, self.detailTabs)
        QWidget.setTabOrder(self.detailTabs, self.allowSessionButton)
        QWidget.setTabOrder(self.allowSessionButton, self.allowOnceButton)

        self.retranslateUi(ApprovalDialog)

        self.detailTabs.setCurrentIndex(0)


        QMetaObject.connectSlotsByName(ApprovalDialog)
    # setupUi

    def retranslateUi(self, ApprovalDialog):
        ApprovalDialog.setWindowTitle(QCoreApplication.translate("ApprovalDialog", u"Approve", None))
#if QT_CONFIG(accessibility)
        self.headerScroll.setAccessibleName(QCoreApplication.translate("ApprovalDialog", u"Request details", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.headerScroll.setAccessibleDescription(QCoreApplication.translate("ApprovalDialog", u"Who asks, for which tool, and why", None))
#endif // QT_CONFIG(accessibility)
        self.titleLabel.setText(QCoreApplication.translate("ApprovalDialog", u"Allow this tool call?", None))
        self.whoLabel.setText(QCoreApplication.translate("ApprovalDialog", u"Session", None))
        self.descriptionCaption.setText(QCoreApplication.translate("ApprovalDialog", u"Description", None))
        self.reasonCaption.setText(QCoreApplication.translate("ApprovalDialog", u"Why it asks", None))
        self.blockedCaption.setText(QCoreApplication.translate("ApprovalDialog", u"Blocked path", None))
        self.detailTabs.setTabText(self.detailTabs.indexOf(self.inspectTab), QCoreApplication.translate("ApprovalDialog", u"Details", None))
        self.detailTabs.setTabText(self.detailTabs.indexOf(self.inputTab), QCoreApplication.translate("ApprovalDialog", u"Input (JSON) \u2014 Ctrl+E", None))
        self.sessionGroup.setTitle(QCoreApplication.translate("ApprovalDialog", u"Allow for this session", None))
        self.denyReasonCaption.setText(QCoreApplication.translate("ApprovalDialog", u"Deny &reason:", None))
        self.denyReasonEdit.setPlaceholderText(QCoreApplication.translate("ApprovalDialog", u"Optional \u2014 tells the agent why (sent with Deny)", None))
#if QT_CONFIG(accessibility)
        self.denyButton.setAccessibleDescription(QCoreApplication.translate("ApprovalDialog", u"Refuse this request; the agent gets the reason you typed", None))
#endif // QT_CONFIG(accessibility)
        self.denyButton.setText(QCoreApplication.translate("ApprovalDialog", u"Deny (Esc)", None))
#if QT_CONFIG(accessibility)
        self.denyStopButton.setAccessibleDescription(QCoreApplication.translate("ApprovalDialog", u"Refuse this request and stop the session", None))
#endif // QT_CONFIG(accessibility)
        self.denyStopButton.setText(QCoreApplication.translate("ApprovalDialog", u"Deny and stop", None))
#if QT_CONFIG(accessibility)
        self.allowSessionButton.setAccessibleDescription(QCoreApplication.translate("ApprovalDialog", u"Run it, and let the session rule below answer like requests in this session", None))
#endif // QT_CONFIG(accessibility)
        self.allowSessionButton.setText(QCoreApplication.translate("ApprovalDialog", u"Allow for this session (Ctrl+Shift+Return)", None))
#if QT_CONFIG(accessibility)
        self.allowOnceButton.setAccessibleDescription(QCoreApplication.translate("ApprovalDialog", u"Run it this once, with the input as shown", None))
#endif // QT_CONFIG(accessibility)
        self.allowOnceButton.setText(QCoreApplication.translate("ApprovalDialog", u"Allow once (Ctrl+Return)", None))
    # retranslateUi

