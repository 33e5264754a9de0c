// SPDX-License-Identifier: MIT
// Drives the main window offscreen: open, search, select, inspect, bad input; saves screenshots.
#include "MainWindow.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QtTest>

#include "NodeTableModel.h"

using fxlens::views::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_MainWindow"));
        QStandardPaths::setTestModeEnabled(true);
    }

    void modelPassesTester()
    {
        MainWindow w;
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        auto *model = w.findChild<fxlens::views::NodeTableModel *>();
        QVERIFY(model);
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), 108);
        QCOMPARE(model->index(0, 0).data().toString(), QStringLiteral("x"));
    }

    void openSearchSelect()
    {
        MainWindow w;
        QSignalSpy loaded(&w, &MainWindow::graphLoaded);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(w.visibleNodeCount(), 32);
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("transformer_fx.json")));
        auto *stats = w.statusBar()->findChild<QLabel *>();
        QVERIFY(stats && stats->text().startsWith(QStringLiteral("32 nodes")));
        // The text form is printed when its tab is shown.
        auto *tabs = w.findChild<QTabWidget *>();
        QVERIFY(tabs);
        tabs->setCurrentIndex(1);
        auto *text = w.findChild<QPlainTextEdit *>();
        QVERIFY(text->toPlainText().contains(QStringLiteral("%softmax")));

        // Search by target substring, by module path, by regex; typing goes through the line edit.
        w.setSearch(QStringLiteral("layer_norm"));
        QCOMPARE(w.visibleNodeCount(), 0); // symbolic_trace keeps LayerNorm as call_module
        w.setSearch(QStringLiteral("norm"));
        QCOMPARE(w.visibleNodeCount(), 2);
        w.setSearch(QStringLiteral("/^ff[12]$/"));
        QCOMPARE(w.visibleNodeCount(), 2);
        auto *search = w.findChild<QLineEdit *>();
        search->clear();
        QTest::keyClicks(search, QStringLiteral("transpose"));
        QCOMPARE(w.visibleNodeCount(), 5);

        // Selecting a filtered-out node clears the filter and shows it in the inspector.
        QVERIFY(w.selectNode(QStringLiteral("softmax")));
        QCOMPARE(w.visibleNodeCount(), 32);
        QString info = w.inspectorText();
        QVERIFY2(info.contains(QStringLiteral("torch.softmax")), qPrintable(info));
        QVERIFY(info.contains(QStringLiteral("f32[2, 4, 16, 16]")));
        QVERIFY(info.contains(QStringLiteral("dim = -1")));
        QVERIFY(!w.selectNode(QStringLiteral("no_such_node")));

        // Clicking a row in the table shows that node.
        auto *table = w.findChild<QTableView *>();
        int row = 0;
        for (; row < table->model()->rowCount(); ++row)
            if (table->model()->index(row, 0).data().toString() == QLatin1String("qkv"))
                break;
        QRect rect = table->visualRect(table->model()->index(row, 0));
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, rect.center());
        QVERIFY(w.inspectorText().contains(QStringLiteral("call_module")));

        QDir().mkpath(QStringLiteral("screenshots"));
        QVERIFY(w.grab().save(QStringLiteral("screenshots/mainwindow_transformer.png")));
        QVERIFY(w.recentFiles().first().endsWith(QStringLiteral("transformer_fx.json")));
    }

    void badFileKeepsCurrentGraph()
    {
        MainWindow w;
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        QVERIFY(!w.openFile(QStringLiteral(FXLENS_TEST_DATA "/malformed/cycle.json")));
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.first().first().toString().contains(QStringLiteral("node 'a': is part of a cycle")));
        QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("cycle.json")));
        // The graph that was open is still there, untouched.
        QCOMPARE(w.visibleNodeCount(), 108);
        QVERIFY(w.currentFile().endsWith(QStringLiteral("tangle4_fx.json")));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_MainWindow.moc"
