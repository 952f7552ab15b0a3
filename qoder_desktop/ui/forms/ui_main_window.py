# -*- coding: utf-8 -*-

################################################################################
## Form generated from reading UI file 'main_window.ui'
##
## Created by: Qt User Interface Compiler version 6.11.3
##
## WARNING! All changes made in this file will be lost when recompiling UI file!
################################################################################

from PySide6.QtCore import (QCoreApplication, QDate, QDateTime, QLocale,
    QMetaObject, QObject, QPoint, QRect,
    QSize, QTime, QUrl, Qt)
from PySide6.QtGui import (QAction, QBrush, QColor, QConicalGradient,
    QCursor, QFont, QFontDatabase, QGradient,
    QIcon, QImage, QKeySequence, QLinearGradient,
    QPainter, QPalette, QPixmap, QRadialGradient,
    QTransform)
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QHBoxLayout, QHeaderView,
    QLabel, QMainWindow, QMenu, QMenuBar,
    QPlainTextEdit, QPushButton, QSizePolicy, QSplitter,
    QStatusBar, QTableView, QToolBar, QTreeWidgetItem,
    QVBoxLayout, QWidget)

from qoder_desktop.ui.widgets.queue_view import QueueView
from qoder_desktop.ui.widgets.rules_view import RulesView
from qoder_desktop.ui.widgets.transcript_view import TranscriptView

class Ui_MainWindow(object):
    def setupUi(self, MainWindow):
        if not MainWindow.objectName():
            MainWindow.setObjectName(u"MainWindow")
        MainWindow.resize(1360, 820)
        MainWindow.setUnifiedTitleAndToolBarOnMac(True)
        self.newSessionAction = QAction(MainWindow)
        self.newSessionAction.setObjectName(u"newSessionAction")
        self.connectAgentAction = QAction(MainWindow)
        self.connectAgentAction.setObjectName(u"connectAgentAction")
        self.settingsAction = QAction(MainWindow)
        self.settingsAction.setObjectName(u"settingsAction")
        self.settingsAction.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quitAction = QAction(MainWindow)
        self.quitAction.setObjectName(u"quitAction")
        self.quitAction.setMenuRole(QAction.MenuRole.QuitRole)
        self.promptAction = QAction(MainWindow)
        self.promptAction.setObjectName(u"promptAction")
        self.interruptAction = QAction(MainWindow)
        self.interruptAction.setObjectName(u"interruptAction")
        self.stopAction = QAction(MainWindow)
        self.stopAction.setObjectName(u"stopAction")
        self.openNextAction = QAction(MainWindow)
        self.openNextAction.setObjectName(u"openNextAction")
        self.shortcutsAction = QAction(MainWindow)
        self.shortcutsAction.setObjectName(u"shortcutsAction")
        self.aboutAction = QAction(MainWindow)
        self.aboutAction.setObjectName(u"aboutAction")
        self.aboutAction.setMenuRole(QAction.MenuRole.AboutRole)
        self.centralWidget = QWidget(MainWindow)
        self.centralWidget.setObjectName(u"centralWidget")
        self.centralLayout = QVBoxLayout(self.centralWidget)
        self.centralLayout.setSpacing(0)
        self.centralLayout.setObjectName(u"centralLayout")
        self.centralLayout.setContentsMargins(6, 4, 6, 0)
        self.mainSplitter = QSplitter(self.centralWidget)
        self.mainSplitter.setObjectName(u"mainSplitter")
        self.mainSplitter.setOrientation(Qt.Orientation.Horizontal)
        self.mainSplitter.setChildrenCollapsible(False)
        self.leftSplitter = QSplitter(self.mainSplitter)
        self.leftSplitter.setObjectName(u"leftSplitter")
        self.leftSplitter.setOrientation(Qt.Orientation.Vertical)
        self.leftSplitter.setChildrenCollapsible(False)
        self.sessionsPane = QWidget(self.leftSplitter)
        self.sessionsPane.setObjectName(u"sessionsPane")
        self.sessionsLayout = QVBoxLayout(self.sessionsPane)
        self.sessionsLayout.setSpacing(4)
        self.sessionsLayout.setObjectName(u"sessionsLayout")
        self.sessionsLayout.setContentsMargins(0, 0, 0, 0)
        self.sessionsHeader = QLabel(self.sessionsPane)
        self.sessionsHeader.setObjectName(u"sessionsHeader")

        self.sessionsLayout.addWidget(self.sessionsHeader)

        self.sessionsView = QTableView(self.sessionsPane)
        self.sessionsView.setObjectName(u"sessionsView")
        self.sessionsView.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.sessionsView.setAlternatingRowColors(True)
        self.sessionsView.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.sessionsView.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.sessionsView.setShowGrid(False)
        self.sessionsView.setWordWrap(False)
        self.sessionsView.setTextElideMode(Qt.TextElideMode.ElideMiddle)

        self.sessionsLayout.addWidget(self.sessionsView)

        self.leftSplitter.addWidget(self.sessionsPane)
        self.queuePane = QWidget(self.leftSplitter)
        self.queuePane.setObjectName(u"queuePane")
        self.queueLayout = QVBoxLayout(self.queuePane)
        self.queueLayout.setSpacing(4)
        self.queueLayout.setObjectName(u"queueLayout")
        self.queueLayout.setContentsMargins(0, 0, 0, 4)
        self.queueHeader = QLabel(self.queuePane)
        self.queueHeader.setObjectName(u"queueHeader")

        self.queueLayout.addWidget(self.queueHeader)

        self.queueView = QueueView(self.queuePane)
        self.queueView.setObjectName(u"queueView")

        self.queueLayout.addWidget(self.queueView)

        self.leftSplitter.addWidget(self.queuePane)
        self.mainSplitter.addWidget(self.leftSplitter)
        self.centerSplitter = QSplitter(self.mainSplitter)
        self.centerSplitter.setObjectName(u"centerSplitter")
        self.centerSplitter.setOrientation(Qt.Orientation.Vertical)
        self.centerSplitter.setChildrenCollapsible(False)
        self.transcriptPane = QWidget(self.centerSplitter)
        self.transcriptPane.setObjectName(u"transcriptPane")
        self.transcriptLayout = QVBoxLayout(self.transcriptPane)
        self.transcriptLayout.setSpacing(4)
        self.transcriptLayout.setObjectName(u"transcriptLayout")
        self.transcriptLayout.setContentsMargins(0, 0, 0, 0)
        self.sessionTitle = QLabel(self.transcriptPane)
        self.sessionTitle.setObjectName(u"sessionTitle")
        self.sessionTitle.setTextFormat(Qt.TextFormat.PlainText)

        self.transcriptLayout.addWidget(self.sessionTitle)

        self.sessionDetails = QLabel(self.transcriptPane)
        self.sessionDetails.setObjectName(u"sessionDetails")
        self.sessionDetails.setTextFormat(Qt.TextFormat.PlainText)
        self.sessionDetails.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.transcriptLayout.addWidget(self.sessionDetails)

        self.transcriptView = TranscriptView(self.transcriptPane)
        self.transcriptView.setObjectName(u"transcriptView")

        self.transcriptLayout.addWidget(self.transcriptView)

        self.promptRow = QHBoxLayout()
        self.promptRow.setSpacing(6)
        self.promptRow.setObjectName(u"promptRow")
        self.promptEdit = QPlainTextEdit(self.transcriptPane)
        self.promptEdit.setObjectName(u"promptEdit")
        self.promptEdit.setMaximumSize(QSize(16777215, 64))
        self.promptEdit.setTabChangesFocus(True)

        self.promptRow.addWidget(self.promptEdit)

        self.sendButton = QPushButton(self.transcriptPane)
        self.sendButton.setObjectName(u"sendButton")

        self.promptRow.addWidget(self.sendButton)


        self.transcriptLayout.addLayout(self.promptRow)

        self.centerSplitter.addWidget(self.transcriptPane)
        self.rulesPane = QWidget(self.centerSplitter)
        self.rulesPane.setObjectName(u"rulesPane")
        self.rulesLayout = QVBoxLayout(self.rulesPane)
        self.rulesLayout.setSpacing(4)
        self.rulesLayout.setObjectName(u"rulesLayout")
        self.rulesLayout.setContentsMargins(0, 4, 0, 0)
        self.rulesHeader = QLabel(self.rulesPane)
        self.rulesHeader.setObjectName(u"rulesHeader")

        self.rulesLayout.addWidget(self.rulesHeader)

        self.rulesView = RulesView(self.rulesPane)
        self.rulesView.setObjectName(u"rulesView")

        self.rulesLayout.addWidget(self.rulesView)

        self.centerSplitter.addWidget(self.rulesPane)
        self.mainSplitter.addWidget(self.centerSplitter)

        self.centralLayout.addWidget(self.mainSplitter)

        MainWindow.setCentralWidget(self.centralWidget)
        self.menuBar = QMenuBar(MainWindow)
        self.menuBar.setObjectName(u"menuBar")
        self.fileMenu = QMenu(self.menuBar)
        self.fileMenu.setObjectName(u"fileMenu")
        self.sessionMenu = QMenu(self.menuBar)
        self.sessionMenu.setObjectName(u"sessionMenu")
        self.viewMenu = QMenu(self.menuBar)
        self.viewMenu.setObjectName(u"viewMenu")
        self.helpMenu = QMenu(self.menuBar)
        self.helpMenu.setObjectName(u"helpMenu")
        MainWindow.setMenuBar(self.menuBar)
        self.mainToolBar = QToolBar(MainWindow)
        self.mainToolBar.setObjectName(u"mainToolBar")
        self.mainToolBar.setMovable(False)
        self.mainToolBar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        MainWindow.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.mainToolBar)
        self.statusBar = QStatusBar(MainWindow)
        self.statusBar.setObjectName(u"statusBar")
        MainWindow.setStatusBar(self.statusBar)
        QWidget.setTabOrder(self.sessionsView, self.transcriptView)
        QWidget.setTabOrder(self.transcriptView, self.promptEdit)
        QWidget.setTabOrder(self.promptEdit, self.sendButton)
        QWidget.setTabOrder(self.sendButton, self.queueView)
        QWidget.setTabOrder(self.queueView, self.rulesView)

        self.menuBar.addAction(self.fileMenu.menuAction())
        self.menuBar.addAction(self.sessionMenu.menuAction())
        self.menuBar.addAction(self.viewMenu.menuAction())
        self.menuBar.addAction(self.helpMenu.menuAction())
        self.fileMenu.addAction(self.newSessionAction)
        self.fileMenu.addAction(self.connectAgentAction)
        self.fileMenu.addSeparator()
        self.fileMenu.addAction(self.settingsAction)
        self.fileMenu.addSeparator()
        self.fileMenu.addAction(self.quitAction)
        self.sessionMenu.addAction(self.promptAction)
        self.sessionMenu.addAction(self.interruptAction)
        self.sessionMenu.addAction(self.stopAction)
        self.sessionMenu.addSeparator()
        self.viewMenu.addAction(self.openNextAction)
        self.helpMenu.addAction(self.shortcutsAction)
        self.helpMenu.addSeparator()
        self.helpMenu.addAction(self.aboutAction)
        self.mainToolBar.addAction(self.newSessionAction)
        self.mainToolBar.addSeparator()
        self.mainToolBar.addAction(self.interruptAction)
        self.mainToolBar.addAction(self.stopAction)
        self.mainToolBar.addSeparator()

        self.retranslateUi(MainWindow)

        QMetaObject.connectSlotsByName(MainWindow)
    # setupUi

    def retranslateUi(self, MainWindow):
        MainWindow.setWindowTitle(QCoreApplication.translate("MainWindow", u"Qoder Desktop", None))
        self.newSessionAction.setText(QCoreApplication.translate("MainWindow", u"&New session\u2026", None))
#if QT_CONFIG(tooltip)
        self.newSessionAction.setToolTip(QCoreApplication.translate("MainWindow", u"Start an agent session (Ctrl+N)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(shortcut)
        self.newSessionAction.setShortcut(QCoreApplication.translate("MainWindow", u"Ctrl+N", None))
#endif // QT_CONFIG(shortcut)
        self.connectAgentAction.setText(QCoreApplication.translate("MainWindow", u"&Connect an Agent\u2026", None))
#if QT_CONFIG(tooltip)
        self.connectAgentAction.setToolTip(QCoreApplication.translate("MainWindow", u"Send the approvals of agents started in a terminal here", None))
#endif // QT_CONFIG(tooltip)
        self.settingsAction.setText(QCoreApplication.translate("MainWindow", u"&Settings\u2026", None))
#if QT_CONFIG(shortcut)
        self.settingsAction.setShortcut(QCoreApplication.translate("MainWindow", u"Ctrl+,", None))
#endif // QT_CONFIG(shortcut)
        self.quitAction.setText(QCoreApplication.translate("MainWindow", u"&Quit", None))
#if QT_CONFIG(shortcut)
        self.quitAction.setShortcut(QCoreApplication.translate("MainWindow", u"Ctrl+Q", None))
#endif // QT_CONFIG(shortcut)
        self.promptAction.setText(QCoreApplication.translate("MainWindow", u"Follow-up &prompt", None))
#if QT_CONFIG(tooltip)
        self.promptAction.setToolTip(QCoreApplication.translate("MainWindow", u"Write a follow-up prompt for the selected session (Ctrl+L)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(shortcut)
        self.promptAction.setShortcut(QCoreApplication.translate("MainWindow", u"Ctrl+L", None))
#endif // QT_CONFIG(shortcut)
        self.interruptAction.setText(QCoreApplication.translate("MainWindow", u"&Interrupt", None))
#if QT_CONFIG(tooltip)
        self.interruptAction.setToolTip(QCoreApplication.translate("MainWindow", u"Interrupt the selected session's current turn (Ctrl+.)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(shortcut)
        self.interruptAction.setShortcut(QCoreApplication.translate("MainWindow", u"Ctrl+.", None))
#endif // QT_CONFIG(shortcut)
        self.stopAction.setText(QCoreApplication.translate("MainWindow", u"S&top", None))
#if QT_CONFIG(tooltip)
        self.stopAction.setToolTip(QCoreApplication.translate("MainWindow", u"Stop the selected session (Ctrl+Shift+W)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(shortcut)
        self.stopAction.setShortcut(QCoreApplication.translate("MainWindow", u"Ctrl+Shift+W", None))
#endif // QT_CONFIG(shortcut)
        self.openNextAction.setText(QCoreApplication.translate("MainWindow", u"&Open oldest request", None))
#if QT_CONFIG(tooltip)
        self.openNextAction.setToolTip(QCoreApplication.translate("MainWindow", u"Open the oldest request that waits for you (Ctrl+O)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(shortcut)
        self.openNextAction.setShortcut(QCoreApplication.translate("MainWindow", u"Ctrl+O", None))
#endif // QT_CONFIG(shortcut)
        self.shortcutsAction.setText(QCoreApplication.translate("MainWindow", u"&Keyboard shortcuts", None))
#if QT_CONFIG(tooltip)
        self.shortcutsAction.setToolTip(QCoreApplication.translate("MainWindow", u"Every keyboard shortcut of the window and the dialogs (F1)", None))
#endif // QT_CONFIG(tooltip)
#if QT_CONFIG(shortcut)
        self.shortcutsAction.setShortcut(QCoreApplication.translate("MainWindow", u"F1", None))
#endif // QT_CONFIG(shortcut)
        self.aboutAction.setText(QCoreApplication.translate("MainWindow", u"&About Qoder Desktop", None))
#if QT_CONFIG(tooltip)
        self.aboutAction.setToolTip(QCoreApplication.translate("MainWindow", u"Version, SDK and CLI versions, data folders and the log", None))
#endif // QT_CONFIG(tooltip)
        self.sessionsHeader.setText(QCoreApplication.translate("MainWindow", u"Sessions", None))
        self.queueHeader.setText(QCoreApplication.translate("MainWindow", u"Waiting for you", None))
        self.sessionTitle.setText(QCoreApplication.translate("MainWindow", u"No session selected", None))
        self.sessionDetails.setText(QCoreApplication.translate("MainWindow", u"Start a session with File \u203a New session (Ctrl+N).", None))
        self.promptEdit.setPlaceholderText(QCoreApplication.translate("MainWindow", u"Send a follow-up prompt to this session (Ctrl+Return)", None))
        self.sendButton.setText(QCoreApplication.translate("MainWindow", u"Send", None))
#if QT_CONFIG(tooltip)
        self.sendButton.setToolTip(QCoreApplication.translate("MainWindow", u"Send the prompt (Ctrl+Return)", None))
#endif // QT_CONFIG(tooltip)
        self.rulesHeader.setText(QCoreApplication.translate("MainWindow", u"Session rules", None))
        self.fileMenu.setTitle(QCoreApplication.translate("MainWindow", u"&File", None))
        self.sessionMenu.setTitle(QCoreApplication.translate("MainWindow", u"&Session", None))
        self.viewMenu.setTitle(QCoreApplication.translate("MainWindow", u"&View", None))
        self.helpMenu.setTitle(QCoreApplication.translate("MainWindow", u"&Help", None))
        self.mainToolBar.setWindowTitle(QCoreApplication.translate("MainWindow", u"Main toolbar", None))
    # retranslateUi

