// SPDX-License-Identifier: MIT
// Profiles in the app: bound to the versions they were recorded on (the bundled H200 recording of
// tangle200 binds to versions 0, 607 and 1214 of the app's own history), the kernel timeline on
// that recording (tracks, nesting, kernel counts, folding, picking), the selection link between
// timeline and canvas both ways, the per-version chart against the CLI's figures for the same
// file, and the profiling job (versions copied, progress, cancel, results bound and saved with
// the document), with a stand-in profiler and, in builds with LibTorch, the real one.
#include "GraphCanvas.h"
#include "GraphDocument.h"
#include "KernelTimeline.h"
#include "MainWindow.h"
#include "ProfileChart.h"
#include "ProfilePanel.h"
#include "ProfileStore.h"
#include "ProfilingJob.h"
#include "TestServices.h"
#include "TimelinePane.h"
#include "ir/GraphInfo.h"

#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <map>

using namespace fxlens;
using views::GraphDocument;
using views::KernelTimeline;
using views::ProfileChart;

namespace {

const char *kTangle200 = FXLENS_EXAMPLES "/tangle200_aten.json.gz";
const char *kRecording = FXLENS_EXAMPLES "/tangle200_aten.fxprof.json.gz";

views::Services services(views::ProfileService profile = {})
{
    views::Services s;
    s.patternDir = FXLENS_PATTERN_SOURCE_DIR;
    s.profile = std::move(profile);
    return s;
}

/// "4.332 ms" / "369.2 us" / "1.2 s" -> microseconds.
double micros(const QString &text)
{
    const QStringList parts = text.split(QLatin1Char(' '));
    const double v = parts.value(0).toDouble();
    const QString unit = parts.value(1);
    return unit == QLatin1String("s") ? v * 1e6 : unit == QLatin1String("ms") ? v * 1e3 : v;
}

} // namespace

class TestProfiling : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// The bundled recording binds by fingerprint to the versions of the app's own history it was
    /// recorded on (the CLI's greedy run and the app's are the same), and to nothing else.
    void bundledRecordingBindsToItsVersions()
    {
        GraphDocument doc(services());
        QString error;
        QVERIFY2(doc.open(QString::fromUtf8(kTangle200), &error), qPrintable(error));
        QVERIFY2(doc.profiles().loadError().isEmpty(), qPrintable(doc.profiles().loadError()));
        QCOMPARE(doc.profiles().size(), size_t(3)); // loaded from beside the graph
        QCOMPARE(doc.profiles().current(), 0);      // "original" is version 0
        QCOMPARE(QString::fromStdString(doc.profiles()[0].profile->version), QStringLiteral("original"));
        QVERIFY(doc.profiles()[1].versionId == 0 && doc.profiles()[2].versionId == 0); // not reached yet
        auto *h = doc.history();
        h->run();
        QCOMPARE(h->version(), 1214);
        QCOMPARE(doc.profiles().current(), 2); // the fixpoint's profile, bound when the version came on screen
        QVERIFY(h->checkout(607));
        QCOMPARE(doc.profiles().current(), 1);
        QVERIFY(h->checkout(606));
        QCOMPARE(doc.profiles().current(), -1); // a version nobody profiled
        QVERIFY(doc.profiles().boundText(1).contains(QStringLiteral("version 607")));
    }

    /// Tracks, nesting and kernel counts of the H200 recording; sub-pixel kernels fold at fit and
    /// unfold when zoomed; a kernel is picked where it is drawn.
    void timelineOnH200Recording()
    {
        auto set = prof::readProfiles(kRecording);
        QVERIFY2(set.ok(), set.ok() ? "" : set.error().toString().c_str());
        auto p = std::make_shared<const prof::Profile>(std::move(set.value().front()));
        QCOMPARE(p->deviceName, std::string("NVIDIA H200"));
        KernelTimeline t;
        t.resize(1200, 300);
        t.setProfile(p);
        const auto &tracks = t.tracks();
        QVERIFY(tracks.size() >= 3);
        QCOMPARE(tracks[0].kind, KernelTimeline::Track::Kind::Iterations);
        QCOMPARE(tracks[0].events.size(), size_t(p->iterations));
        QCOMPARE(tracks[1].kind, KernelTimeline::Track::Kind::NodeRanges);
        QCOMPARE(tracks[1].depth, 1); // nested under the iterations
        size_t onDevice = 0;
        for (const auto &tr : tracks)
            if (tr.kind == KernelTimeline::Track::Kind::Device) {
                QVERIFY(tr.name.startsWith(QStringLiteral("cuda:0 stream ")));
                onDevice += tr.events.size();
            }
        QCOMPARE(onDevice, p->kernels.size());
        // Kernels per iteration on the timeline are the profile's (2202 for tangle200 on the H200).
        std::map<int, int> perIteration;
        for (const auto &k : p->kernels)
            ++perIteration[k.iteration];
        QCOMPARE(int(perIteration.size()), p->iterations);
        for (const auto &[it, n] : perIteration)
            QCOMPARE(double(n), p->summary.kernelsPerIter);
        QCOMPARE(p->summary.kernelsPerIter, 2202.0);
        // Nesting: every node range lies inside its iteration's range.
        for (const auto &r : p->ranges) {
            const auto &it = p->iters[size_t(r.iteration)];
            QVERIFY(r.startUs >= it.startUs - 1e-3 && r.startUs + r.durUs <= it.startUs + std::max(it.cpuUs, it.wallUs) + 1e-3);
        }
        // At fit, 11k kernels in ~1000 px: folded, far fewer blocks than events.
        t.grab();
        QVERIFY2(t.lastFolds() > 0 && t.lastBlocks() < p->kernels.size() / 4,
                 qPrintable(QStringLiteral("%1 blocks, %2 folds").arg(t.lastBlocks()).arg(t.lastFolds())));
        // Zoomed onto one kernel of the second iteration: drawn, picked where it is drawn.
        int k = -1;
        for (size_t i = 0; i < p->kernels.size(); ++i)
            if (p->kernels[i].iteration == 1 && p->kernels[i].node >= 0 && p->kernels[i].durUs > 2) {
                k = int(i);
                break;
            }
        QVERIFY(k >= 0);
        t.setView(p->kernels[size_t(k)].startUs - 20, 0.05);
        t.grab();
        const QRectF r = t.kernelRect(k);
        QVERIFY(r.width() > 20);
        const auto [track, picked] = t.eventAt(r.center().toPoint());
        QVERIFY(track >= 0);
        QCOMPARE(picked, k);
        QVERIFY(t.kernelDetails(k).contains(QString::fromStdString(p->nodes[size_t(p->kernels[size_t(k)].node)].name)));
        QVERIFY(t.kernelDetails(k).contains(QStringLiteral("grid (")));
        // Keys zoom and pan; Home fits again.
        const double scale = t.usPerPixel();
        QTest::keyClick(&t, Qt::Key_W);
        QVERIFY(t.usPerPixel() < scale);
        const double start = t.viewStart();
        QTest::keyClick(&t, Qt::Key_D);
        QVERIFY(t.viewStart() > start);
        QTest::keyClick(&t, Qt::Key_Home);
        QVERIFY(t.usPerPixel() > scale * 100);
    }

    /// Clicking a kernel selects its FX node (table, canvas, inspector); selecting a node
    /// highlights its kernels and ranges on the timeline.
    void selectionLinkBothWays()
    {
        views::MainWindow w(services());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(QString::fromUtf8(kTangle200)));
        auto *panel = w.profilePanel();
        QVERIFY(panel->bound());
        auto *timeline = panel->timeline();
        const prof::Profile *p = timeline->profile();
        QVERIFY(p);
        int k = -1;
        for (size_t i = 0; i < p->kernels.size(); ++i)
            if (p->kernels[i].node >= 0 && p->nodes[size_t(p->kernels[i].node)].op == "call_function") {
                k = int(i);
                break;
            }
        QVERIFY(k >= 0);
        const QString node = QString::fromStdString(p->nodes[size_t(p->kernels[size_t(k)].node)].name);
        timeline->selectKernel(k);
        QVERIFY2(w.inspectorText().startsWith(node), qPrintable(w.inspectorText().left(80)));
        QCOMPARE(w.canvas()->selectedLabel(), node);
        QCOMPARE(timeline->selectedKernel(), k); // still selected: it is its node's kernel
        // The other way: a node selected on the canvas side highlights its kernels.
        QString other;
        for (const auto &n : p->nodes)
            if (n.target == "aten.addmm.default" && QString::fromStdString(n.name) != node) {
                other = QString::fromStdString(n.name);
                break;
            }
        QVERIFY(w.selectNode(other));
        QCOMPARE(QString::fromStdString(p->nodes[size_t(timeline->selectedNode())].name), other);
        QCOMPARE(timeline->selectedKernel(), -1);
        size_t expected = 0;
        for (const auto &kr : p->kernels)
            expected += kr.node == timeline->selectedNode();
        QCOMPARE(timeline->highlightedKernels(), expected);
        QVERIFY(expected >= size_t(p->iterations)); // an addmm launches a kernel every iteration
        // Screenshot: the timeline with the kernel selected and its node.
        timeline->selectKernel(k);
        panel->tabs()->setCurrentWidget(panel->timelinePane());
        w.showProfileDock();
        QCoreApplication::processEvents();
        timeline->showKernel(k);
        QVERIFY(!timeline->kernelRect(k).isEmpty() && timeline->kernelRect(k).right() < timeline->width());
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/profile_timeline.png")));
        panel->tabs()->setCurrentWidget(panel->chart());
        QVERIFY(w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/profile_versions.png")));
    }

    /// The per-version chart shows the figures `fxlens-cli profile` prints for the same file.
    void chartEqualsCli()
    {
        GraphDocument doc(services());
        views::ProfilePanel panel(doc);
        QVERIFY(panel.openProfile(QString::fromUtf8(kRecording)));
        ProfileChart *chart = panel.chart();
        QCOMPARE(chart->barCount(), 3);
        QProcess cli;
        cli.start(QStringLiteral(FXLENS_CLI), {QStringLiteral("profile"), QString::fromUtf8(kRecording)});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        const QString out = QString::fromUtf8(cli.readAllStandardOutput());
        // The per-version table: version, nodes, kernels, GPU busy, wall, CPU launch, peak mem.
        const QString table = out.mid(out.lastIndexOf(QStringLiteral("\nversion ")) + 1);
        const QStringList rows = table.split(QLatin1Char('\n'), Qt::SkipEmptyParts).mid(1);
        QCOMPARE(rows.size(), 3);
        const QRegularExpression row(QStringLiteral("^(.*\\S)\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+ (?:us|ms|s))\\s+([\\d.]+ (?:us|ms|s))\\s+"
                                                    "([\\d.]+ (?:us|ms|s))\\s+([\\d.]+) MiB$"));
        for (int i = 0; i < 3; ++i) {
            const auto m = row.match(rows[i]);
            QVERIFY2(m.hasMatch(), qPrintable(rows[i]));
            QVERIFY(chart->label(i).startsWith(m.captured(1).left(20)));
            QCOMPARE(chart->value(i, ProfileChart::Kernels), m.captured(3).toDouble());
            // The CLI rounds to 3 significant places of its unit.
            QVERIFY(std::fabs(chart->value(i, ProfileChart::Busy) - micros(m.captured(4))) <= 0.6);
            QVERIFY(std::fabs(chart->value(i, ProfileChart::Wall) - micros(m.captured(5))) <= 0.6);
            QVERIFY(std::fabs(chart->value(i, ProfileChart::PeakMemory) / (1 << 20) - m.captured(7).toDouble()) <= 0.006);
        }
        // The fixpoint runs 2202 / 17 ≈ 130× fewer kernels: the bars say so.
        chart->resize(600, 400);
        QVERIFY(chart->barRect(2, ProfileChart::Kernels).height() * 100 < chart->barRect(0, ProfileChart::Kernels).height());
        // Clicking a bar shows that version; Shift+click compares with it.
        QTest::mouseClick(chart, Qt::LeftButton, {}, chart->barRect(1, ProfileChart::Wall).center().toPoint());
        QCOMPARE(panel.shownIndex(), 1);
        QTest::mouseClick(chart, Qt::LeftButton, Qt::ShiftModifier, chart->barRect(2, ProfileChart::Wall).center().toPoint());
        QVERIFY(panel.comparison() == doc.profiles()[2].profile.get());
        QVERIFY2(panel.summary().contains(QStringLiteral("B vs A")) && panel.summary().contains(QStringLiteral("× fewer kernels")),
                 qPrintable(panel.summary()));
    }

    /// A version slower than the original is marked in the chart: step 607's wall time (41.18 ms
    /// against 39.87 ms) is outlined and its value drawn red with ▲, and its tooltip says by how much;
    /// the original and the faster fixpoint are not marked. A higher peak memory is marked alike.
    void chartMarksSlowerVersions()
    {
        GraphDocument doc(services());
        views::ProfilePanel panel(doc);
        QVERIFY(panel.openProfile(QString::fromUtf8(kRecording)));
        ProfileChart *chart = panel.chart();
        QCOMPARE(chart->barCount(), 3);
        QCOMPARE(chart->referenceBar(), 0);
        QVERIFY(chart->value(1, ProfileChart::Wall) > chart->value(0, ProfileChart::Wall));
        QVERIFY2(chart->slowerText(1, ProfileChart::Wall).contains(QStringLiteral("% slower than the original")),
                 qPrintable(chart->slowerText(1, ProfileChart::Wall)));
        for (int b : {0, 2})
            QVERIFY(chart->slowerText(b, ProfileChart::Wall).isEmpty() && chart->slowerText(b, ProfileChart::Busy).isEmpty());
        QVERIFY(chart->slowerText(1, ProfileChart::Busy).isEmpty()); // its GPU busy time fell
        chart->resize(600, 400);
        const QImage img = chart->grab().toImage();
        auto redAbove = [&](int bar, ProfileChart::Metric m) { // the bar's value label and outline
            const QRect r = chart->barRect(bar, m).toAlignedRect().adjusted(-8, -14, 8, 0);
            int red = 0;
            for (int y = r.top(); y <= r.bottom(); ++y)
                for (int x = r.left(); x <= r.right(); ++x) {
                    const QColor c = img.pixelColor(x, y);
                    red += c.red() > 150 && c.green() < 90 && c.blue() < 90;
                }
            return red;
        };
        QVERIFY(redAbove(1, ProfileChart::Wall) > 20);
        QCOMPARE(redAbove(0, ProfileChart::Wall), 0);
        QCOMPARE(redAbove(2, ProfileChart::Wall), 0);
        QCOMPARE(chart->worseText(ProfileChart::Wall), QStringLiteral("▲ 1 slower than the original"));
        // A higher peak memory than the original's is marked the same way.
        int higher = -1;
        for (int b : {1, 2})
            if (chart->value(b, ProfileChart::PeakMemory) > 1.01 * chart->value(0, ProfileChart::PeakMemory))
                higher = b;
        QVERIFY(higher > 0);
        QVERIFY2(chart->slowerText(higher, ProfileChart::PeakMemory).contains(QStringLiteral("% more peak memory than the original")),
                 qPrintable(chart->slowerText(higher, ProfileChart::PeakMemory)));
        QCOMPARE(chart->worseText(ProfileChart::PeakMemory), QStringLiteral("▲ 1 higher than the original"));
        QVERIFY(redAbove(higher, ProfileChart::PeakMemory) > 20);
        QCOMPARE(redAbove(0, ProfileChart::PeakMemory), 0);
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(img.save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/versions_chart_slower.png")));
    }

    /// The profiling job with a stand-in profiler: it gets a copy of each version asked for, says
    /// how far it got, stops when cancelled, and its results are bound to their versions, marked
    /// unsaved, saved beside the graph and bound again when the graph is opened.
    void profilingJob()
    {
        std::map<std::string, int> seen; // fingerprint -> version id the job was given
        std::atomic<int> calls{0};
        std::atomic<bool> hold{false}; // the job waits on its first version until it is cancelled
        auto fake = [&](const views::ProfileRequest &r, const std::function<bool(size_t, size_t)> &progress) {
            views::ProfileOutcome out;
            out.device = "test";
            for (size_t i = 0; i < r.graphs.size(); ++i) {
                for (int wait = 0; hold && wait < 2000 && progress(i, r.graphs.size()); ++wait)
                    QThread::msleep(5);
                if (!progress(i, r.graphs.size())) {
                    out.cancelled = true;
                    return out;
                }
                ++calls;
                prof::Profile p;
                p.mode = "cpu";
                p.iterations = 1;
                p.version = r.labels[i];
                p.versionId = r.versionIds[i];
                p.graphHash = ir::fingerprintHex(*r.graphs[i]);
                for (const ir::Node *n = r.graphs[i]->first(); n; n = n->next())
                    p.nodes.push_back({n->name(), ir::opKindName(n->op()), n->target(), {}});
                p.iters.push_back({0, 0, 10, 10, 0, 0});
                p.finish();
                seen[p.graphHash] = r.versionIds[i];
                out.profiles.push_back(std::move(p));
            }
            progress(r.graphs.size(), r.graphs.size());
            return out;
        };
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("t4.json"));
        QVERIFY(QFile::copy(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), file));
        GraphDocument doc(services(fake));
        views::ProfilePanel panel(doc);
        QString error;
        QVERIFY(doc.open(file, &error));
        auto *h = doc.history();
        std::vector<std::string> prints{ir::fingerprintHex(*doc.graph())};
        for (int i = 0; i < 3; ++i) {
            QVERIFY(h->apply(h->stableCandidates(1).front()));
            prints.push_back(ir::fingerprintHex(*doc.graph()));
        }
        doc.setModified(false);
        QSignalSpy progress(&doc.profiling(), &views::ProfilingJob::progress), finished(&doc.profiling(), &views::ProfilingJob::finished);
        QVERIFY(panel.profileVersions(QStringLiteral("0,2,last")));
        QVERIFY(!panel.profileVersions(QStringLiteral("current"))); // one job at a time
        QVERIFY(finished.wait(20000));
        QCOMPARE(finished.at(0).at(0).toInt(), 3);
        QVERIFY(progress.size() >= 2);
        QCOMPARE(h->version(), 3);                             // the history is back where it was
        QCOMPARE(ir::fingerprintHex(*doc.graph()), prints[3]); // and so is the graph
        for (int v : {0, 2, 3})
            QCOMPARE(seen[prints[size_t(v)]], v); // each version's own graph went to the profiler
        QCOMPARE(doc.profiles().current(), 2);    // "last" is on screen
        QVERIFY(doc.isModified());                // profiles are saved with the document
        QVERIFY(h->checkout(2));
        QCOMPARE(doc.profiles().current(), 1);
        QVERIFY(h->checkout(1));
        QCOMPARE(doc.profiles().current(), -1);
        // Saved beside the graph; reopened, version 0's binds again.
        QVERIFY(h->checkout(0));
        QVERIFY(doc.save(file, &error));
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("t4.fxprof.json.gz"))));
        QVERIFY(doc.open(file, &error));
        QCOMPARE(doc.profiles().size(), size_t(3));
        QCOMPARE(doc.profiles().current(), 0);
        // Cancel: stops after the version in progress (here: before the first).
        calls = 0;
        hold = true;
        QSignalSpy finished2(&doc.profiling(), &views::ProfilingJob::finished);
        QVERIFY(doc.profiling().start({0, 0, 0}, {}, &error));
        QTest::qWait(50);
        doc.profiling().cancel();
        QVERIFY(finished2.wait(20000));
        QVERIFY2(finished2.at(0).at(1).toString().contains(QStringLiteral("cancelled")), qPrintable(finished2.at(0).at(1).toString()));
        QCOMPARE(int(calls), 0);
        hold = false;
        // Without a profiler in the build: refused with why.
        GraphDocument none(services());
        QVERIFY(none.open(file, &error));
        QVERIFY(!none.profiling().start({0}, {}, &error));
        QVERIFY(error.contains(QStringLiteral("cannot run graphs")));
    }

    /// The app's profiler (exec::profileVersions, as fxlens-cli profile) on this machine's device:
    /// three versions of tangle4, each bound to its version; on a machine without a GPU the CPU
    /// profile says so.
    void profileThisMachine()
    {
        views::Services s = testServices();
        if (!s.profile)
            QSKIP("this build has no LibTorch executor");
        GraphDocument doc(s);
        views::ProfilePanel panel(doc);
        QString error;
        QVERIFY(doc.open(QStringLiteral(FXLENS_EXAMPLES "/tangle4_fx.json"), &error));
        auto *h = doc.history();
        QVERIFY(h->apply(h->stableCandidates(1).front()));
        QVERIFY(h->apply(h->stableCandidates(1).front()));
        QSignalSpy finished(&doc.profiling(), &views::ProfilingJob::finished);
        QVERIFY2(panel.profileVersions(QStringLiteral("all")), qPrintable(panel.status()));
        QVERIFY(finished.wait(120000));
        QVERIFY2(finished.at(0).at(2).toBool(), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(doc.profiles().size(), size_t(3));
        const bool cpu = doc.profiles()[0].profile->mode == "cpu";
        if (cpu)
            QVERIFY2(finished.at(0).at(1).toString().contains(QStringLiteral("CPU")), qPrintable(finished.at(0).at(1).toString()));
        QCOMPARE(doc.profiles().current(), 2);
        QVERIFY(panel.bound() && panel.profile()->summary.kernelsPerIter > 0);
        QCOMPARE(panel.chart()->barCount(), 3);
        QVERIFY(h->checkout(0));
        QCOMPARE(doc.profiles().current(), 0);
        QCOMPARE(panel.profile()->version, std::string("original"));
    }
};

QTEST_MAIN(TestProfiling)
#include "tst_Profiling.moc"
