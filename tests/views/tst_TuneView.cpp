// SPDX-License-Identifier: MIT
// Rewrite ▸ Tune in the app, with a deterministic cost model injected through Services (no
// executor): the search runs off the GUI thread with progress and Stop, the session moves to the
// tuned version as history (the line it leaves kept as a branch), the history says the measured
// times and lists the matches left out for cost with their Δ, undo works, the Versions chart shows
// the search, File ▸ Export Report writes the page; without a cost model Tune is disabled and
// says why; another file starts without a tune result.
#include "GraphDocument.h"
#include "MainWindow.h"
#include "ProfileChart.h"
#include "ProfilePanel.h"
#include "RewriteDebugger.h"
#include "RewriteModels.h"
#include "SourceServices.h"
#include "TestServices.h"
#include "TuneJob.h"
#include "TuneWidgets.h"
#include "ir/GraphInfo.h"

#include <QAction>
#include <QDockWidget>
#include <QFile>
#include <QListView>
#include <QMenuBar>
#include <QPushButton>
#include <QSemaphore>
#include <QSignalSpy>
#include <QSplitter>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

using namespace fxlens;
using views::MainWindow;
using views::TuneJob;

namespace {

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }

/// What the injected cost model knows: seconds from the graph's structure (a launch per node, a copy
/// per cat or split: fewer are faster) with fixed times for chosen versions (by fingerprint), and a
/// gate that holds the search at its `holdAt`-th measured version until the test lets it go.
struct Model {
    std::map<uint64_t, double> fixed;
    std::atomic<int> measured{0};
    int holdAt = -1;
    QSemaphore gate;
};

class ModelCost : public rewrite::CostModel {
public:
    explicit ModelCost(std::shared_ptr<Model> m) : m_m(std::move(m)) {}
    std::vector<Result<rewrite::Measurement>> measure(const std::vector<const ir::Graph *> &vs) override
    {
        std::vector<Result<rewrite::Measurement>> out;
        for (const ir::Graph *g : vs) {
            if (++m_m->measured == m_m->holdAt)
                m_m->gate.acquire();
            const auto it = m_m->fixed.find(ir::fingerprint(*g));
            double copies = 0;
            for (const ir::Node *n = g->first(); n; n = n->next())
                copies += n->target().find("cat") != std::string::npos || n->target().find("split") != std::string::npos;
            const double seconds = it != m_m->fixed.end() ? it->second : 1e-3 + 1e-5 * double(g->size()) + 4e-5 * copies;
            out.emplace_back(rewrite::Measurement{seconds, 0, 5, "model"});
        }
        return out;
    }

private:
    std::shared_ptr<Model> m_m;
};

views::Services services(const std::shared_ptr<Model> &model)
{
    views::Services s = test::sourceServices();
    s.makeCostModel = [model](const ir::Graph &, const views::CostModelRequest &, std::string &note,
                              std::string &) -> std::unique_ptr<rewrite::CostModel> {
        note = "model, host timer";
        return std::make_unique<ModelCost>(model);
    };
    return s;
}

QAction *action(MainWindow &w, const char *name) { return w.menuBar()->findChild<QAction *>(QLatin1String(name)); }

QStringList rows(const QAbstractItemModel *m)
{
    QStringList out;
    for (int i = 0; i < m->rowCount(); ++i)
        out << m->index(i, 0).data().toString();
    return out;
}

/// The version of tangle4 without split_cat: the model makes it the cheapest, so that pattern costs time.
uint64_t withoutSplitCat(MainWindow &w)
{
    rewrite::TunePlan without;
    without.droppedPatterns = {"split_cat"};
    return ir::fingerprint(*rewrite::replayPlan(*w.graph(), w.document()->history()->presetPatterns(), without, true).graph);
}

/// Tune from the menu with the dialog's answer given; waits for the search to end.
bool tuneFromMenu(MainWindow &w, double budget = 60)
{
    w.setTunePrompt([budget](views::TuneSettings &s) {
        s.budgetSeconds = budget;
        return true;
    });
    QSignalSpy finished(&w.document()->tuning(), &TuneJob::finished);
    QAction *tune = action(w, "tune");
    if (!tune || !tune->isEnabled())
        return false;
    tune->trigger();
    return finished.wait(20000) && finished.at(0).at(0).toBool();
}

} // namespace

class TestTuneView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tuneFromTheMenuMakesTheTunedVersionTheHistory()
    {
        auto model = std::make_shared<Model>();
        MainWindow w(services(model));
        w.resize(1500, 950);
        w.show();
        QVERIFY(w.openFile(example("tangle4_fx.json")));
        model->fixed[withoutSplitCat(w)] = 0.5e-3;
        views::RewriteDebugger *d = w.debugger();
        QVERIFY(d->applySelected() && d->applySelected()); // work of the user's: kept as a branch
        QVERIFY(!action(w, "exportReport")->isEnabled());

        QVERIFY(tuneFromMenu(w));
        const TuneJob &job = w.document()->tuning();
        const rewrite::TuneResult *r = job.result();
        QVERIFY(r);
        QCOMPARE(r->best.droppedPatterns, std::set<std::string>{"split_cat"});
        QCOMPARE(size_t(d->historySize()), r->steps.size());
        QCOMPARE(d->version(), d->historySize());
        QCOMPARE(d->branchCount(), 1);
        QCOMPARE(ir::fingerprint(*w.graph()), ir::fingerprint(*r->graph));
        for (size_t i = 0; i < r->steps.size(); ++i)
            QCOMPARE(w.document()->history()->steps()[i].pattern, r->steps[i].pattern);

        // The history: the original's and the tuned version's measured times, steps with their Δ,
        // the split_cat matches left out for cost with theirs.
        const QStringList history = rows(d->historyModel());
        QVERIFY2(history[0].contains(QStringLiteral("measured ") + TuneJob::msText(r->original.seconds)), qPrintable(history[0]));
        QVERIFY2(history[d->historySize()].contains(QStringLiteral("measured ") + TuneJob::msText(r->tuned.seconds)),
                 qPrintable(history[d->historySize()]));
        QVERIFY(history.filter(QStringLiteral("Δ ")).size() > 0);
        const QString leftOut = QStringLiteral("left out for cost (%1): split_cat @ ").arg(TuneJob::deltaText(r->leftOut[0].deltaSeconds));
        QVERIFY2(history.join(QLatin1Char('\n')).contains(leftOut), qPrintable(history.join(QLatin1Char('\n'))));
        QVERIFY(r->leftOut[0].deltaSeconds > 0);
        QVERIFY(rows(d->candidateModel()).filter(QStringLiteral("left out for cost")).size() > 0);
        for (const auto &s : w.document()->history()->steps())
            QVERIFY(s.pattern != "split_cat");

        // The Versions chart shows the search, the measurements taken highlighted.
        views::ProfileChart *chart = w.profilePanel()->chart();
        QCOMPARE(size_t(chart->trialCount()), r->trials.size());
        for (int i = 0; i < chart->trialCount(); ++i)
            if (r->trials[size_t(i)].accepted && r->trials[size_t(i)].kind != "greedy")
                QCOMPARE(chart->trialColor(i), QColor(0x3c, 0x9d, 0x5d));

        QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
        auto *rewriteDock = w.findChild<QDockWidget *>(QStringLiteral("rewriteDock"));
        rewriteDock->raise();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.resizeDocks({w.findChild<QDockWidget *>(QStringLiteral("inspectorDock")), rewriteDock}, {60, 900}, Qt::Vertical);
        d->findChild<QSplitter *>()->setSizes({70, 560, 90}); // the whole tuned history in view
        QCoreApplication::processEvents();
        d->historyList()->scrollToTop();
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/tune_history.png")));
        w.findChild<QDockWidget *>(QStringLiteral("profileDock"))->raise();
        w.profilePanel()->tabs()->setCurrentWidget(chart);
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/tune_versions_chart.png")));

        // Undo and redo walk the tuned line.
        const int last = d->version();
        QVERIFY(d->undo());
        QCOMPARE(d->version(), last - 1);
        QVERIFY(!rows(d->historyModel())[last - 1].contains(QStringLiteral("measured")));
        QVERIFY(d->redo());
        QCOMPARE(ir::fingerprint(*w.graph()), ir::fingerprint(*r->graph));

        // File ▸ Export Report: beside the graph by default; the page has the three versions.
        QVERIFY(action(w, "exportReport")->isEnabled());
        QCOMPARE(w.proposedReportPath(), example("tangle4_fx_tune.html"));
        QTemporaryDir dir;
        const QString page = dir.filePath(QStringLiteral("tangle4_fx_tune.html"));
        QVERIFY(w.exportReport(page));
        QFile f(page);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString html = QString::fromUtf8(f.readAll());
        for (const char *version : {"<td>original</td>", "<td>greedy</td>", "<td>tuned</td>"})
            QVERIFY2(html.contains(QLatin1String(version)), version);
        QVERIFY(html.contains(QStringLiteral("split_cat")));
    }

    /// A plan with a family order is applied stage by stage through the session: the history ends
    /// at the very version the search measured (the model makes an order other than the greedy
    /// driver's the cheapest).
    void aFamilyOrderIsAppliedStageByStage()
    {
        auto model = std::make_shared<Model>();
        MainWindow w(services(model));
        QVERIFY(w.openFile(example("transformer_fx.json")));
        const auto patterns = w.document()->history()->presetPatterns();
        const auto version = [&](const rewrite::TunePlan &p) {
            return ir::fingerprint(*rewrite::replayPlan(*w.graph(), patterns, p, true).graph);
        };
        std::set<std::string> used;
        for (const auto &step : rewrite::replayPlan(*w.graph(), patterns, {}, true).steps)
            for (const rewrite::Pattern *p : patterns)
                if (p->name == step.pattern)
                    used.insert(rewrite::patternFamily(*p));
        rewrite::TunePlan ordered;
        ordered.order.assign(used.begin(), used.end()); // the search tries the orders in this sequence
        while (version(ordered) == version({}) && std::next_permutation(ordered.order.begin(), ordered.order.end())) {
        }
        QVERIFY2(version(ordered) != version({}), "an order of the families gives another version than the greedy one");
        model->fixed[version(ordered)] = 0.3e-3;
        QVERIFY(tuneFromMenu(w));
        const rewrite::TuneResult *r = w.document()->tuning().result();
        QCOMPARE(r->best.order, ordered.order);
        QCOMPARE(size_t(w.debugger()->historySize()), r->steps.size());
        QCOMPARE(ir::fingerprint(*w.graph()), ir::fingerprint(*r->graph));
        QVERIFY(rows(w.debugger()->historyModel())[w.debugger()->historySize()].contains(QStringLiteral("measured ") +
                                                                                         TuneJob::msText(r->tuned.seconds)));
    }

    /// Stop ends the search after the measurement in progress, with the best version so far applied;
    /// meanwhile the progress row says what was measured.
    void stopEndsTheSearchEarlyWithAResult()
    {
        auto model = std::make_shared<Model>();
        model->holdAt = 6; // the original, the greedy version three times, then the search itself
        struct Release {
            Model &m;
            ~Release() { m.gate.release(100); } // a failing test must not leave the search held
        } release{*model};
        MainWindow w(services(model));
        QVERIFY(w.openFile(example("tangle4_fx.json")));
        w.setTunePrompt([](views::TuneSettings &) { return true; });
        QSignalSpy finished(&w.document()->tuning(), &TuneJob::finished);
        QVERIFY(w.tune());
        views::TuneProgressRow *row = w.debugger()->tuneRow();
        QTRY_VERIFY_WITH_TIMEOUT(row->text().contains(QStringLiteral("greedy")) && model->measured >= model->holdAt, 10000);
        QVERIFY(!row->isHidden());
        w.resize(1500, 950);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.debugger()->grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/tune_progress.png")));
        views::TuneDialog dialog(views::TuneSettings{}, &w);
        QVERIFY(dialog.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/tune_dialog.png")));
        QVERIFY(!action(w, "tune")->isEnabled()); // one search at a time
        QTest::mouseClick(row->stopButton(), Qt::LeftButton);
        model->gate.release();
        QVERIFY(finished.wait(10000));
        QVERIFY(finished.at(0).at(0).toBool());
        const rewrite::TuneResult *r = w.document()->tuning().result();
        QVERIFY(r && r->stopped);
        QCOMPARE(size_t(w.debugger()->historySize()), r->steps.size());
        QVERIFY(w.debugger()->status().contains(QStringLiteral("stopped")));
        QVERIFY(row->isHidden());
        QVERIFY(action(w, "tune")->isEnabled());

        // Unstopped, the same search measures more.
        auto full = std::make_shared<Model>();
        ModelCost cost(full);
        auto all = rewrite::tune(*w.document()->tuning().original(), w.document()->history()->presetPatterns(), cost);
        QVERIFY(all.trials.size() > r->trials.size());
    }

    /// The app's own cost model (the executor, AppServices.h) in builds with LibTorch: a real tune of
    /// tangle4 on this machine's device, with the weights beside the graph.
    void aRealTuneThroughTheAppsCostModel()
    {
        const views::Services app = testServices();
        if (!app.makeCostModel)
            QSKIP("this build has no LibTorch executor");
        MainWindow w(app);
        QVERIFY(w.openFile(example("tangle4_fx.json")));
        QVERIFY(tuneFromMenu(w, 30));
        const TuneJob &job = w.document()->tuning();
        QVERIFY(job.result());
        QVERIFY2(job.note().contains(QStringLiteral("cpu")) || job.note().contains(QStringLiteral("cuda")), qPrintable(job.note()));
        QVERIFY(job.result()->tuned.seconds <= job.result()->greedy.seconds);
        QCOMPARE(size_t(w.debugger()->historySize()), job.result()->steps.size());
        QCOMPARE(ir::fingerprint(*w.graph()), ir::fingerprint(*job.result()->graph));
        QVERIFY(rows(w.debugger()->historyModel())[0].contains(QStringLiteral("measured ")));
    }

    void tuneIsDisabledWithoutACostModel()
    {
        MainWindow w(test::sourceServices());
        QVERIFY(w.openFile(example("tangle4_fx.json")));
        QAction *tune = action(w, "tune");
        QVERIFY(tune && !tune->isEnabled());
        QVERIFY2(tune->toolTip().contains(QStringLiteral("cannot measure")), qPrintable(tune->toolTip()));
        QVERIFY(!action(w, "exportReport")->isEnabled());
        QVERIFY(!w.tune());
        QVERIFY(!w.document()->tuning().isRunning());
        // A run elsewhere in the menu enables the Rewrite actions again, but not this one.
        QVERIFY(!w.debugger()->run().isEmpty());
        QVERIFY(!tune->isEnabled());
    }

    void anotherFileStartsWithoutATuneResult()
    {
        auto model = std::make_shared<Model>();
        MainWindow w(services(model));
        QVERIFY(w.openFile(example("tangle4_fx.json")));
        QVERIFY(tuneFromMenu(w));
        QVERIFY(w.document()->tuning().result());
        QVERIFY(w.profilePanel()->chart()->trialCount() > 0);
        QVERIFY(w.openFile(example("tangle50_torch.json")));
        QVERIFY(!w.document()->tuning().result());
        QVERIFY(!action(w, "exportReport")->isEnabled());
        QCOMPARE(w.profilePanel()->chart()->trialCount(), 0);
        QVERIFY(rows(w.debugger()->historyModel()).filter(QStringLiteral("measured")).isEmpty());
        QVERIFY(!w.debugger()->status().contains(QStringLiteral("Tuned")));
    }
};

QTEST_MAIN(TestTuneView)
#include "tst_TuneView.moc"
