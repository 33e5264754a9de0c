// SPDX-License-Identifier: MIT
// Drives the main window offscreen: open, search, select, inspect, bad input; saves screenshots.
#include "MainWindow.h"
#include "SlowWait.h"
#include "TestServices.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include "Autosave.h"
#include "BuiltinPatterns.h"
#include "GraphCanvas.h"
#include "NodeTableModel.h"
#include "PatternEditor.h"
#include "ProfilePanel.h"
#include "ProfileTableModel.h"
#include "RewriteDebugger.h"
#include "Selection.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"
#include "layout/Layered.h"
#include "profile/Profile.h"
#include "rewrite/Session.h"

#include <QDockWidget>
#include <QHeaderView>
#include <QMessageBox>
#include <QProcess>
#include <QTemporaryDir>
#include <QTextBrowser>

#include <QListWidget>
#include <QMenuBar>
#include <QTimer>
#include <csignal>
#include <optional>

using fxlens::views::MainWindow;

/// Shows the window at screenshot size with an example open and one panel in front.
static bool showWith(MainWindow &w, const char *example, const char *dock)
{
    w.resize(1500, 950);
    w.show();
    if (!w.openFile(QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(example)))
        return false;
    auto *d = w.findChild<QDockWidget *>(QLatin1String(dock));
    if (d)
        d->raise();
    return d != nullptr;
}

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_MainWindow"));
        QStandardPaths::setTestModeEnabled(true);
        // Autosaves of this run go to a directory of its own.
        qputenv("FXLENS_AUTOSAVE_DIR",
                (QDir::tempPath() + QStringLiteral("/fxlens-test-autosave-") + QString::number(QCoreApplication::applicationPid()))
                    .toLocal8Bit());
    }

    void cleanupTestCase() { QDir(QString::fromLocal8Bit(qgetenv("FXLENS_AUTOSAVE_DIR"))).removeRecursively(); }

    void modelPassesTester()
    {
        MainWindow w(testServices());
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        auto *model = w.findChild<fxlens::views::NodeTableModel *>();
        QVERIFY(model);
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), 108);
        QCOMPARE(model->index(0, 0).data().toString(), QStringLiteral("x"));
    }

    void openSearchSelect()
    {
        MainWindow w(testServices());
        QSignalSpy loaded(&w, &MainWindow::graphLoaded);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(w.visibleNodeCount(), 32);
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("transformer_fx.json")));
        auto *stats = w.statusBar()->findChild<QLabel *>();
        QVERIFY(stats && stats->text().startsWith(QStringLiteral("32 nodes")));
        // The text form is printed when its tab is shown.
        auto *tabs = w.findChild<QTabWidget *>(QStringLiteral("graphViews"));
        QVERIFY(tabs);
        tabs->setCurrentIndex(1);
        auto *text = w.findChild<QPlainTextEdit *>(QStringLiteral("graphText"));
        QVERIFY(text->toPlainText().contains(QStringLiteral("%softmax")));

        // Search by target substring, by module path, by regex; typing goes through the line edit.
        w.setSearch(QStringLiteral("layer_norm"));
        QCOMPARE(w.visibleNodeCount(), 0); // symbolic_trace keeps LayerNorm as call_module
        w.setSearch(QStringLiteral("norm"));
        QCOMPARE(w.visibleNodeCount(), 2);
        w.setSearch(QStringLiteral("/^ff[12]$/"));
        QCOMPARE(w.visibleNodeCount(), 2);
        auto *search = w.findChild<QLineEdit *>(QStringLiteral("search"));
        search->clear();
        QTest::keyClicks(search, QStringLiteral("transpose"));
        QCOMPARE(w.visibleNodeCount(), 5);
        QCOMPARE(w.statusBar()->currentMessage(), QStringLiteral("5 matches"));
        // Enter jumps to the first match.
        QTest::keyClick(search, Qt::Key_Return);
        QVERIFY2(w.inspectorText().contains(QStringLiteral("transpose")), qPrintable(w.inspectorText()));

        // Selecting a filtered-out node clears the filter and shows it in the inspector.
        QVERIFY(w.selectNode(QStringLiteral("softmax")));
        QCOMPARE(w.visibleNodeCount(), 32);
        QString info = w.inspectorText();
        QVERIFY2(info.contains(QStringLiteral("torch.softmax")), qPrintable(info));
        QVERIFY(info.contains(QStringLiteral("f32[2, 4, 16, 16]")));
        QVERIFY(info.contains(QStringLiteral("dim = -1")));
        QVERIFY(!w.selectNode(QStringLiteral("no_such_node")));

        // Clicking a row in the table shows that node.
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
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

    /// The rewrite debugger steps the engine on the window's graph: apply, undo/redo, a pattern
    /// breakpoint, run to the fixpoint, back to version 0, per-step diffs, verification badges, save.
    void rewriteDebugger()
    {
        using fxlens::views::RewriteDebugger;
        MainWindow w(testServices());
        QVERIFY(showWith(w, "tangle4_fx.json", "rewriteDock"));
        RewriteDebugger *d = w.debugger();
        QVERIFY(d);
        d->setPreset(QStringLiteral("vertical"));
        const std::string original = fxlens::ir::printGraph(*w.graph());
        const size_t originalSize = w.graph()->size();
        QCOMPARE(d->version(), 0);
        QVERIFY(d->candidateCount() > 0);
        const QString first = d->candidateList()->model()->index(0, 0).data().toString();
        const QString firstPattern = first.section(QStringLiteral(" @ "), 0, 0);

        // A breakpoint on the first candidate's pattern: run stops before applying anything.
        QVERIFY(!d->addBreakpoint(QStringLiteral("pattern"), QStringLiteral("no_such_pattern")));
        QVERIFY(d->status().contains(QStringLiteral("No pattern named 'no_such_pattern'")));
        QVERIFY(d->addBreakpoint(QStringLiteral("pattern"), firstPattern));
        QCOMPARE(d->run(), QStringLiteral("breakpoint"));
        QCOMPARE(d->version(), 0);
        QVERIFY2(d->status().contains(QStringLiteral("breakpoint before '") + firstPattern), qPrintable(d->status()));
        d->clearBreakpoints();

        // Keys: Ctrl+Return applies, Ctrl+Z undoes, Ctrl+Shift+Z redoes (wherever the focus is).
        w.show();
        QApplication::setActiveWindow(&w);
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QTest::keySequence(&w, QKeySequence(Qt::CTRL | Qt::Key_Return));
        QCOMPARE(d->version(), 1);
        QTest::keySequence(&w, QKeySequence::Undo);
        QCOMPARE(d->version(), 0);
        QTest::keySequence(&w, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
        QCOMPARE(d->version(), 1);
        QTest::keySequence(&w, QKeySequence::Undo);
        QCOMPARE(d->version(), 0);
        QVERIFY(w.shortcutsText().contains(QStringLiteral("Undo Step")));

        // Apply the first candidate: graph, table, title and history follow.
        QVERIFY(d->applySelected());
        QCOMPARE(d->version(), 1);
        QCOMPARE(d->historySize(), 1);
        QVERIFY(d->historyList()->model()->index(1, 0).data().toString().contains(first.section(QStringLiteral(" — "), 0, 0)));
        QVERIFY(w.isModified());
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("tangle4_fx.json *")));
        // What the step made is outlined on the canvas and selected there (the view moves to it).
        {
            const QString made = w.selection()->currentNode();
            QVERIFY2(d->diffText(1).contains(QStringLiteral("%") + made + QStringLiteral(" :")), qPrintable(made));
            QVERIFY2(w.inspectorText().contains(made), qPrintable(made + " / " + w.inspectorText().left(200)));
            int anchors = 0;
            for (size_t i = 0; i < w.canvas()->view().items.size(); ++i)
                anchors += w.canvas()->highlightOf(int(i)) == 2;
            QCOMPARE(anchors, 1);
        }
        auto *model = w.findChild<fxlens::views::NodeTableModel *>();
        QCOMPARE(model->rowCount(), int(w.graph()->size()));
        const QString diff = d->diffText(1);
        QVERIFY2(diff.contains(QStringLiteral("\n+ ")) || diff.startsWith(QStringLiteral("+ ")), qPrintable(diff));
        QVERIFY2(diff.contains(QStringLiteral("- ")) || diff.contains(QStringLiteral("~ ")), qPrintable(diff));
        const std::string afterOne = fxlens::ir::printGraph(*w.graph());
        QVERIFY(afterOne != original);
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/window_debugger_step1.png")));

        // Undo gives back the original text exactly; redo the step.
        QVERIFY(d->undo());
        QCOMPARE(fxlens::ir::printGraph(*w.graph()), original);
        QCOMPARE(model->rowCount(), int(originalSize));
        QVERIFY(d->redo());
        QCOMPARE(fxlens::ir::printGraph(*w.graph()), afterOne);

        // Checked numerically from here on (builds with the executor): every step gets its badge.
        if (d->verifyAvailable()) {
            QVERIFY(d->setVerify(true));
            QVERIFY(d->applySelected());
            QVERIFY2(d->historyList()->model()->index(2, 0).data().toString().endsWith(QStringLiteral("✓ verified")),
                     qPrintable(d->historyList()->model()->index(2, 0).data().toString()));
        }

        // To the fixpoint: no candidates left, the graph is smaller, every step has its diff.
        QCOMPARE(d->run(), QStringLiteral("fixpoint"));
        QCOMPARE(d->candidateCount(), 0);
        QVERIFY(d->historySize() > 3);
        QVERIFY(w.graph()->size() < originalSize);
        for (int k = 1; k <= d->historySize(); ++k)
            QVERIFY2(!d->diffText(k).isEmpty(), qPrintable(QString::number(k)));
        if (d->verifyAvailable())
            QVERIFY(d->historyList()->model()->index(d->historySize(), 0).data().toString().endsWith(QStringLiteral("✓ verified")));
        d->historyList()->setCurrentIndex(d->historyList()->model()->index(2, 0));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/window_debugger_tangle4.png")));

        // Save the straightened graph: it reads back with the same text.
        const std::string straight = fxlens::ir::printGraph(*w.graph());
        const QString out = QDir::temp().filePath(QStringLiteral("fxlens_debugger_%1.json").arg(QCoreApplication::applicationPid()));
        QVERIFY(w.saveFile(out));
        QVERIFY(!w.isModified());
        auto back = fxlens::io::readGraphFile(out.toStdString());
        QVERIFY(back.ok());
        QCOMPARE(fxlens::ir::printGraph(*back.value()), straight);
        QFile::remove(out);
        // And as Python: one statement per node of this version.
        const QString py = QDir::temp().filePath(QStringLiteral("fxlens_debugger_%1.py").arg(QCoreApplication::applicationPid()));
        QVERIFY(w.exportPython(py));
        QFile pf(py);
        QVERIFY(pf.open(QIODevice::ReadOnly));
        const QString code = QString::fromUtf8(pf.readAll());
        QVERIFY(code.contains(QStringLiteral("class Model(torch.nn.Module):")));
        for (auto *n = w.graph()->first(); n; n = n->next())
            if (n->op() == fxlens::ir::OpKind::CallFunction)
                QVERIFY2(code.contains(QStringLiteral("        %1 = ").arg(QString::fromStdString(n->name()))), n->name().c_str());
        QFile::remove(py);

        // Back to version 0 (a click on the first history row does the same).
        QVERIFY(d->checkout(0));
        QCOMPARE(fxlens::ir::printGraph(*w.graph()), original);
        QCOMPARE(d->version(), 0);
        QVERIFY(d->candidateCount() > 0);
    }

    /// The pattern editor: diagnostics with a caret and a marked line, live matches equal to the
    /// engine's candidates, "why not here", adding the pattern to the engine for the debugger.
    void patternEditor()
    {
        using fxlens::views::PatternEditor;
        MainWindow w(testServices());
        QVERIFY(showWith(w, "tangle50_torch.json", "patternEditorDock"));
        PatternEditor *e = w.patternEditor();
        QVERIFY(e);
        QVERIFY(e->compiled());       // the starting template
        QCOMPARE(e->matchCount(), 0); // tangle has no single-input cat

        // A syntax error: file:line:col, a caret, the line marked, no matches.
        e->setSource(QStringLiteral("name = \"broken\"\n\ndef pattern(x: Tensor):\n    y = torch.tanh(x\n    return y\n\n"
                                    "def replacement(x):\n    return x\n"),
                     QStringLiteral("broken.fxpat"));
        QVERIFY(!e->compiled());
        QVERIFY2(e->diagnostics().startsWith(QStringLiteral("broken.fxpat:5:")), qPrintable(e->diagnostics()));
        QVERIFY(e->diagnostics().contains(QLatin1Char('^')));
        QCOMPARE(e->markedLines(), std::vector<int>{5});
        QCOMPARE(e->matchCount(), 0);
        // Typing compiles after a pause, not on every key.
        e->editor()->moveCursor(QTextCursor::End);
        QTest::keyClicks(e->editor(), QStringLiteral("# more"));
        QVERIFY(!e->compiled());
        QTRY_VERIFY_WITH_TIMEOUT(e->status().startsWith(QStringLiteral("Does not compile")), kSlowWait);

        // A shipped pattern under another name: its matches are the engine's candidates for it.
        QFile f(QStringLiteral(FXLENS_SOURCE_DIR "/patterns/unbind_cat_full.fxpat"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(f.readAll());
        text.replace(QStringLiteral("name = \"unbind_cat_full\""), QStringLiteral("name = \"my_unbind_cat_full\""));
        text.replace(QStringLiteral("labels = [\"catalog\"]\n"), QString());
        e->setSource(text, QStringLiteral("my_unbind_cat_full.fxpat"));
        QVERIFY2(e->compiled(), qPrintable(e->diagnostics()));
        fxlens::rewrite::PatternRegistry reg;
        QVERIFY(fxlens::patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR).empty());
        auto copy = w.graph()->clone();
        fxlens::rewrite::Session s(*copy, {reg.find("unbind_cat_full")});
        const int expected = int(s.candidates().size());
        QVERIFY(expected > 0);
        QCOMPARE(e->matchCount(), expected);
        e->matchList()->setCurrentRow(0);
        const QString anchor = e->matchList()->item(0)->text().section(QLatin1Char(':'), 0, 0);
        QVERIFY2(w.inspectorText().startsWith(anchor), qPrintable(w.inspectorText()));

        // Why (not) here: the match, a cat that is not one, a node that is no anchor.
        QVERIFY(e->explainAt(anchor).contains(QStringLiteral(": match: ")));
        QString failing;
        for (auto *n = w.graph()->first(); n; n = n->next())
            if (n->target() == "torch.cat" && !e->explainAt(QString::fromStdString(n->name())).contains(QStringLiteral(": match: ")))
                failing = QString::fromStdString(n->name());
        QVERIFY(!failing.isEmpty());
        const QString why = e->explainAt(failing);
        QVERIFY2(why.contains(QStringLiteral("no match: ")) && why.contains(QStringLiteral("expected: ")) &&
                     why.contains(QStringLiteral("found: ")),
                 qPrintable(why));
        QVERIFY(e->explainAt(QStringLiteral("l_x_")).contains(QStringLiteral("is not an anchor of my_unbind_cat_full")));
        // The explanation follows the text: after an edit that breaks the pattern it says so.
        e->explainAt(anchor);
        auto *whyPanel = e->findChild<QTextBrowser *>();
        const QString good = e->source();
        e->setSource(good + QStringLiteral("\ndef broken(:\n"));
        QVERIFY(e->compileNow() == false);
        QVERIFY2(whyPanel && whyPanel->toPlainText().contains(QStringLiteral("does not compile")),
                 qPrintable(whyPanel ? whyPanel->toPlainText() : QString()));
        e->setSource(good);
        QVERIFY(e->compileNow());
        QVERIFY2(whyPanel->toPlainText().contains(QStringLiteral(": match: ")), qPrintable(whyPanel->toPlainText()));

        // Into the engine: the debugger gets a `user` preset whose candidates include it.
        QVERIFY2(e->addToEngine(), qPrintable(e->status()));
        auto *d = w.debugger();
        d->setPreset(QStringLiteral("user"));
        QCOMPARE(d->preset(), QStringLiteral("user"));
        bool listed = false;
        for (int i = 0; i < d->candidateList()->model()->rowCount(); ++i)
            listed =
                listed || d->candidateList()->model()->index(i, 0).data().toString().startsWith(QStringLiteral("my_unbind_cat_full @ "));
        QVERIFY(listed);
        QVERIFY(e->addToEngine()); // again: replaces its own
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/window_pattern_editor.png")));
        // A built-in name is refused.
        text.replace(QStringLiteral("name = \"my_unbind_cat_full\""), QStringLiteral("name = \"split_cat\""));
        e->setSource(text);
        QVERIFY(e->compiled());
        QVERIFY(!e->addToEngine());
        QVERIFY(e->status().contains(QStringLiteral("built-in pattern is named 'split_cat'")));
    }

    /// A saved profile over its graph: summary, node table by device time, canvas tint, inspector
    /// row, row click selects; a malformed profile is refused and the current one stays.
    void profilePanel()
    {
        auto raw = fxlens::prof::readRawEvents(FXLENS_SOURCE_DIR "/tests/data/profile/raw_tangle4_cuda.json");
        QVERIFY(raw.ok());
        const auto profile = fxlens::prof::buildProfile(raw.value().first, raw.value().second, "cuda");
        const QString path = QDir::temp().filePath(QStringLiteral("fxlens_profile_%1.json").arg(QCoreApplication::applicationPid()));
        QVERIFY(fxlens::prof::writeProfile(profile, path.toStdString()).ok());
        // The costliest node by device time, computed here from the profile itself.
        size_t top = 0;
        for (size_t i = 0; i < profile.nodeStats.size(); ++i)
            if (profile.nodeStats[i].gpuUs > profile.nodeStats[top].gpuUs)
                top = i;
        const QString topName = QString::fromStdString(profile.nodes[top].name);

        MainWindow w(testServices());
        w.resize(1500, 950);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QVERIFY2(w.openProfile(path), qPrintable(w.profilePanel()->status()));
        auto *panel = w.profilePanel();
        // The node table as shown (sorted): its text and the numbers it sorts by.
        auto cell = [&](int r, int c, int role = Qt::DisplayRole) { return panel->table()->model()->index(r, c).data(role); };
        auto rows = [&] { return panel->table()->model()->rowCount(); };
        QVERIFY(panel->summary().contains(QStringLiteral("kernels/iter")));
        // Units, labels and shares: times carry their unit, the % column sums to at most the busy
        // iteration (node figures and totals are both medians), and the tint has a scale.
        auto header = [&](int c) { return panel->table()->model()->headerData(c, Qt::Horizontal).toString(); };
        QCOMPARE(header(2), QStringLiteral("GPU time"));
        QCOMPARE(header(3), QStringLiteral("%"));
        QCOMPARE(header(4), QStringLiteral("Host"));
        QVERIFY2(QRegularExpression(QStringLiteral("^[\\d.]+ (µs|ms|s)$")).match(cell(0, 2).toString()).hasMatch(),
                 qPrintable(cell(0, 2).toString()));
        double shares = 0;
        for (int r = 0; r < rows(); ++r)
            shares += cell(r, 3, fxlens::views::ProfileTableModel::SortRole).toDouble();
        QVERIFY2(shares <= 100.5, qPrintable(QString::number(shares)));
        QVERIFY2(panel->scaleText().contains(topName), qPrintable(panel->scaleText()));
        QVERIFY2(panel->bound() && !panel->summary().contains(QStringLiteral("another graph")), qPrintable(panel->summary()));
        QVERIFY(rows() > 10);
        QCOMPARE(cell(0, 0).toString(), topName); // sorted by GPU time
        // The canvas: the top node's item is the hottest (modules are expanded to show it).
        QVERIFY(w.selectNode(topName));
        const auto *n = w.graph()->find(topName.toStdString());
        QVERIFY(n);
        auto *canvas = w.canvas();
        const int item = canvas->itemOf(n);
        QVERIFY(item >= 0);
        QVERIFY2(canvas->heatOf(item) > 0, qPrintable(QString::number(canvas->heatOf(item))));
        QVERIFY2(w.inspectorText().contains(QStringLiteral("profile")) && w.inspectorText().contains(QStringLiteral("kernels/iter")),
                 qPrintable(w.inspectorText()));
        // A row click selects its node.
        panel->table()->setCurrentIndex(panel->table()->model()->index(1, 0));
        QVERIFY(w.inspectorText().startsWith(cell(1, 0).toString()));
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/window_profile_tangle4.png")));
        // Version B: the same recording without the top node's kernels; both versions in the
        // summary, B's time and the change per node in the table.
        {
            auto events = raw.value().first;
            const int topIndex = int(top);
            auto profileB = fxlens::prof::buildProfile(events, raw.value().second, "cuda");
            std::erase_if(profileB.kernels, [&](const fxlens::prof::KernelRec &k) { return k.node == topIndex; });
            profileB.version = "B";
            profileB.finish();
            const QString pathB = QDir::temp().filePath(QStringLiteral("fxlens_profileB_%1.json").arg(QCoreApplication::applicationPid()));
            QVERIFY(fxlens::prof::writeProfile(profileB, pathB.toStdString()).ok());
            QVERIFY2(panel->openComparison(pathB), qPrintable(panel->status()));
            QVERIFY2(panel->summary().contains(QStringLiteral("A: ")) && panel->summary().contains(QStringLiteral("B: ")) &&
                         panel->summary().contains(QStringLiteral("B vs A")),
                     qPrintable(panel->summary()));
            QCOMPARE(header(4), QStringLiteral("B time"));
            QCOMPARE(header(5), QStringLiteral("Δ B−A"));
            QCOMPARE(cell(0, 0).toString(), topName);
            QVERIFY(cell(0, 5, fxlens::views::ProfileTableModel::SortRole).toDouble() < 0);    // the top node's kernels are gone in B
            QVERIFY(cell(1, 5, fxlens::views::ProfileTableModel::SortRole).toDouble() == 0.0); // the others are as they were
            // The table fits the panel: no column is scrolled off to the right.
            QCoreApplication::processEvents();
            QVERIFY2(
                panel->table()->horizontalHeader()->length() <= panel->table()->viewport()->width() + 1,
                qPrintable(
                    QStringLiteral("%1 > %2").arg(panel->table()->horizontalHeader()->length()).arg(panel->table()->viewport()->width())));
            w.findChild<QDockWidget *>(QStringLiteral("profileDock"))->raise();
            QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/window_profile_ab.png")));
            panel->closeComparison();
            QCOMPARE(panel->table()->model()->columnCount(), 5);
            QFile::remove(pathB);
        }
        // A malformed profile: refused with the file named; the open one stays.
        const QString bad = QDir::temp().filePath(QStringLiteral("fxlens_badprofile_%1.json").arg(QCoreApplication::applicationPid()));
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"format\": \"fxlens-profile\", \"version\": 1, \"nodes\": 3}");
        }
        QVERIFY(!w.openProfile(bad));
        QVERIFY2(panel->status().contains(QFileInfo(bad).fileName()), qPrintable(panel->status()));
        QCOMPARE(cell(0, 0).toString(), topName);
        QFile::remove(bad);
        // Bound by identity: over another graph the profile is marked and tints nothing; opening a
        // graph closes it; File → Close Profile drops it.
        w.debugger()->applySelected(); // the same file, another version: some nodes differ
        QVERIFY(!panel->bound());
        QVERIFY2(panel->summary().contains(QStringLiteral("Recorded on another graph or version")), qPrintable(panel->summary()));
        for (size_t i = 0; i < canvas->view().items.size(); ++i)
            QCOMPARE(canvas->heatOf(int(i)), 0.0);
        QVERIFY(w.openProfile(path));
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QVERIFY(!panel->profile());
        QFile::remove(path);
    }

    /// Opening another file while the debugger has a session and steps, then closing the window:
    /// the session lets go of each graph before it is freed (valgrind/ASan find the misses).
    void reopenWithSession()
    {
        auto w = std::make_unique<MainWindow>();
        QVERIFY(w->openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QVERIFY(w->debugger()->applySelected());
        QVERIFY(w->openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QCOMPARE(w->debugger()->historySize(), 0);
        QVERIFY(!w->isModified());
        QVERIFY(w->openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QVERIFY(w->debugger()->applySelected());
        w.reset();
    }

    /// A run goes in slices with the window held still meanwhile; Stop ends it between slices with
    /// a consistent graph, and the next Run goes on to the fixpoint.
    /// Apply after going back keeps the replaced steps as a branch in the history list (issue: no
    /// lost work); double-clicking it makes that line current again with its own diffs.
    void branchingHistory()
    {
        using fxlens::views::RewriteDebugger;
        MainWindow w(testServices());
        QVERIFY(showWith(w, "tangle4_fx.json", "rewriteDock"));
        RewriteDebugger *d = w.debugger();
        d->setPreset(QStringLiteral("vertical"));
        for (int i = 0; i < 4; ++i)
            QVERIFY(d->applySelected());
        const std::string four = fxlens::ir::printGraph(*w.graph());
        const QString diffFour = d->diffText(4);
        QVERIFY(d->checkout(1));
        QVERIFY(d->candidateCount() >= 2);
        d->candidateList()->setCurrentIndex(d->candidateList()->model()->index(1, 0));
        QVERIFY(d->applySelected());
        QCOMPARE(d->version(), 2);
        QCOMPARE(d->historySize(), 2);
        QCOMPARE(d->branchCount(), 1);
        // Versions 0..2, then the branch row.
        QListView *h = d->historyList();
        QCOMPARE(h->model()->rowCount(), 4);
        const QModelIndex branch = h->model()->index(3, 0);
        QVERIFY2(branch.data().toString().contains(QStringLiteral("branch from version 1: 3 steps")), qPrintable(branch.data().toString()));
        const std::string other = fxlens::ir::printGraph(*w.graph());
        Q_EMIT h->clicked(branch);
        QCOMPARE(d->version(), 4);
        QCOMPARE(fxlens::ir::printGraph(*w.graph()), four);
        QCOMPARE(d->diffText(4), diffFour);
        QCOMPARE(d->branchCount(), 1);
        QVERIFY(
            h->model()->index(h->model()->rowCount() - 1, 0).data().toString().contains(QStringLiteral("branch from version 1: 1 step,")));
        QDir().mkpath(QStringLiteral("screenshots"));
        QVERIFY(w.grab().save(QStringLiteral("screenshots/debugger_branches.png")));
        QCOMPARE(int(w.graph()->size()), w.findChild<fxlens::views::NodeTableModel *>()->rowCount());
        QVERIFY(d->switchBranch(0));
        QCOMPARE(fxlens::ir::printGraph(*w.graph()), other);
        QCOMPARE(d->version(), 2);
    }

    /// Skip is visible (a greyed row after the candidates) and can be taken back by double-click.
    void skipsAreListed()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, "tangle4_fx.json", "rewriteDock"));
        auto *d = w.debugger();
        d->setPreset(QStringLiteral("vertical"));
        const int before = d->candidateCount();
        const QString first = d->candidateList()->model()->index(0, 0).data().toString().section(QStringLiteral(" — "), 0, 0);
        QVERIFY(d->skipSelected());
        QCOMPARE(d->skippedCount(), 1);
        QCOMPARE(d->candidateCount(), before - 1);
        QListView *list = d->candidateList();
        const QModelIndex row = list->model()->index(list->model()->rowCount() - 1, 0);
        QVERIFY2(row.data().toString().startsWith(QStringLiteral("skipped: ") + first), qPrintable(row.data().toString()));
        Q_EMIT list->doubleClicked(row);
        QCOMPARE(d->skippedCount(), 0);
        QCOMPARE(d->candidateCount(), before);
        QCOMPARE(d->version(), 0); // taking a skip back applies nothing
    }

    void runCanBeStopped()
    {
        MainWindow w(testServices());
        QVERIFY(showWith(w, "tangle800_torch.json.gz", "rewriteDock"));
        auto *d = w.debugger();
        bool heldStill = false, progressShown = false, browsable = false;
        auto *bar = d->findChild<QProgressBar *>(QStringLiteral("runProgress"));
        QVERIFY(bar && !bar->isVisible());
        QTimer::singleShot(0, &w, [&] {
            // What could edit the graph or the patterns is held; the canvas, the node table and the
            // inspector stay browsable (a node selected mid-run shows in the inspector).
            QMenu *file = w.menuBar()->actions().at(0)->menu();
            heldStill = d->isRunning() && !file->isEnabled() && !d->candidateList()->isEnabled() &&
                !w.findChild<QDockWidget *>(QStringLiteral("patternsDock"))->isEnabled();
            browsable = w.canvas()->isEnabled() && w.selectNode(QStringLiteral("l_x_")) &&
                w.inspectorText().contains(QStringLiteral("placeholder"));
            progressShown = bar->isVisible() && bar->isEnabled() && bar->maximum() > bar->value() && bar->value() > 0;
            QDir().mkpath(QStringLiteral("screenshots"));
            w.grab().save(QStringLiteral("screenshots/debugger_running.png"));
            d->run(); // the Run button reads Stop now
        });
        QCOMPARE(d->run(), QStringLiteral("stopped"));
        QVERIFY(heldStill);
        QVERIFY(browsable);
        QVERIFY(progressShown);
        QVERIFY(!bar->isVisible());
        QVERIFY2(
            QRegularExpression(QStringLiteral("^\\d+ of ≥\\d+ steps, [\\d.]+ s; about \\d+ s left")).match(d->lastProgress()).hasMatch(),
            qPrintable(d->lastProgress()));
        QVERIFY(!d->isRunning());
        QVERIFY(w.menuBar()->actions().at(0)->menu()->isEnabled() && w.canvas()->isEnabled());
        QVERIFY2(d->version() > 0 && d->version() < 5630, qPrintable(QString::number(d->version())));
        QVERIFY(w.graph()->lint().empty());
        QVERIFY(d->candidateCount() > 0);
        QCOMPARE(d->run(), QStringLiteral("fixpoint"));
        QCOMPARE(d->historySize(), 5630); // the same steps as one uninterrupted run (bench_debugger)
        QCOMPARE(int(w.graph()->size()), 3221);
    }

    /// Unsaved rewrite steps survive a SIGKILL of the app: the autosave written after the steps is
    /// offered when the file opens again and brings back the history, the version and the graph.
    void autosaveSurvivesKill()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QByteArray previousDir = qgetenv("FXLENS_AUTOSAVE_DIR");
        qputenv("FXLENS_AUTOSAVE_DIR", dir.filePath(QStringLiteral("autosave")).toLocal8Bit());
        const QString graph = dir.filePath(QStringLiteral("tangle4_fx.json"));
        QVERIFY(QFile::copy(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), graph));
        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        app.setProcessEnvironment(env);
        app.start(QStringLiteral(FXLENS_BUILD_DIR "/app/gui/fxlens"), {graph, QStringLiteral("--apply-steps"), QStringLiteral("3")});
        QVERIFY(app.waitForStarted());
        std::optional<fxlens::views::AutosaveState> saved;
        for (int i = 0; i < 600 && !(saved && saved->steps.size() == 3); ++i) {
            QTest::qWait(50);
            saved = fxlens::views::Autosave::read(graph);
        }
        QVERIFY2(saved && saved->steps.size() == 3, "the app wrote no autosave of its 3 steps");
        ::kill(pid_t(app.processId()), SIGKILL);
        QVERIFY(app.waitForFinished());
        QCOMPARE(app.exitStatus(), QProcess::CrashExit);

        auto savedGraph = fxlens::io::parseGraphJson(saved->graph, "autosave");
        QVERIFY(savedGraph.ok());
        // Started with --apply-steps, the app's question says where those steps will run.
        const QString question = fxlens::views::Autosave::recoverQuestion(*saved, QStringLiteral("--apply-steps 3"));
        QVERIFY2(question.contains(QStringLiteral("3 rewrite steps")) &&
                     question.contains(QStringLiteral("--apply-steps 3 then runs on the recovered version (after its 3 steps)")),
                 qPrintable(question));
        QVERIFY(!fxlens::views::Autosave::recoverQuestion(*saved).contains(QStringLiteral("--apply-steps")));
        {
            MainWindow w(testServices());
            int asked = 0;
            w.setRecoveryPrompt([&](const fxlens::views::AutosaveState &s) {
                ++asked;
                return s.steps.size() == 3;
            });
            QVERIFY(w.openFile(graph));
            QCOMPARE(asked, 1);
            QCOMPARE(w.debugger()->historySize(), 3);
            QCOMPARE(w.debugger()->version(), 3);
            QVERIFY(w.isModified());
            QCOMPARE(w.graph()->size(), savedGraph.value()->size());
            QCOMPARE(fxlens::io::writeGraphJson(*w.graph()), fxlens::io::writeGraphJson(*savedGraph.value()));
            // Saving leaves nothing to recover.
            QVERIFY(w.saveFile(dir.filePath(QStringLiteral("saved.json"))));
            QVERIFY(!fxlens::views::Autosave::read(graph));
        }
        // Declining an autosave removes it and opens the file as it is.
        QVERIFY(fxlens::views::Autosave::write(*saved));
        {
            MainWindow w(testServices());
            w.setRecoveryPrompt([](const fxlens::views::AutosaveState &) { return false; });
            QVERIFY(w.openFile(graph));
            QCOMPARE(w.debugger()->historySize(), 0);
            QVERIFY(!w.isModified());
            QVERIFY(!fxlens::views::Autosave::read(graph));
        }
        qputenv("FXLENS_AUTOSAVE_DIR", previousDir);
    }

    /// --apply-steps N takes Run's first N steps; when the run stops sooner (at the fixpoint, or a
    /// recovered history already at its end) the app says how many it took and why.
    void applyStepsSaysWhenFewer()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        int fixpoint = 0;
        {
            MainWindow w(testServices());
            QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
            QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
            fixpoint = w.debugger()->historySize();
        }
        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("FXLENS_AUTOSAVE_DIR"), dir.filePath(QStringLiteral("autosave")));
        env.insert(QStringLiteral("HOME"), dir.path());
        app.setProcessEnvironment(env);
        const QString shot = dir.filePath(QStringLiteral("shot.png"));
        app.start(QStringLiteral(FXLENS_BUILD_DIR "/app/gui/fxlens"),
                  {QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), QStringLiteral("--apply-steps"), QStringLiteral("1000"),
                   QStringLiteral("--screenshot"), shot});
        QVERIFY(app.waitForFinished(60000));
        const QString err = QString::fromLocal8Bit(app.readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("--apply-steps 1000: %1 applied from version 0 (stopped: fixpoint)").arg(fixpoint)),
                 qPrintable(err));
        QVERIFY(QFileInfo::exists(shot));
    }

    /// Opening another file with unsaved steps asks first: Cancel keeps everything, Discard opens.
    void openAsksAboutUnsavedSteps()
    {
        MainWindow w(testServices());
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QVERIFY(w.debugger()->applySelected());
        QVERIFY(w.isModified());
        QStringList asked;
        int answer = QMessageBox::Cancel;
        w.setUnsavedPrompt([&](const QString &before) {
            asked << before;
            return answer;
        });
        QVERIFY(!w.openFileAsked(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QCOMPARE(asked, QStringList{QStringLiteral("opening transformer_fx.json")});
        QVERIFY(w.currentFile().endsWith(QStringLiteral("tangle4_fx.json")));
        QCOMPARE(w.debugger()->historySize(), 1);
        answer = QMessageBox::Discard;
        QVERIFY(w.openFileAsked(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QVERIFY(w.currentFile().endsWith(QStringLiteral("transformer_fx.json")));
        QVERIFY(!w.isModified());
        // Nothing unsaved: no question.
        QVERIFY(w.openFileAsked(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QCOMPARE(asked.size(), 2);
    }

    /// The dark theme keeps the picture's state: expanded modules, the selection, highlights.
    void darkThemeKeepsState()
    {
        MainWindow w(testServices());
        w.resize(1200, 800);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QVERIFY(w.selectNode(QStringLiteral("softmax")));
        auto *c = w.canvas();
        const size_t items = c->view().items.size();
        const QString selected = c->selectedLabel();
        QVERIFY(!selected.isEmpty());
        w.setDarkTheme(true);
        QCOMPARE(c->view().items.size(), items);
        QCOMPARE(c->selectedLabel(), selected);
        QVERIFY(c->palette().color(QPalette::Base).lightness() < 100);
        w.setDarkTheme(false);
        QCOMPARE(c->view().items.size(), items);
        QCOMPARE(c->selectedLabel(), selected);
    }

    /// A module box selected on the canvas: the inspector shows the module (class, path, node count,
    /// inputs and outputs, attributes) and no node row stays selected beside it; a node selected
    /// after it replaces it, in the table, on the canvas and in the inspector alike.
    void moduleInspectorAndOneSelection()
    {
        MainWindow w(testServices());
        w.resize(1200, 800);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QVERIFY(w.selectNode(QStringLiteral("split")));
        auto *table = w.findChild<QTableView *>(QStringLiteral("nodeTable"));
        QVERIFY(table->selectionModel()->hasSelection());
        Q_EMIT w.canvas()->moduleSelected(QStringLiteral("blocks.0.linear"));
        const QString text = w.inspectorText();
        QVERIFY2(text.contains(QStringLiteral("blocks.0.linear")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("Linear (torch.nn.modules.linear.Linear)")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("in_features")) && text.contains(QStringLiteral("32")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("nodes")) && text.contains(QStringLiteral("inputs")) &&
                     text.contains(QStringLiteral("outputs")),
                 qPrintable(text));
        QVERIFY(!table->selectionModel()->hasSelection());
        QVERIFY(w.selectNode(QStringLiteral("x")));
        QVERIFY(w.inspectorText().startsWith(QStringLiteral("x")));
        QCOMPARE(table->selectionModel()->selectedRows().size(), 1);
        QCOMPARE(w.canvas()->selectedLabel(), QStringLiteral("x"));
    }

    /// At the default 1200×800 the side panels have room for their content: an inspector of a dozen
    /// rows, the debugger's lists and diff, candidates whose full text is their tooltip.
    void panelsFitAtDefaultSize()
    {
        QSettings().remove(QStringLiteral("window")); // no saved geometry or dock state
        MainWindow w(testServices());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.size(), QSize(1200, 800));
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QVERIFY(w.selectNode(QStringLiteral("split")));
        auto *inspector = w.findChild<QDockWidget *>(QStringLiteral("inspectorDock"));
        QVERIFY2(inspector->height() >= 200 && inspector->width() >= 400,
                 qPrintable(QStringLiteral("%1x%2").arg(inspector->width()).arg(inspector->height())));
        auto *d = w.debugger();
        w.findChild<QDockWidget *>(QStringLiteral("rewriteDock"))->raise();
        QCoreApplication::processEvents();
        const int rowHeight = d->candidateList()->sizeHintForRow(0);
        QVERIFY2(d->candidateList()->viewport()->height() >= 4 * rowHeight,
                 qPrintable(QString::number(d->candidateList()->viewport()->height())));
        QVERIFY(d->historyList()->viewport()->height() >= 3 * rowHeight);
        QVERIFY(d->findChild<QTextBrowser *>(QStringLiteral("diff"))->height() >= 100);
        QCOMPARE(d->candidateList()->model()->index(0, 0).data(Qt::ToolTipRole).toString(),
                 d->candidateList()->model()->index(0, 0).data().toString());
    }

    /// Parameters and constants do not flood the node table either: hidden until searched for or
    /// shown (View ▸ Show Parameters and Constants, which also shows them on the canvas).
    void constantsHiddenInTable()
    {
        MainWindow w(testServices());
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/resnet50_aten.json.gz")));
        size_t constants = 0;
        const auto hidden = fxlens::layout::constantNodes(*w.graph());
        for (const fxlens::ir::Node *n = w.graph()->first(); n; n = n->next())
            constants += hidden[n->id()];
        QVERIFY(constants > 300);
        QCOMPARE(size_t(w.visibleNodeCount()), w.graph()->size() - constants);
        w.setSearch(QStringLiteral("/^conv1_weight$/"));
        QCOMPARE(w.visibleNodeCount(), 1);
        w.setSearch(QString());
        const size_t items = w.canvas()->view().items.size();
        w.setShowConstants(true);
        QCOMPARE(size_t(w.visibleNodeCount()), w.graph()->size());
        QVERIFY(w.canvas()->view().items.size() > items);
    }

    void badFileKeepsCurrentGraph()
    {
        MainWindow w(testServices());
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        QVERIFY(!w.openFile(QStringLiteral(FXLENS_TEST_DATA "/malformed/cycle.json")));
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.first().first().toString().contains(QStringLiteral("node 'a': is part of a cycle")));
        QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("cycle.json")));
        // The graph that was open is still there, untouched.
        QCOMPARE(w.visibleNodeCount(), 108);
        QVERIFY(w.currentFile().endsWith(QStringLiteral("tangle4_fx.json")));
        // Picked from File → Open: also said in a dialog that names the file and the node.
        QVERIFY(!w.openFileAsked(QStringLiteral(FXLENS_TEST_DATA "/malformed/cycle.json")));
        auto *box = w.findChild<QMessageBox *>(QStringLiteral("openError"));
        QVERIFY(box);
        QVERIFY(box->text().contains(QStringLiteral("cycle.json")) && box->text().contains(QStringLiteral("node 'a'")));
        box->close();
        // A search does not carry over to the next file.
        w.setSearch(QStringLiteral("no_such_node_anywhere"));
        QCOMPARE(w.visibleNodeCount(), 0);
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/transformer_fx.json")));
        QCOMPARE(w.visibleNodeCount(), 32);
        QVERIFY(w.findChild<QLineEdit *>(QStringLiteral("search"))->text().isEmpty());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_MainWindow.moc"
