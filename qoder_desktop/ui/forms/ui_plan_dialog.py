# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'plan_dialog.ui'
##
## Created by: Qt User Interface Compiler version 6.11.3
##
## WARNING! All changes made in this file will be lost when recompiling UI file!
################################################################################

from PySide6.QtCore import (QCoreApplication, QMetaObject, QSize)
from PySide6.QtWidgets import (QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
    QPushButton, QSizePolicy, QSpacerItem, QVBoxLayout, QWidget)

from qoder_desktop.ui.widgets.wrap_label import WrapLabel

class Ui_PlanDialog(object):
    def setupUi(self, PlanDialog):
        if not PlanDialog.objectName():
            PlanDialog.setObjectName(u"PlanDialog")
        PlanDialog.resize(760, 640)
        PlanDialog.setMinimumSize(QSize(480, 400))
        self.dialogLayout = QVBoxLayout(PlanDialog)
        self.dialogLayout.setSpacing(8)
        self.dialogLayout.setObjectName(u"dialogLayout")
        self.dialogLayout.setContentsMargins(16, 14, 16, 14)
        self.titleLabel = WrapLabel(PlanDialog)
        self.titleLabel.setObjectName(u"titleLabel")
        self.titleLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.titleLabel.setWordWrap(True)

        self.dialogLayout.addWidget(self.titleLabel)

        self.whoLabel = WrapLabel(PlanDialog)
        self.whoLabel.setObjectName(u"whoLabel")
        self.whoLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.whoLabel.setWordWrap(True)

        self.dialogLayout.addWidget(self.whoLabel)

        self.planContainer = QWidget(PlanDialog)
        self.planContainer.setObjectName(u"planContainer")
        sizePolicy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        sizePolicy.setHorizontalStretch(0)
        sizePolicy.setVerticalStretch(1)
        sizePolicy.setHeightForWidth(self.planContainer.sizePolicy().hasHeightForWidth())
        self.planContainer.setSizePolicy(sizePolicy)
        self.planLayout = QVBoxLayout(self.planContainer)
        self.planLayout.setObjectName(u"planLayout")
        self.planLayout.setContentsMargins(0, 0, 0, 0)

        self.dialogLayout.addWidget(self.planContainer)

        self.answerForm = QFormLayout()
        self.answerForm.setObjectName(u"answerForm")
        self.answerForm.setHorizontalSpacing(12)
        self.modeCaption = QLabel(PlanDialog)
        self.modeCaption.setObjectName(u"modeCaption")
        self.modeCaption.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.answerForm.setWidget(0, QFormLayout.ItemRole.LabelRole, self.modeCaption)

        self.modeCombo = QComboBox(PlanDialog)
        self.modeCombo.setObjectName(u"modeCombo")

        self.answerForm.setWidget(0, QFormLayout.ItemRole.FieldRole, self.modeCombo)

        self.feedbackCaption = QLabel(PlanDialog)
        self.feedbackCaption.setObjectName(u"feedbackCaption")
        self.feedbackCaption.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.answerForm.setWidget(1, QFormLayout.ItemRole.LabelRole, self.feedbackCaption)

        self.feedbackEdit = QLineEdit(PlanDialog)
        self.feedbackEdit.setObjectName(u"feedbackEdit")
        self.feedbackEdit.setClearButtonEnabled(True)

        self.answerForm.setWidget(1, QFormLayout.ItemRole.FieldRole, self.feedbackEdit)


        self.dialogLayout.addLayout(self.answerForm)

        self.buttonRow = QHBoxLayout()
        self.buttonRow.setSpacing(8)
        self.buttonRow.setObjectName(u"buttonRow")
        self.keepPlanningButton = QPushButton(PlanDialog)
        self.keepPlanningButton.setObjectName(u"keepPlanningButton")
        self.keepPlanningButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.keepPlanningButton)

        self.buttonSpacer = QSpacerItem(20, 10, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.buttonRow.addItem(self.buttonSpacer)

        self.approveButton = QPushButton(PlanDialog)
        self.approveButton.setObjectName(u"approveButton")
        self.approveButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.approveButton)


        self.dialogLayout.addLayout(self.buttonRow)

        self.dialogLayout.setStretch(2, 1)
#if QT_CONFIG(shortcut)
        self.modeCaption.setBuddy(self.modeCombo)
        self.feedbackCaption.setBuddy(self.feedbackEdit)
#endif // QT_CONFIG(shortcut)
        QWidget.setTabOrder(self.feedbackEdit, self.keepPlanningButton)
        QWidget.setTabOrder(self.keepPlanningButton, self.modeCombo)
        QWidget.setTabOrder(self.modeCombo, self.approveButton)

        self.retranslateUi(PlanDialog)

        QMetaObject.connectSlotsByName(PlanDialog)
    # setupUi

    def retranslateUi(self, PlanDialog):
        PlanDialog.setWindowTitle(QCoreApplication.translate("PlanDialog", u"Approve plan", None))
        self.titleLabel.setText(QCoreApplication.translate("PlanDialog", u"The agent has a plan", None))
        self.whoLabel.setText(QCoreApplication.translate("PlanDialog", u"Session", None))
        self.modeCaption.setText(QCoreApplication.translate("PlanDialog", u"Continue &in mode:", None))
#if QT_CONFIG(accessibility)
        self.modeCombo.setAccessibleName(QCoreApplication.translate("PlanDialog", u"Mode after approval", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.modeCombo.setAccessibleDescription(QCoreApplication.translate("PlanDialog", u"The permission mode the session continues in once you approve the plan", None))
#endif // QT_CONFIG(accessibility)
        self.feedbackCaption.setText(QCoreApplication.translate("PlanDialog", u"&Feedback:", None))
        self.feedbackEdit.setPlaceholderText(QCoreApplication.translate("PlanDialog", u"What should change? (sent with Keep planning)", None))
#if QT_CONFIG(accessibility)
        self.keepPlanningButton.setAccessibleDescription(QCoreApplication.translate("PlanDialog", u"Send the plan back with your feedback; the agent keeps planning", None))
#endif // QT_CONFIG(accessibility)
        self.keepPlanningButton.setText(QCoreApplication.translate("PlanDialog", u"Keep planning (Esc)", None))
#if QT_CONFIG(accessibility)
        self.approveButton.setAccessibleDescription(QCoreApplication.translate("PlanDialog", u"Approve the plan; the agent starts working in the chosen mode", None))
#endif // QT_CONFIG(accessibility)
        self.approveButton.setText(QCoreApplication.translate("PlanDialog", u"Approve plan (Ctrl+Return)", None))
    # retranslateUi

