// SPDX-License-Identifier: MIT
// The rewrite debugger on its own (no window): candidates, steps with their diffs, undo/redo, a
// branch kept when a step is applied after going back, skips, breakpoints, the step record that an
// autosave replays, and the verifier the app injects (or its absence).
#include "RewriteDebugger.h"

#include "BuiltinPatterns.h"
#include "io/GraphJson.h"
#include "ir/Printer.h"

#include <QListWidget>
#include <QSignalSpy>
#include <QtTest>

using namespace fxlens;
using views::RewriteDebugger;

namespace {

struct Fixture {
    rewrite::PatternRegistry registry;
    std::unique_ptr<ir::Graph> graph;
    std::string error;
    Fixture()
    {
        error = patterns::registerBuiltinPatterns(registry, FXLENS_PATTERN_SOURCE_DIR);
        auto r = io::readGraphFile(FXLENS_EXAMPLES "/tangle4_fx.json");
        if (r)
            graph = std::move(r.value());
        else
            error = r.error().toString();
    }
};

} // namespace

class TestRewriteDebugger : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void stepsDiffsUndoRedo()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger d(f.registry);
        QSignalSpy edited(&d, &RewriteDebugger::graphEdited), before(&d, &RewriteDebugger::aboutToEdit);
        d.setGraph(f.graph.get());
        const std::string original = ir::printGraph(*f.graph);
        QVERIFY(d.candidateCount() > 0);
        QVERIFY(d.applySelected());
        QCOMPARE(d.historySize(), 1);
        QCOMPARE(d.version(), 1);
        QCOMPARE(before.size(), edited.size()); // every edit is announced before it happens
        QVERIFY(edited.size() >= 1);
        const QString diff = d.diffText(1);
        QVERIFY2(diff.contains(QStringLiteral("- ")) || diff.contains(QStringLiteral("~ ")), qPrintable(diff));
        const std::string afterOne = ir::printGraph(*f.graph);
        QVERIFY(afterOne != original);
        QVERIFY(d.undo());
        QCOMPARE(ir::printGraph(*f.graph), original);
        QVERIFY(d.redo());
        QCOMPARE(ir::printGraph(*f.graph), afterOne);
        QCOMPARE(d.stepRecord().size(), 1);
        QVERIFY(d.stepRecord()[0].contains(QLatin1Char('\t')));
    }

    /// Going back and applying another step keeps the replaced steps as a branch; switching to it
    /// restores that line exactly.
    void branchesKeepWork()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger d(f.registry);
        d.setGraph(f.graph.get());
        QVERIFY(d.applySelected());
        QVERIFY(d.applySelected());
        const std::string twoSteps = ir::printGraph(*f.graph);
        QVERIFY(d.checkout(0));
        QVERIFY(d.skipSelected()); // a different first step this time
        QVERIFY(d.applySelected());
        QCOMPARE(d.branchCount(), 1);
        QCOMPARE(d.historySize(), 1);
        QVERIFY(d.switchBranch(0));
        QCOMPARE(d.historySize(), 2);
        QCOMPARE(ir::printGraph(*f.graph), twoSteps);
    }

    /// Replaying a step record from version 0 reproduces the graph (what recovery does).
    void replayReproduces()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        QStringList record;
        std::string result;
        {
            RewriteDebugger d(f.registry);
            d.setGraph(f.graph.get());
            for (int i = 0; i < 3; ++i)
                QVERIFY(d.applySelected());
            record = d.stepRecord();
            result = ir::printGraph(*f.graph);
            d.setGraph(nullptr);
        }
        Fixture g;
        QVERIFY(g.error.empty() && g.graph);
        RewriteDebugger d(g.registry);
        d.setGraph(g.graph.get());
        QVERIFY(d.replay(record));
        QCOMPARE(ir::printGraph(*g.graph), result);
        QVERIFY(!d.replay({QStringLiteral("no_such_pattern\tnowhere")}));
    }

    /// The candidates at a version are listed in one order however the session got there (a run to
    /// the fixpoint and back lists what a fresh session lists, in the same order).
    void candidateOrderIsStablePerVersion()
    {
        Fixture f;
        RewriteDebugger d(f.registry);
        d.setGraph(f.graph.get());
        auto rows = [&] {
            QStringList out;
            for (int i = 0; i < d.candidateCount(); ++i)
                out << d.candidateList()->item(i)->text();
            return out;
        };
        const QStringList fresh = rows();
        QVERIFY(fresh.size() > 3);
        QCOMPARE(d.run(), QStringLiteral("fixpoint"));
        QVERIFY(d.checkout(0));
        QCOMPARE(rows(), fresh);
        QVERIFY(d.applySelected());
        const QStringList atOne = rows();
        QVERIFY(d.undo());
        QVERIFY(d.redo());
        QCOMPARE(rows(), atOne);
    }

    /// A pattern breakpoint stops a run before that pattern applies.
    void breakpointStopsRun()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger d(f.registry);
        d.setGraph(f.graph.get());
        const QString first = d.candidateList()->item(0)->text().section(QStringLiteral(" — "), 0, 0).section(QLatin1Char(' '), 0, 0);
        QVERIFY(d.addBreakpoint(QStringLiteral("pattern"), first));
        QCOMPARE(d.run(), QStringLiteral("breakpoint"));
        QCOMPARE(d.breakpointList().size(), 1);
        // The selected candidate is the one the run stopped before.
        QVERIFY2(d.candidateList()->currentItem()->text().startsWith(first + QStringLiteral(" @")),
                 qPrintable(d.candidateList()->currentItem()->text()));
        d.clearBreakpoints();
        QCOMPARE(d.run(), QStringLiteral("fixpoint"));
        QCOMPARE(d.candidateCount(), 0);
    }

    /// Without an injected verifier the checkbox is off and says why; with one, every step is checked.
    void verifierIsInjected()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger plain(f.registry);
        plain.setGraph(f.graph.get());
        QVERIFY(!plain.verifyAvailable());
        QVERIFY(!plain.setVerify(true));
        plain.setGraph(nullptr);
        views::Services s;
        int made = 0, checks = 0;
        s.makeVerifier = [&](const ir::Graph &, std::string &) -> views::StepVerifier {
            ++made;
            return [&](const ir::Graph &) {
                ++checks;
                return std::string();
            };
        };
        RewriteDebugger d(f.registry, s);
        d.setGraph(f.graph.get());
        QVERIFY(d.verifyAvailable());
        QVERIFY(d.setVerify(true));
        QCOMPARE(made, 1);
        QVERIFY(d.applySelected());
        QCOMPARE(checks, 1);
        QVERIFY2(d.historyList()->item(1)->text().endsWith(QStringLiteral("✓ verified")), qPrintable(d.historyList()->item(1)->text()));
    }
};

QTEST_MAIN(TestRewriteDebugger)
#include "tst_RewriteDebugger.moc"
