// SPDX-License-Identifier: MIT
// What stays and what goes between files and across restarts, as the user sees it: a second file
// opens with nothing of the first (rewrite status, history, table scroll) and says why its preset
// proposes nothing; patterns added in the Pattern Editor keep the history and come back after a
// restart (settings) and a recovery (autosave). Settings and autosaves live in a temporary folder.
#include "MainWindow.h"
#include "SlowWait.h"
#include "TestServices.h"

#include "GraphDocument.h"
#include "PatternEditor.h"
#include "RewriteDebugger.h"
#include "ir/Graph.h"

#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QListView>
#include <QMessageBox>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using fxlens::views::MainWindow;

namespace {

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }

/// Shows the window at screenshot size with an example open and one panel in front.
bool showWith(MainWindow &w, const char *file, const char *dock)
{
    w.resize(1500, 950);
    w.show();
    if (!w.openFile(example(file)))
        return false;
    auto *d = w.findChild<QDockWidget *>(QLatin1String(dock));
    if (d)
        d->raise();
    return d != nullptr;
}

/// A shipped pattern under a name of the user's, with the `user` label: what a user adds.
QString userPattern()
{
    QFile f(QStringLiteral(FXLENS_PATTERN_SOURCE_DIR "/unbind_cat_full.fxpat"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QString text = QString::fromUtf8(f.readAll());
    text.replace(QStringLiteral("name = \"unbind_cat_full\""), QStringLiteral("name = \"my_unbind_cat_full\""));
    text.replace(QStringLiteral("labels = [\"catalog\"]\n"), QString());
    return text;
}

bool listsPattern(fxlens::views::RewriteDebugger *d, const QString &pattern)
{
    for (int i = 0; i < d->candidateList()->model()->rowCount(); ++i)
        if (d->candidateList()->model()->index(i, 0).data().toString().startsWith(pattern + QStringLiteral(" @ ")))
            return true;
    return false;
}

void screenshot(MainWindow &w, const QString &name)
{
    QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
    QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/") + name));
}

} // namespace

class TestFileState : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_FileState"));
        QStandardPaths::setTestModeEnabled(true);
        // Never the user's settings or autosaves: both in this run's temporary folder.
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.filePath(QStringLiteral("settings")));
        qputenv("FXLENS_AUTOSAVE_DIR", m_dir.filePath(QStringLiteral("autosave")).toLocal8Bit());
        QSettings().clear();
    }

    void init() { QSettings().clear(); }

    /// Issue #31, point 4: steps, a preset and a scrolled table on one file; the next file opens with
    /// an empty rewrite status line, version 0 of 0, the table at its top, and a preset without
    /// candidates there says why.
    void secondFileStartsClean()
    {
        MainWindow w(testServices());
        w.setUnsavedPrompt([](const QString &) { return int(QMessageBox::Discard); });
        QVERIFY(showWith(w, "tangle50_torch.json", "rewriteDock"));
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        QVERIFY(table);
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTRY_VERIFY_WITH_TIMEOUT(table->verticalScrollBar()->maximum() > 0, kSlowWait);
        table->verticalScrollBar()->setValue(table->verticalScrollBar()->maximum() / 2);
        QVERIFY(table->verticalScrollBar()->value() > 0);

        w.patternEditor()->setSource(userPattern(), QStringLiteral("my_unbind_cat_full.fxpat"));
        QVERIFY2(w.patternEditor()->addToEngine(), qPrintable(w.patternEditor()->status()));
        auto *d = w.debugger();
        d->setPreset(QStringLiteral("user"));
        QVERIFY(d->candidateCount() > 1);
        QVERIFY(d->applySelected());
        QVERIFY(d->applySelected());
        QVERIFY(d->undo());
        QCOMPARE(d->status(), QStringLiteral("At version 1 of 2"));

        QVERIFY(w.openFileAsked(example("tangle50_aten.json")));
        QCoreApplication::processEvents();
        QCOMPARE(d->version(), 0);
        QCOMPARE(d->historySize(), 0);
        QCOMPARE(d->historyList()->model()->rowCount(), 1); // "0 original"
        QCOMPARE(table->verticalScrollBar()->value(), 0);
        auto *status = d->findChild<QLabel *>(QStringLiteral("debuggerStatus"));
        QVERIFY(status);
        QVERIFY2(status->text().isEmpty(), qPrintable(status->text()));
        QVERIFY2(d->status().isEmpty(), qPrintable(d->status()));

        // The preset stays (it is the user's choice), and it has nothing here: the panel says why.
        QCOMPARE(d->preset(), QStringLiteral("user"));
        QCOMPARE(d->candidateCount(), 0);
        auto *why = d->findChild<QLabel *>(QStringLiteral("noCandidates"));
        QVERIFY2(why, "no line says why the candidate list is empty");
        QVERIFY(why->isVisible());
        QVERIFY2(why->text().startsWith(QStringLiteral("Preset 'user': no candidates in this graph")), qPrintable(why->text()));
        QVERIFY2(why->text().contains(QStringLiteral("Not for aten IR: my_unbind_cat_full")), qPrintable(why->text()));
        screenshot(w, QStringLiteral("file_state_second_file.png"));

        // A preset with candidates hides the line.
        d->setPreset(QStringLiteral("all"));
        QVERIFY(d->candidateCount() > 0);
        QVERIFY(!why->isVisible());
    }

    /// At the fixpoint the line says why nothing is left, naming the anchors this graph has and
    /// how many nodes each covers ("torch.cat ×4"), not anchors of the preset that no node here
    /// has (tangle50 is torch IR: no aten.* target may be named).
    void noCandidatesNamesWhatIsHere()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, "tangle50_torch.json", "rewriteDock"));
        auto *d = w.debugger();
        d->setPreset(QStringLiteral("all"));
        QCOMPARE(d->run(), QStringLiteral("fixpoint"));
        QCoreApplication::processEvents();
        auto *why = d->findChild<QLabel *>(QStringLiteral("noCandidates"));
        QVERIFY(why && why->isVisible());
        const QRegularExpression list(QStringLiteral("anchors of its patterns \\((.*)\\), but none matches"));
        const auto m = list.match(why->text());
        QVERIFY2(m.hasMatch(), qPrintable(why->text()));
        int named = 0;
        for (const QString &entry : m.captured(1).split(QStringLiteral(", "))) {
            if (entry.endsWith(QStringLiteral(" more")))
                continue;
            const qsizetype times = entry.lastIndexOf(QStringLiteral(" ×"));
            QVERIFY2(times > 0, qPrintable(entry));
            const QString anchor = entry.left(times);
            const int claimed = entry.mid(times + 2).toInt();
            int count = 0;
            for (const fxlens::ir::Node *n = w.graph()->first(); n; n = n->next())
                count += anchor.startsWith(QStringLiteral("any "))
                    ? QString::fromStdString(std::string(fxlens::ir::opKindName(n->op()))) == anchor.mid(4)
                    : QString::fromStdString(n->target()) == anchor;
            QVERIFY2(count > 0 && count == claimed, qPrintable(QStringLiteral("%1: %2 nodes here").arg(entry).arg(count)));
            ++named;
        }
        QVERIFY(named > 0);
    }

    /// After steps the node table shows its current row (its node still there) or starts at its
    /// top: never a row in the middle with nothing selected (BERT: the table follows the first
    /// candidate, deep in the table; a run to the fixpoint removes it).
    void nodeTableAfterStepsShowsItsCurrentRow()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, "bert_base_dynamo.json.gz", "rewriteDock"));
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        QVERIFY(table);
        QTRY_VERIFY_WITH_TIMEOUT(table->verticalScrollBar()->value() > 0, kSlowWait); // at the first candidate's row
        QVERIFY(table->currentIndex().isValid());
        w.debugger()->setPreset(QStringLiteral("all"));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        QCoreApplication::processEvents();
        const QModelIndex current = table->currentIndex();
        if (current.isValid())
            QVERIFY(table->viewport()->rect().intersects(table->visualRect(current)));
        else
            QCOMPARE(table->verticalScrollBar()->value(), 0);
    }

    /// Issue #31, point 5: Add to engine keeps the history (its length, the version shown, the
    /// branches) and plans the candidates again, the new pattern's included.
    void addToEngineKeepsHistory()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, "tangle50_torch.json", "patternEditorDock"));
        auto *d = w.debugger();
        QVERIFY(d->applySelected());
        QVERIFY(d->applySelected());
        QVERIFY(d->applySelected());
        QVERIFY(d->undo());
        QVERIFY(d->skipSelected());
        QVERIFY(d->applySelected()); // after going back: the step it replaces is kept as a branch
        QCOMPARE(d->branchCount(), 1);
        const int steps = d->historySize(), version = d->version(), rows = d->historyList()->model()->rowCount();
        const int skipped = d->skippedCount();
        QCOMPARE(steps, 3);

        w.patternEditor()->setSource(userPattern(), QStringLiteral("my_unbind_cat_full.fxpat"));
        QVERIFY2(w.patternEditor()->addToEngine(), qPrintable(w.patternEditor()->status()));
        QCOMPARE(d->historySize(), steps);
        QCOMPARE(d->version(), version);
        QCOMPARE(d->branchCount(), 1);
        QCOMPARE(d->historyList()->model()->rowCount(), rows);
        QCOMPARE(d->skippedCount(), skipped);
        QVERIFY(d->undo()); // undo still goes back through the steps made before
        QCOMPARE(d->version(), version - 1);
        QVERIFY(d->redo());
        QVERIFY(listsPattern(d, QStringLiteral("my_unbind_cat_full")));
        // Its preset keeps the history too.
        d->setPreset(QStringLiteral("user"));
        QCOMPARE(d->historySize(), steps);
        QCOMPARE(d->branchCount(), 1);
        QVERIFY(listsPattern(d, QStringLiteral("my_unbind_cat_full")));
        QVERIFY(d->applySelected());
        QCOMPARE(d->historySize(), steps + 1);
        w.findChild<QDockWidget *>(QStringLiteral("rewriteDock"))->raise();
        screenshot(w, QStringLiteral("file_state_add_to_engine.png"));
    }

    /// Issue #31, point 5: the pattern comes back after a restart (the settings) and with a
    /// recovered autosave; a saved pattern that no longer compiles is said, its text kept.
    void userPatternsPersist()
    {
        const QString file = example("tangle50_torch.json");
        {
            MainWindow w(testServices());
            QVERIFY(showWith(w, "tangle50_torch.json", "patternEditorDock"));
            w.patternEditor()->setSource(userPattern(), QStringLiteral("my_unbind_cat_full.fxpat"));
            QVERIFY2(w.patternEditor()->addToEngine(), qPrintable(w.patternEditor()->status()));
            w.debugger()->setPreset(QStringLiteral("user"));
            QVERIFY(w.debugger()->applySelected());
            QVERIFY(w.debugger()->applySelected());
            w.autosaveNow();

            // A restart: a new window on the same settings has the pattern registered.
            MainWindow restarted(testServices());
            QVERIFY(restarted.document()->registry().find("my_unbind_cat_full"));

            // A recovery without the settings' copy: the autosave brings the pattern, preset and steps.
            QSettings().remove(QStringLiteral("patterns/user"));
            MainWindow recovered(testServices());
            QVERIFY(!recovered.document()->registry().find("my_unbind_cat_full"));
            bool offered = false;
            recovered.setRecoveryPrompt([&](const auto &) { return offered = true; });
            QVERIFY(recovered.openFile(file));
            QVERIFY(offered);
            QVERIFY(recovered.document()->registry().find("my_unbind_cat_full"));
            QCOMPARE(recovered.debugger()->preset(), QStringLiteral("user"));
            QCOMPARE(recovered.debugger()->historySize(), 2);
        }

        // A saved pattern that no longer compiles: said in the status bar, its text in the editor.
        const QString broken = QStringLiteral("name = \"my_broken\"\n\ndef pattern(x: Tensor):\n    y = torch.tanh(x\n    return y\n");
        {
            QSettings s;
            s.beginWriteArray(QStringLiteral("patterns/user"));
            s.setArrayIndex(0);
            s.setValue(QStringLiteral("name"), QStringLiteral("my_broken"));
            s.setValue(QStringLiteral("source"), broken);
            s.setValue(QStringLiteral("file"), QStringLiteral("my_broken.fxpat"));
            s.endArray();
        }
        MainWindow w(testServices());
        w.resize(1500, 950);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QString message = w.statusBar()->currentMessage();
        QVERIFY2(message.contains(QStringLiteral("The saved pattern 'my_broken' was not loaded: does not compile: my_broken.fxpat:")),
                 qPrintable(message));
        QCOMPARE(w.patternEditor()->source(), broken);
        w.findChild<QDockWidget *>(QStringLiteral("patternEditorDock"))->raise();
        screenshot(w, QStringLiteral("file_state_broken_pattern.png"));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestFileState)
#include "tst_FileState.moc"
