// SPDX-License-Identifier: MIT
// A compiled profile in the app (fxlens-cli profile --compiled: Inductor's kernels on the CPU,
// attributed to FX nodes by provenance) over the graph it was recorded on: the canvas outlines each
// kernel's group of nodes with its name and time, and selection goes both ways between kernels
// (timeline, kernel table, outlines) and nodes (canvas, inspector).
#include "GraphCanvas.h"
#include "KernelTableModel.h"
#include "KernelTimeline.h"
#include "MainWindow.h"
#include "ProfileChart.h"
#include "ProfilePanel.h"
#include "SourceServices.h"
#include "TimelinePane.h"

#include <QDir>
#include <QtTest>

#include <set>

using namespace fxlens;

namespace {

const char *kCompiled = FXLENS_TEST_DATA "/profile/compiled_transformer_cpu.json";

QStringList names(const views::KernelGroup &g)
{
    QStringList out;
    for (const ir::Node *n : g.nodes)
        out << QString::fromStdString(n->name());
    return out;
}

int groupNamed(const std::vector<views::KernelGroup> &groups, const QString &kernel)
{
    for (size_t g = 0; g < groups.size(); ++g)
        if (groups[g].name == kernel)
            return int(g);
    return -1;
}

/// The window with the transformer and its compiled profile open.
struct Opened : test::CompiledTransformer {
    Opened() : CompiledTransformer(QString::fromUtf8(kCompiled)) {}
};

} // namespace

class TestCompiledOverlay : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// One outline per kernel call of an iteration, around exactly the items of its nodes, each
    /// with its kernel's name and time; an eager view of another file drops them.
    void overlayGroups()
    {
        Opened o;
        auto *panel = o.w.profilePanel();
        QVERIFY(panel->bound());
        auto *canvas = o.w.canvas();
        const auto &groups = canvas->kernelGroups();
        QCOMPARE(groups.size(), size_t(8)); // 4 addmm, SDPA, 3 C++ kernels
        const int norm = groupNamed(groups, QStringLiteral("cpp_fused_add_native_layer_norm_view_0"));
        QVERIFY(norm >= 0);
        QCOMPARE(names(groups[size_t(norm)]), (QStringList{"linear_1", "add", "x"})); // the residual add fused into the norm
        QCOMPARE(names(groups[size_t(groupNamed(groups, QStringLiteral("cpp_fused_gelu_view_1")))]), (QStringList{"linear_2", "gelu"}));
        for (size_t g = 0; g < groups.size(); ++g) {
            const QRectF outline = canvas->kernelGroupRect(int(g));
            QVERIFY2(!outline.isEmpty(), qPrintable(groups[g].name));
            QVERIFY(groups[g].usPerIteration > 0);
            // Around its nodes' items; a collapsed module box among them stands for what it holds
            // (ringed only when the kernel has nothing else on screen).
            QRectF items, boxes;
            for (const ir::Node *n : groups[g].nodes) {
                const int i = canvas->itemOf(n);
                QVERIFY(i >= 0);
                const auto &it = canvas->view().items[size_t(i)];
                (it.kind == layout::ViewItem::Kind::Module ? boxes : items) |= QRectF(it.x, it.y, it.w, it.h);
            }
            QVERIFY2(outline.contains(items.isEmpty() ? boxes : items), qPrintable(groups[g].name));
            QVERIFY(outline.width() - (items | boxes).width() < 80); // around its items, not the graph
        }
        // Labels name the kernel and its time whole (a long name broken after a '_' onto lines
        // where the outline is narrow, not elided), and never overprint an item or each other.
        int labelled = 0;
        for (size_t g = 0; g < groups.size(); ++g) {
            const QRectF label = canvas->kernelLabelRect(int(g));
            if (label.isEmpty())
                continue;
            ++labelled;
            const QStringList lines = canvas->kernelLabelLines(int(g));
            QVERIFY2(lines.join(QString()) == views::groupLabel(groups[g]), qPrintable(lines.join(QLatin1Char('|'))));
            QVERIFY2(label.height() >= 10 * lines.size(), qPrintable(lines.join(QLatin1Char('|')))); // room for each line
            for (const auto &it : canvas->view().items)
                QVERIFY(!label.intersects(QRectF(it.x, it.y, it.w, it.h)));
            for (const auto &e : canvas->edgeLabels())
                QVERIFY(!label.intersects(e.rect));
            for (size_t h = g + 1; h < groups.size(); ++h)
                QVERIFY(!label.intersects(canvas->kernelLabelRect(int(h))));
        }
        QVERIFY2(labelled >= 6, qPrintable(QString::number(labelled)));
        QVERIFY(views::groupLabel(groups[size_t(norm)]).startsWith(QStringLiteral("cpp_fused_add_native_layer_norm_view_0 · ")));
        // Another graph: no outline stays from this one.
        QVERIFY(o.w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle50_torch.json")));
        QVERIFY(canvas->kernelGroups().empty());
    }

    /// A kernel picked on the timeline (or its outline clicked) emphasises its group and selects its
    /// node; a node picked lists the kernels that cover it, and one outside the group drops it.
    void selectionBothWays()
    {
        Opened o;
        auto *panel = o.w.profilePanel();
        auto *canvas = o.w.canvas();
        auto *timeline = panel->timeline();
        const prof::Profile *p = timeline->profile();
        QVERIFY(p && p->compiled());
        const auto &groups = canvas->kernelGroups();
        const int gelu = groupNamed(groups, QStringLiteral("cpp_fused_gelu_view_1"));
        QVERIFY(gelu >= 0);
        const int k = int(groups[size_t(gelu)].kernels.front());
        timeline->selectKernel(k);
        QCOMPARE(canvas->selectedKernelGroup(), gelu);
        QCOMPARE(canvas->selectedLabel(), QStringLiteral("gelu")); // its last node
        QCOMPARE(timeline->selectedKernel(), k);
        // The timeline labels it with its nodes, and its table row names them.
        QVERIFY(timeline->kernelDetails(k).contains(QStringLiteral("FX nodes <b>linear_2, gelu</b>")));
        auto *table = panel->timelinePane()->tableModel();
        QVERIFY(table->rowCount() > 0);
        for (int r = 0; r < table->rowCount(); ++r)
            QVERIFY(table->index(r, views::KernelTableModel::NodeCol).data().toString().contains(QStringLiteral("gelu")));
        // The other way: a node lists every kernel that covers it (the GEMM and the GELU for linear_2).
        QVERIFY(o.w.selectNode(QStringLiteral("linear_2")));
        QCOMPARE(canvas->selectedKernelGroup(), gelu); // linear_2 is in the selected kernel's group
        std::set<QString> kernels;
        for (int r = 0; r < table->rowCount(); ++r)
            kernels.insert(table->index(r, views::KernelTableModel::NameCol).data().toString());
        QCOMPARE(kernels, (std::set<QString>{"addmm", "cpp_fused_gelu_view_1"}));
        QCOMPARE(table->rowCount(), 2 * p->iterations);
        QVERIFY2(o.w.inspectorText().contains(QStringLiteral("cpp_fused_gelu_view_1")), qPrintable(o.w.inspectorText()));
        QVERIFY(o.w.selectNode(QStringLiteral("matmul"))); // no kernel covers it (SDPA took the attention)
        QCOMPARE(canvas->selectedKernelGroup(), -1);
        QCOMPARE(timeline->selectedKernel(), -1);
        // Clicking an outline's label selects its kernel.
        const int norm = groupNamed(groups, QStringLiteral("cpp_fused_add_native_layer_norm_view_0"));
        const QRectF label = canvas->kernelLabelRect(norm);
        QVERIFY(!label.isEmpty());
        canvas->setView(1.5, label.center());
        QCoreApplication::processEvents();
        QTest::mouseClick(canvas, Qt::LeftButton, {}, canvas->rect().center());
        QCOMPARE(canvas->selectedKernelGroup(), norm);
        QCOMPARE(timeline->selectedKernel(), int(groups[size_t(norm)].kernels.front()));
        QCOMPARE(canvas->selectedLabel(), QStringLiteral("x"));
    }

    /// The per-version chart: the compiled profile's bar beside the eager one of the same version
    /// (opened after it), with the figures of its summary; clicking it shows it.
    void chartCompiledBesideEager()
    {
        Opened o; // the compiled profile first, then the eager one
        auto *panel = o.w.profilePanel();
        QVERIFY(o.w.openProfile(QStringLiteral(FXLENS_TEST_DATA "/profile/eager_transformer_cpu.json")));
        auto *chart = panel->chart();
        QCOMPARE(chart->barCount(), 2);
        QVERIFY(!chart->compiled(0) && chart->compiled(1));
        QCOMPARE(chart->profileOf(0), 1); // the eager profile, opened second, comes first
        QCOMPARE(chart->profileOf(1), 0);
        QVERIFY2(chart->label(1).startsWith(QStringLiteral("inductor: transformer_dynamo")), qPrintable(chart->label(1)));
        auto r = prof::readProfile(kCompiled);
        QVERIFY(r.ok());
        QCOMPARE(chart->value(1, views::ProfileChart::Busy), r->summary.gpuBusyUs);
        QCOMPARE(chart->value(1, views::ProfileChart::Kernels), 8.0);
        QVERIFY(chart->value(0, views::ProfileChart::Kernels) > chart->value(1, views::ProfileChart::Kernels)); // fused
        panel->tabs()->setCurrentWidget(chart);
        o.w.showProfileDock();
        chart->resize(600, 400);
        QTest::mouseClick(chart, Qt::LeftButton, {}, chart->barRect(1, views::ProfileChart::Busy).center().toPoint());
        QCOMPARE(panel->shownIndex(), 0);
        QVERIFY(panel->profile()->compiled());
        QVERIFY(!o.w.canvas()->kernelGroups().empty());
        QTest::mouseClick(chart, Qt::LeftButton, {}, chart->barRect(0, views::ProfileChart::Busy).center().toPoint());
        QCOMPARE(panel->shownIndex(), 1);
        QVERIFY(o.w.canvas()->kernelGroups().empty()); // an eager profile outlines no kernels
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(chart->grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/compiled_versions_chart.png")));
    }

    /// The encoder layer with its Inductor kernels outlined (docs/screenshots/compiled_overlay_cpu.png).
    void screenshot()
    {
        Opened o;
        o.w.resize(1600, 1500); // the whole layer at a scale where the labels read
        QCoreApplication::processEvents();
        auto *canvas = o.w.canvas();
        QRectF all;
        for (size_t g = 0; g < canvas->kernelGroups().size(); ++g)
            all = all.united(canvas->kernelGroupRect(int(g))).united(canvas->kernelLabelRect(int(g)));
        o.w.profilePanel()->selectKernelGroup(groupNamed(canvas->kernelGroups(), QStringLiteral("cpp_fused_gelu_view_1")));
        canvas->setView(std::min(canvas->width() / all.width(), canvas->height() / all.height()) * 0.97, all.center());
        QCoreApplication::processEvents();
        QVERIFY2(canvas->scale() >= 0.7, qPrintable(QString::number(canvas->scale()))); // labels are drawn
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(o.w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/compiled_overlay_cpu.png")));
        // The timeline of the same profile: kernels labelled with their FX nodes.
        auto *panel = o.w.profilePanel();
        panel->tabs()->setCurrentWidget(panel->timelinePane());
        o.w.showProfileDock();
        QCoreApplication::processEvents();
        QVERIFY(o.w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/compiled_timeline_cpu.png")));
    }
};

QTEST_MAIN(TestCompiledOverlay)
#include "tst_CompiledOverlay.moc"
