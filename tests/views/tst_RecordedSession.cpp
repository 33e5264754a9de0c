// SPDX-License-Identifier: MIT
// Opening a trace file (a graph with a recorded rewrite session, docs/FORMAT.md) in the main window
// replays its history into the rewrite debugger: the files are made here by running the engine as
// the torch.compile backend does, then opened offscreen.
#include "MainWindow.h"

#include "BuiltinPatterns.h"
#include "GraphDocument.h"
#include "RewriteDebugger.h"
#include "SourceServices.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"
#include "lang/PatternLang.h"
#include "rewrite/Session.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

using namespace fxlens;
using views::MainWindow;

namespace {

/// A user's copy of cat_single under its own name and label (preset `user`).
const char *kUserPattern = R"fxpat(name = "my_cat_single"
level = "both"
benefit = 90
labels = ["user"]
description = "cat([t], d) -> t (a user's pattern file)"

def pattern(t: Tensor):
    y = (torch.cat | torch.concat | aten.cat.default)([t])
    assert y.shape == t.shape
    return y

def replacement(t):
    return t
)fxpat";

/// A trace file as the backend writes it: `graph` before optimization plus the session block with
/// the engine's history on it.
struct Trace {
    QString path;
    QStringList steps;            ///< "pattern<TAB>anchor"
    std::string original, result; ///< the graph before and after, as printed
    size_t originalNodes = 0, resultNodes = 0;
    std::string error;
};

Trace recordTrace(const QString &graph, const QString &out, const std::string &preset, const QStringList &patternPaths,
                  const std::function<void(QJsonArray &)> &editSteps = {})
{
    Trace t;
    t.path = out;
    auto g = io::readGraphFile(graph.toStdString());
    if (!g) {
        t.error = g.error().toString();
        return t;
    }
    rewrite::PatternRegistry reg;
    t.error = patterns::registerBuiltinPatterns(reg, FXLENS_PATTERN_SOURCE_DIR);
    lang::PatternLibrary lib;
    for (const QString &p : patternPaths)
        if (QFileInfo(p).isFile())
            lib.loadFile(p.toStdString(), reg);
    t.error += lib.diagnostics();
    auto patterns = reg.preset(preset, t.error);
    auto copy = g.value()->clone();
    rewrite::Session session(*copy, patterns);
    session.run();
    QJsonArray steps;
    for (const auto &s : session.history()) {
        steps.append(QJsonObject{{QStringLiteral("pattern"), QString::fromStdString(s.pattern)},
                                 {QStringLiteral("anchor"), QString::fromStdString(s.anchor)}});
        t.steps << QString::fromStdString(s.pattern) + QLatin1Char('\t') + QString::fromStdString(s.anchor);
    }
    if (editSteps)
        editSteps(steps);
    const QJsonObject block{{QStringLiteral("format"), QStringLiteral("fxlens-session")},
                            {QStringLiteral("version"), 1},
                            {QStringLiteral("tool"), QStringLiteral("fxlens.backend")},
                            {QStringLiteral("preset"), QString::fromStdString(preset)},
                            {QStringLiteral("patterns"), QString()},
                            {QStringLiteral("pattern_paths"), QJsonArray::fromStringList(patternPaths)},
                            {QStringLiteral("steps"), steps}};
    std::string text = io::writeGraphJson(*g.value());
    text.insert(1, "\"session\":" + QJsonDocument(block).toJson(QJsonDocument::Compact).toStdString() + ",");
    if (Status st = io::writeTextFile(out.toStdString(), text); !st)
        t.error += st.error().message;
    t.original = ir::printGraph(*g.value());
    t.result = ir::printGraph(*copy);
    t.originalNodes = g.value()->size();
    t.resultNodes = copy->size();
    return t;
}

/// A window that never asks (no autosave to recover, nothing unsaved in the way).
struct Window {
    MainWindow w{test::sourceServices()};
    Window()
    {
        w.setRecoveryPrompt([](const views::AutosaveState &) { return false; });
        w.setUnsavedPrompt([](const QString &) { return int(QMessageBox::Discard); });
    }
    views::RewriteDebugger &d() { return *w.debugger(); }
    QString status() { return w.statusBar()->currentMessage(); }
};

} // namespace

class TestRecordedSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("fxlens-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_RecordedSession"));
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        qputenv("FXLENS_AUTOSAVE_DIR", m_dir.filePath(QStringLiteral("autosave")).toLocal8Bit());
    }

    /// Every recorded step is in the history: version 0 is the graph as the file holds it, the last
    /// the engine's result, each step with its diff; the document is not modified by the replay.
    void replaysTheHistory()
    {
        const Trace t = recordTrace(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"),
                                    m_dir.filePath(QStringLiteral("tangle4.trace.json")), "all", {});
        QVERIFY2(t.error.empty(), t.error.c_str());
        const int n = int(t.steps.size());
        QVERIFY(n > 3 && t.resultNodes < t.originalNodes);
        Window win;
        QVERIFY(win.w.openFile(t.path));
        QCOMPARE(win.d().historySize(), n);
        QCOMPARE(win.d().version(), n);
        QCOMPARE(win.d().stepRecord(), t.steps);
        QCOMPARE(win.d().preset(), QStringLiteral("all"));
        QCOMPARE(win.w.graph()->size(), t.resultNodes);
        QCOMPARE(ir::printGraph(*win.w.graph()), t.result);
        QVERIFY(!win.w.isModified());
        QCOMPARE(win.status(), QStringLiteral("Replayed %1 steps recorded by fxlens.backend").arg(n));
        for (int step = 1; step <= n; ++step)
            QVERIFY2(!win.d().diffText(step).isEmpty(), qPrintable(QString::number(step)));
        QVERIFY(win.d().checkout(0));
        QCOMPARE(win.w.graph()->size(), t.originalNodes);
        QCOMPARE(ir::printGraph(*win.w.graph()), t.original);
        QVERIFY(win.d().redo());
        QCOMPARE(win.d().version(), 1);
        QVERIFY(win.d().checkout(n));
        QCOMPARE(win.w.graph()->size(), t.resultNodes);
        QVERIFY(win.w.isModified()); // walking the history is the user's edit
    }

    /// A step whose anchor is not in the graph stops the replay there, with a message naming the
    /// step, its pattern and its anchor; the steps before it stay.
    void stepThatNoLongerAppliesStops()
    {
        QString pattern;
        const Trace t = recordTrace(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), m_dir.filePath(QStringLiteral("bad.trace.json")),
                                    "all", {}, [&](QJsonArray &steps) {
                                        QJsonObject s = steps[2].toObject();
                                        pattern = s[QStringLiteral("pattern")].toString();
                                        s[QStringLiteral("anchor")] = QStringLiteral("no_such_node");
                                        steps[2] = s;
                                    });
        QVERIFY2(t.error.empty(), t.error.c_str());
        Window win;
        QVERIFY(win.w.openFile(t.path));
        QCOMPARE(win.d().historySize(), 2);
        QCOMPARE(win.d().version(), 2);
        QVERIFY(!win.w.isModified());
        const QString status = win.status();
        QVERIFY2(
            status.contains(QStringLiteral("bad.trace.json: replayed 2 of the %1 steps recorded by fxlens.backend").arg(t.steps.size())),
            qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("step 3 of %1 (%2 at no_such_node)").arg(t.steps.size()).arg(pattern)), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("no node 'no_such_node'")), qPrintable(status));
        QVERIFY(win.d().checkout(0));
    }

    /// The session's pattern files are loaded (a missing path is a warning, not a failure) and its
    /// preset selected; opening another file leaves nothing of them behind.
    void patternFilesAndNextFile()
    {
        const QString file = m_dir.filePath(QStringLiteral("my_cat_single.fxpat"));
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(kUserPattern);
        }
        const QString missing = m_dir.filePath(QStringLiteral("gone/patterns"));
        const Trace t = recordTrace(QStringLiteral(FXLENS_TEST_DATA "/patterns/cat_single_pos.torch.json"),
                                    m_dir.filePath(QStringLiteral("user.trace.json")), "user", {file, missing});
        QVERIFY2(t.error.empty(), t.error.c_str());
        QVERIFY(t.steps.contains(QStringLiteral("my_cat_single\tcat")));
        Window win;
        QVERIFY(win.w.openFile(t.path));
        QCOMPARE(win.d().preset(), QStringLiteral("user"));
        QCOMPARE(win.d().stepRecord(), t.steps);
        QCOMPARE(ir::printGraph(*win.w.graph()), t.result);
        QVERIFY(win.w.document()->registry().find("my_cat_single"));
        const QString status = win.status();
        QVERIFY2(status.startsWith(QStringLiteral("Replayed %1 step").arg(t.steps.size())), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("user.trace.json: the recorded session's pattern path %1 does not exist").arg(missing)),
                 qPrintable(status));
        // Another file: no history, no pattern file of the session, the preset as it was.
        QVERIFY(win.w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json")));
        QCOMPARE(win.d().historySize(), 0);
        QVERIFY(!win.w.document()->registry().find("my_cat_single"));
        QCOMPARE(win.d().preset(), QStringLiteral("all"));
        QVERIFY(!win.status().contains(QStringLiteral("Replayed")));
        QVERIFY(win.d().candidateCount() > 0);
    }

    /// A trace that fxlens.backend itself wrote (torch.compile on Tangle(6), Dynamo's graph with
    /// its weights lifted; tests/data/traces, made by python/tests/test_backend.py's
    /// make_trace_fixture): the app replays every recorded step to the engine's result.
    void opensTheBackendsTrace()
    {
        const QString path = QStringLiteral(FXLENS_TEST_DATA "/traces/tangle6_backend.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject session = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("session")).toObject();
        const int n = int(session.value(QStringLiteral("steps")).toArray().size());
        QVERIFY(n > 10);
        const Trace t = recordTrace(path, m_dir.filePath(QStringLiteral("engine.trace.json")), "all", {});
        QVERIFY2(t.error.empty(), t.error.c_str());
        QCOMPARE(int(t.steps.size()), n); // the engine here takes the steps the backend recorded
        Window win;
        QVERIFY(win.w.openFile(path));
        QCOMPARE(win.d().historySize(), n);
        QCOMPARE(win.d().version(), n);
        QCOMPARE(win.d().stepRecord(), t.steps);
        QCOMPARE(ir::printGraph(*win.w.graph()), t.result);
        QCOMPARE(win.status(), QStringLiteral("Replayed %1 steps recorded by fxlens.backend").arg(n));
        QVERIFY(win.d().checkout(0));
        QCOMPARE(win.w.graph()->size(), t.originalNodes);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestRecordedSession)
#include "tst_RecordedSession.moc"
