# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'question_dialog.ui'
##
## Created by: Qt User Interface Compiler version 6.11.3
##
## WARNING! All changes made in this file will be lost when recompiling UI file!
################################################################################

from PySide6.QtCore import (QCoreApplication, QMetaObject, QSize)
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea,
    QSizePolicy, QSpacerItem, QSplitter, QVBoxLayout, QWidget)

from qoder_desktop.ui.widgets.wrap_label import WrapLabel

class Ui_QuestionDialog(object):
    def setupUi(self, QuestionDialog):
        if not QuestionDialog.objectName():
            QuestionDialog.setObjectName(u"QuestionDialog")
        QuestionDialog.resize(860, 600)
        QuestionDialog.setMinimumSize(QSize(520, 400))
        self.dialogLayout = QVBoxLayout(QuestionDialog)
        self.dialogLayout.setSpacing(8)
        self.dialogLayout.setObjectName(u"dialogLayout")
        self.dialogLayout.setContentsMargins(16, 14, 16, 14)
        self.titleLabel = WrapLabel(QuestionDialog)
        self.titleLabel.setObjectName(u"titleLabel")
        self.titleLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.titleLabel.setWordWrap(True)

        self.dialogLayout.addWidget(self.titleLabel)

        self.whoLabel = WrapLabel(QuestionDialog)
        self.whoLabel.setObjectName(u"whoLabel")
        self.whoLabel.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.whoLabel.setWordWrap(True)

        self.dialogLayout.addWidget(self.whoLabel)

        self.contentSplitter = QSplitter(parent=QuestionDialog)
        self.contentSplitter.setObjectName(u"contentSplitter")
        self.contentSplitter.setProperty("orientation", 1)  # Qt.Orientation.Horizontal
        self.contentSplitter.setChildrenCollapsible(False)
        self.questionsScroll = QScrollArea(self.contentSplitter)
        self.questionsScroll.setObjectName(u"questionsScroll")
        self.questionsScroll.setWidgetResizable(True)
        self.questionsScroll.setFrameShape(QFrame.Shape.NoFrame)
        self.questionsContainer = QWidget()
        self.questionsContainer.setObjectName(u"questionsContainer")
        self.questionsLayout = QVBoxLayout(self.questionsContainer)
        self.questionsLayout.setSpacing(10)
        self.questionsLayout.setObjectName(u"questionsLayout")
        self.questionsLayout.setContentsMargins(0, 0, 6, 0)
        self.questionsScroll.setWidget(self.questionsContainer)
        self.contentSplitter.addWidget(self.questionsScroll)
        self.previewContainer = QWidget(self.contentSplitter)
        self.previewContainer.setObjectName(u"previewContainer")
        self.previewLayout = QVBoxLayout(self.previewContainer)
        self.previewLayout.setObjectName(u"previewLayout")
        self.previewLayout.setContentsMargins(6, 0, 0, 0)
        self.previewCaption = QLabel(self.previewContainer)
        self.previewCaption.setObjectName(u"previewCaption")
        self.previewCaption.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText

        self.previewLayout.addWidget(self.previewCaption)

        self.contentSplitter.addWidget(self.previewContainer)

        self.dialogLayout.addWidget(self.contentSplitter)

        self.keysHint = WrapLabel(QuestionDialog)
        self.keysHint.setObjectName(u"keysHint")
        self.keysHint.setProperty("textFormat", 0)  # Qt.TextFormat.PlainText
        self.keysHint.setWordWrap(True)

        self.dialogLayout.addWidget(self.keysHint)

        self.buttonRow = QHBoxLayout()
        self.buttonRow.setSpacing(8)
        self.buttonRow.setObjectName(u"buttonRow")
        self.cancelButton = QPushButton(QuestionDialog)
        self.cancelButton.setObjectName(u"cancelButton")
        self.cancelButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.cancelButton)

        self.buttonSpacer = QSpacerItem(20, 10, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

        self.buttonRow.addItem(self.buttonSpacer)

        self.submitButton = QPushButton(QuestionDialog)
        self.submitButton.setObjectName(u"submitButton")
        self.submitButton.setAutoDefault(False)

        self.buttonRow.addWidget(self.submitButton)


        self.dialogLayout.addLayout(self.buttonRow)

        self.dialogLayout.setStretch(2, 1)

        self.retranslateUi(QuestionDialog)

        QMetaObject.connectSlotsByName(QuestionDialog)
    # setupUi

    def retranslateUi(self, QuestionDialog):
        QuestionDialog.setWindowTitle(QCoreApplication.translate("QuestionDialog", u"Question", None))
        self.titleLabel.setText(QCoreApplication.translate("QuestionDialog", u"The agent has a question", None))
        self.whoLabel.setText(QCoreApplication.translate("QuestionDialog", u"Session", None))
#if QT_CONFIG(accessibility)
        self.questionsScroll.setAccessibleName(QCoreApplication.translate("QuestionDialog", u"Questions", None))
#endif // QT_CONFIG(accessibility)
#if QT_CONFIG(accessibility)
        self.questionsScroll.setAccessibleDescription(QCoreApplication.translate("QuestionDialog", u"The agent's questions with their options", None))
#endif // QT_CONFIG(accessibility)
        self.previewCaption.setText(QCoreApplication.translate("QuestionDialog", u"Preview", None))
        self.keysHint.setText(QCoreApplication.translate("QuestionDialog", u"Keys 1\u20134 choose an option of the current question.", None))
#if QT_CONFIG(accessibility)
        self.cancelButton.setAccessibleDescription(QCoreApplication.translate("QuestionDialog", u"Decline to answer; the agent is told you declined", None))
#endif // QT_CONFIG(accessibility)
        self.cancelButton.setText(QCoreApplication.translate("QuestionDialog", u"Cancel (Esc)", None))
#if QT_CONFIG(accessibility)
        self.submitButton.setAccessibleDescription(QCoreApplication.translate("QuestionDialog", u"Send your answers to the agent", None))
#endif // QT_CONFIG(accessibility)
        self.submitButton.setText(QCoreApplication.translate("QuestionDialog", u"Submit (Ctrl+Return)", None))
    # retranslateUi

