// SPDX-License-Identifier: MIT
// The rewrite debugger on its own (no window): candidates, steps with their diffs, undo/redo, a
// branch kept when a step is applied after going back, skips, breakpoints, the step record that an
// autosave replays, and the verifier the app injects (or its absence).
#include "RewriteDebugger.h"

#include "GraphDocument.h"
#include "RewriteModels.h"
#include "ir/Printer.h"

#include <QAbstractItemModelTester>
#include <QListView>
#include <QListWidget>
#include <QSignalSpy>
#include <QtTest>

using namespace fxlens;
using views::RewriteDebugger;

namespace {

/// A document on tangle4 (the debugger is a view of its rewrite history).
struct Fixture {
    std::unique_ptr<views::GraphDocument> doc;
    const ir::Graph *graph = nullptr;
    std::string error;
    explicit Fixture(views::Services s = {})
    {
        s.patternDir = FXLENS_PATTERN_SOURCE_DIR;
        doc = std::make_unique<views::GraphDocument>(s);
        error = doc->registryError().toStdString();
        QString why;
        if (!doc->open(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), &why))
            error = why.toStdString();
        graph = doc->graph();
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
        RewriteDebugger d(*f.doc);
        QSignalSpy edited(f.doc.get(), &views::GraphDocument::changed), steps(f.doc->history(), &views::RewriteHistory::stepApplied),
            versions(f.doc->history(), &views::RewriteHistory::versionChanged);
        const std::string original = ir::printGraph(*f.graph);
        QVERIFY(d.candidateCount() > 0);
        QVERIFY(d.applySelected());
        QCOMPARE(d.historySize(), 1);
        QCOMPARE(d.version(), 1);
        QCOMPARE(edited.size(), 1); // the document announces the edit, the history the step as a value
        QCOMPARE(steps.size(), 1);
        const auto step = steps.at(0).at(0).value<views::StepSummary>();
        QCOMPARE(step.version, 1);
        QVERIFY(step.id != 0 && step.id == f.doc->history()->currentId());
        QVERIFY(!step.pattern.isEmpty() && step.edits > 0);
        QVERIFY(f.doc->isModified());
        const QString diff = d.diffText(1);
        QVERIFY2(diff.contains(QStringLiteral("- ")) || diff.contains(QStringLiteral("~ ")), qPrintable(diff));
        const std::string afterOne = ir::printGraph(*f.graph);
        QVERIFY(afterOne != original);
        const uint64_t idOne = f.doc->history()->currentId();
        QVERIFY(d.undo());
        QCOMPARE(ir::printGraph(*f.graph), original);
        QCOMPARE(versions.last().at(0).value<views::VersionInfo>().version, 0);
        QVERIFY(d.redo());
        QCOMPARE(ir::printGraph(*f.graph), afterOne);
        QCOMPARE(f.doc->history()->currentId(), idOne); // a version keeps its id across undo/redo
        QCOMPARE(d.stepRecord().size(), 1);
        QVERIFY(d.stepRecord()[0].contains(QLatin1Char('\t')));
    }

    /// The candidates and the versions are item models over the history's values: Qt's model
    /// tester checks them through steps, skips, undo and a branch; their rows say what the lists show.
    void listModels()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger d(*f.doc);
        QAbstractItemModelTester candidates(d.candidateModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester versions(d.historyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto *c = d.candidateModel();
        auto *h = d.historyModel();
        QCOMPARE(c->rowCount(), d.candidateCount());
        QCOMPARE(h->rowCount(), 1);
        QCOMPARE(h->index(0).data().toString(), QStringLiteral("0  original"));
        QVERIFY(h->index(0).data(Qt::FontRole).value<QFont>().bold());
        const QString first = c->index(0).data().toString();
        QCOMPARE(c->index(0).data(Qt::ToolTipRole).toString(), first);
        QVERIFY(!c->index(0).data(views::CandidateModel::SkippedRole).isValid());
        QVERIFY(d.applySelected());
        QVERIFY(d.applySelected());
        QCOMPARE(h->rowCount(), 3);
        QVERIFY(h->index(1).data().toString().startsWith(QStringLiteral("1  ") + first.section(QStringLiteral(" — "), 0, 0)));
        QVERIFY(d.undo());
        QVERIFY(h->index(1).data(Qt::FontRole).value<QFont>().bold() && !h->index(2).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(h->index(2).data(Qt::ForegroundRole).isValid()); // ahead of the version on screen: greyed
        QVERIFY(d.skipSelected());
        const QModelIndex skipped = c->index(c->rowCount() - 1);
        QVERIFY2(skipped.data().toString().startsWith(QStringLiteral("skipped: ")), qPrintable(skipped.data().toString()));
        QCOMPARE(skipped.data(views::CandidateModel::SkippedRole).toStringList().size(), 2);
        QVERIFY(d.checkout(0));
        QVERIFY(d.applySelected()); // after going back: the two steps become a branch
        QCOMPARE(d.branchCount(), 1);
        const QModelIndex branch = h->index(h->rowCount() - 1);
        QVERIFY2(branch.data().toString().contains(QStringLiteral("branch from version 0: 2 steps")), qPrintable(branch.data().toString()));
        QCOMPARE(branch.data(views::HistoryModel::BranchRole).toInt(), 0);
        QVERIFY(!h->index(0).data(views::HistoryModel::BranchRole).isValid());
    }

    /// Going back and applying another step keeps the replaced steps as a branch; switching to it
    /// restores that line exactly.
    void branchesKeepWork()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger d(*f.doc);
        QVERIFY(d.applySelected());
        QVERIFY(d.applySelected());
        const std::string twoSteps = ir::printGraph(*f.graph);
        const uint64_t idTwo = f.doc->history()->currentId();
        QVERIFY(d.checkout(0));
        QVERIFY(d.skipSelected()); // a different first step this time
        QVERIFY(d.applySelected());
        QCOMPARE(d.branchCount(), 1);
        QCOMPARE(d.historySize(), 1);
        QVERIFY(d.switchBranch(0));
        QCOMPARE(d.historySize(), 2);
        QCOMPARE(ir::printGraph(*f.graph), twoSteps);
        QCOMPARE(f.doc->history()->currentId(), idTwo); // the branch's versions kept their ids
        QVERIFY(d.diffText(2).size() > 0);
    }

    /// Replaying a step record from version 0 reproduces the graph (what recovery does).
    void replayReproduces()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        QStringList record;
        std::string result;
        {
            RewriteDebugger d(*f.doc);
            for (int i = 0; i < 3; ++i)
                QVERIFY(d.applySelected());
            record = d.stepRecord();
            result = ir::printGraph(*f.graph);
        }
        Fixture g;
        QVERIFY(g.error.empty() && g.graph);
        RewriteDebugger d(*g.doc);
        QVERIFY(d.replay(record));
        QCOMPARE(ir::printGraph(*g.graph), result);
        QVERIFY(!d.replay({QStringLiteral("no_such_pattern\tnowhere")}));
    }

    /// The candidates at a version are listed in one order however the session got there (a run to
    /// the fixpoint and back lists what a fresh session lists, in the same order).
    void candidateOrderIsStablePerVersion()
    {
        Fixture f;
        RewriteDebugger d(*f.doc);
        auto rows = [&] {
            QStringList out;
            for (int i = 0; i < d.candidateCount(); ++i)
                out << d.candidateList()->model()->index(i, 0).data().toString();
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
    /// A run that leaves more nodes than it found says so, by how many and why: BERT's run to the
    /// fixpoint grows it through horizontal fusion (the fused QKV linears' weight concatenations and
    /// output splits); tangle4's shrinks it and says nothing of it.
    void runSaysWhenNodesRise()
    {
        views::Services s;
        s.patternDir = FXLENS_PATTERN_SOURCE_DIR;
        views::GraphDocument doc(s);
        QString why;
        QVERIFY2(doc.open(QStringLiteral(FXLENS_EXAMPLES "/bert_base_dynamo.json.gz"), &why), qPrintable(why));
        RewriteDebugger d(doc);
        d.setPreset(QStringLiteral("all"));
        const size_t before = doc.graph()->size();
        QCOMPARE(d.run(), QStringLiteral("fixpoint"));
        const size_t after = doc.graph()->size();
        QVERIFY(after > before);
        const QString rose = QStringLiteral("The node count rose: +%1 (%2 → %3): ").arg(after - before).arg(before).arg(after) +
            QStringLiteral("horizontal fusion steps");
        QVERIFY2(d.status().contains(rose), qPrintable(QString(d.status()).replace(QLatin1Char(0x0a), QLatin1Char(0x7c))));
        QVERIFY2(d.status().contains(QStringLiteral("batch_linear_lhs +")), qPrintable(d.status()));

        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger shrinks(*f.doc);
        const size_t was = f.graph->size();
        QCOMPARE(shrinks.run(), QStringLiteral("fixpoint"));
        QVERIFY(f.graph->size() < was);
        QVERIFY2(!shrinks.status().contains(QStringLiteral("node count")), qPrintable(shrinks.status()));
    }

    void breakpointStopsRun()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        RewriteDebugger d(*f.doc);
        const QString first =
            d.candidateList()->model()->index(0, 0).data().toString().section(QStringLiteral(" — "), 0, 0).section(QLatin1Char(' '), 0, 0);
        QVERIFY(d.addBreakpoint(QStringLiteral("pattern"), first));
        QCOMPARE(d.run(), QStringLiteral("breakpoint"));
        QCOMPARE(d.breakpointList().size(), 1);
        // The selected candidate is the one the run stopped before.
        QVERIFY2(d.candidateList()->currentIndex().data().toString().startsWith(first + QStringLiteral(" @")),
                 qPrintable(d.candidateList()->currentIndex().data().toString()));
        d.clearBreakpoints();
        QCOMPARE(d.run(), QStringLiteral("fixpoint"));
        QCOMPARE(d.candidateCount(), 0);
    }

    /// Run with a step count takes Run's first steps (what --apply-steps N does), stopping at the
    /// limit; a later Run goes on to the very steps of one uninterrupted run.
    void runTakesItsFirstSteps()
    {
        auto stepsOf = [](const views::GraphDocument &doc) {
            QStringList out;
            for (const auto &s : doc.history()->steps())
                out << QString::fromStdString(s.pattern + " @ " + s.anchor);
            return out;
        };
        Fixture whole;
        QVERIFY2(whole.error.empty() && whole.graph, whole.error.c_str());
        RewriteDebugger all(*whole.doc);
        QCOMPARE(all.run(), QStringLiteral("fixpoint"));
        const QStringList full = stepsOf(*whole.doc);
        QVERIFY(full.size() > 4);
        for (int k : {1, 3, int(full.size()) - 1, int(full.size())}) {
            Fixture f;
            RewriteDebugger d(*f.doc);
            QCOMPARE(d.run(k), k < full.size() ? QStringLiteral("step limit") : QStringLiteral("fixpoint"));
            QCOMPARE(stepsOf(*f.doc), full.mid(0, k));
            QCOMPARE(d.run(), QStringLiteral("fixpoint"));
            QCOMPARE(stepsOf(*f.doc), full);
        }
        Fixture f;
        RewriteDebugger d(*f.doc);
        QCOMPARE(d.run(int(full.size()) + 5), QStringLiteral("fixpoint"));
        QCOMPARE(d.historySize(), int(full.size()));
        d.run(0);
        QCOMPARE(d.historySize(), int(full.size()));
    }

    /// Without an injected verifier the checkbox is off and says why; with one, every step is checked.
    void verifierIsInjected()
    {
        Fixture f;
        QVERIFY2(f.error.empty() && f.graph, f.error.c_str());
        {
            RewriteDebugger plain(*f.doc);
            QVERIFY(!plain.verifyAvailable());
            QVERIFY(!plain.setVerify(true));
        }
        views::Services s;
        int made = 0, checks = 0;
        s.makeVerifier = [&](const ir::Graph &, std::string &) -> views::StepVerifier {
            ++made;
            return [&](const ir::Graph &) {
                ++checks;
                return std::string();
            };
        };
        Fixture v(s);
        RewriteDebugger d(*v.doc);
        QVERIFY(d.verifyAvailable());
        QVERIFY(d.setVerify(true));
        QCOMPARE(made, 1);
        QVERIFY(d.applySelected());
        QCOMPARE(checks, 1);
        QVERIFY2(d.historyList()->model()->index(1, 0).data().toString().endsWith(QStringLiteral("✓ verified")),
                 qPrintable(d.historyList()->model()->index(1, 0).data().toString()));
    }
};

QTEST_MAIN(TestRewriteDebugger)
#include "tst_RewriteDebugger.moc"
