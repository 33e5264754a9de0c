// SPDX-License-Identifier: MIT
// A compiled profile's post-grad graph as a linked view (View ▸ Post-grad Graph): it opens fitted
// beside the canvas with the kernels outlined on their post-grad nodes, and selection moves both
// ways by Inductor's provenance; without its file the action is disabled and says why.
#include "GraphCanvas.h"
#include "KernelTimeline.h"
#include "MainWindow.h"
#include "PostGradView.h"
#include "ProfilePanel.h"
#include "Selection.h"
#include "SourceServices.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

using namespace fxlens;

namespace {

const char *kGraph = FXLENS_EXAMPLES "/transformer_dynamo.json";
const char *kCompiled = FXLENS_TEST_DATA "/profile/compiled_post_grad_cpu.json";

QAction *postGradAction(views::MainWindow &w) { return w.findChild<QAction *>(QStringLiteral("postGradGraph")); }

std::set<QString> names(const std::vector<const ir::Node *> &nodes)
{
    std::set<QString> out;
    for (const ir::Node *n : nodes)
        out.insert(QString::fromStdString(n->name()));
    return out;
}

/// The items of these nodes all drawn inside the canvas.
bool allInView(const views::GraphCanvas &c, const std::vector<const ir::Node *> &nodes)
{
    for (const ir::Node *n : nodes) {
        const int i = c.itemOf(n);
        if (i < 0 || !QRectF(c.rect()).contains(c.itemRect(i)))
            return false;
    }
    return !nodes.empty();
}

/// A scene rectangle where the canvas draws it (widget coordinates), by way of item 0.
QRectF onScreen(const views::GraphCanvas &c, const QRectF &scene)
{
    const auto &it = c.view().items.front();
    const QPointF offset = c.itemRect(0).topLeft() - QPointF(it.x, it.y) * c.scale();
    return QRectF(scene.topLeft() * c.scale() + offset, scene.size() * c.scale());
}

/// What the canvas shows cut by an edge of its drawing area: node items (their labels) and the
/// kernel labels it draws (their text).
QStringList cutAtEdges(const views::GraphCanvas &c)
{
    const QRectF vp = c.sceneViewport();
    QStringList cut;
    for (size_t i = 0; i < c.view().items.size(); ++i)
        if (const QRectF r = c.itemRect(int(i)); r.intersects(vp) && !vp.contains(r))
            cut << QString::fromStdString(c.view().items[i].label);
    for (size_t g = 0; g < c.kernelGroups().size() && c.kernelLabelsDrawn(); ++g)
        if (const QRectF r = onScreen(c, c.kernelLabelRect(int(g))); !r.isEmpty() && r.intersects(vp) && !vp.contains(r))
            cut << c.kernelLabelLines(int(g)).join(QString());
    return cut;
}

/// The kernel groups whose label does not name the kernel whole (elided, or with no place).
QStringList unnamedKernels(const views::GraphCanvas &c)
{
    QStringList out;
    for (size_t g = 0; g < c.kernelGroups().size(); ++g)
        if (!c.kernelGroupRect(int(g)).isEmpty() && c.kernelLabelLines(int(g)).join(QString()) != views::groupLabel(c.kernelGroups()[g]))
            out << c.kernelGroups()[g].name + QStringLiteral(": ") + c.kernelLabelLines(int(g)).join(QLatin1Char('|'));
    return out;
}

/// The separate parts of an outline as drawn: its rings that are not holes in another.
int parts(const QPainterPath &outline)
{
    const QList<QPolygonF> rings = outline.toSubpathPolygons();
    int out = 0;
    for (const QPolygonF &ring : rings)
        out +=
            std::count_if(rings.begin(), rings.end(),
                          [&](const QPolygonF &other) { return &other != &ring && other.containsPoint(ring.front(), Qt::OddEvenFill); }) %
                2 ==
            0;
    return out;
}

/// What is wrong with canvas `c`'s kernel outlines as a reader takes them ("" when nothing): an
/// outline drawn around the item of a node its kernel does not cover, an item inside two outlines
/// (a kernel drawn inside another's), a kernel drawn in several parts (`onePart`).
QString misleadingOutlines(const views::GraphCanvas &c, bool onePart)
{
    const auto &groups = c.kernelGroups();
    std::vector<int> inside(c.view().items.size(), 0);
    for (size_t g = 0; g < groups.size(); ++g) {
        const QPainterPath outline = c.kernelOutline(int(g));
        if (outline.isEmpty())
            continue;
        std::set<int> members;
        for (const ir::Node *n : groups[g].nodes)
            members.insert(c.itemOf(n));
        if (onePart && parts(outline) != 1)
            return QStringLiteral("%1 drawn in %2 parts").arg(groups[g].name).arg(parts(outline));
        for (size_t i = 0; i < c.view().items.size(); ++i) {
            const auto &it = c.view().items[i];
            if (!outline.contains(QRectF(it.x, it.y, it.w, it.h).center()))
                continue;
            if (!members.count(int(i)))
                return QStringLiteral("%1 drawn around %2").arg(groups[g].name, QString::fromStdString(it.label));
            if (++inside[i] > 1)
                return QStringLiteral("%1 inside two outlines (%2's one)").arg(QString::fromStdString(it.label), groups[g].name);
        }
    }
    return {};
}

/// The window with the transformer and a compiled profile of it open.
struct Opened : test::CompiledTransformer {
    explicit Opened(const QString &profile = QString::fromUtf8(kCompiled), QSize size = QSize(1400, 900))
        : CompiledTransformer(profile, size)
    {
    }
};

} // namespace

class TestPostGradView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// View ▸ Post-grad Graph opens Inductor's graph beside the canvas on the post-grad nodes of
    /// the selection, at a readable zoom, its kernels outlined on their post-grad nodes.
    void opensFitted()
    {
        views::MainWindow bare{test::sourceServices()};
        QVERIFY(bare.openFile(QString::fromUtf8(kGraph)));
        QVERIFY(!postGradAction(bare)->isEnabled()); // no compiled profile yet
        QVERIFY2(postGradAction(bare)->toolTip().contains(QStringLiteral("compiled profile")), qPrintable(postGradAction(bare)->toolTip()));
        Opened o;
        QVERIFY(o.w.selectNode(QStringLiteral("gelu"))); // selected before the view opens
        QAction *act = postGradAction(o.w);
        QVERIFY2(act->isEnabled(), qPrintable(act->toolTip()));
        act->trigger();
        views::PostGradView *view = o.w.postGradView();
        QVERIFY(view && view->isVisible());
        QCoreApplication::processEvents(); // the dock laid out at its size
        auto *canvas = view->canvas();
        // The selection is outlined at once, on the whole graph.
        QCOMPARE(names(view->linked()), (std::set<QString>{"mul_2", "mul_3", "erf", "add_3", "mul_4"}));
        QVERIFY(canvas->highlightOf(canvas->itemOf(view->linked().front())) > 0);
        QVERIFY2(view->caption().contains(QStringLiteral("69 nodes")) && view->caption().contains(QStringLiteral("erf")),
                 qPrintable(view->caption()));
        QVERIFY(o.w.canvas()->width() > 250); // the FX graph keeps room beside it
        QVERIFY(canvas->width() > 300 && canvas->height() > 500);
        QCOMPARE(view->graph().size(), size_t(69));
        QCOMPARE(canvas->graph(), &view->graph());
        // Readable at first sight: the post-grad nodes of the selection in view, at a zoom where
        // their names can be read (not the 69 nodes whole at a few pixels a box).
        QVERIFY(allInView(*canvas, view->linked()));
        QVERIFY2(canvas->scale() >= 0.6, qPrintable(QString::number(canvas->scale())));
        // The GELU's kernel outlined around its post-grad nodes.
        const auto &groups = canvas->kernelGroups();
        const auto gelu = std::find_if(groups.begin(), groups.end(), [](const auto &g) { return g.name == "cpp_fused_gelu_view_1"; });
        QVERIFY(gelu != groups.end());
        QCOMPARE(names(gelu->nodes), (std::set<QString>{"view_15", "mul_2", "mul_3", "erf", "add_3", "mul_4"}));
        QVERIFY(!canvas->kernelGroupRect(int(gelu - groups.begin())).isEmpty());
        // Another graph: the view of this one's profile closes.
        QVERIFY(o.w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle50_torch.json")));
        QVERIFY(!o.w.postGradView());
        QVERIFY(!act->isEnabled());
    }

    /// With nothing selected the view opens fitted but readable (the 69 nodes are too tall for
    /// that: its start, the first row from the left, in view), and the FX canvas, narrower now,
    /// shows its selection again: not cut at its right edge.
    void opensReadableAndRefitsTheCanvas()
    {
        Opened o;
        auto *main = o.w.canvas();
        // The first candidate (h) is selected on the canvas as the file opens; nothing is in the
        // window's selection now.
        o.w.selection()->setCurrentNode(nullptr, nullptr);
        QVERIFY(o.w.openPostGrad());
        QCoreApplication::processEvents(); // the dock laid out at its size
        auto *canvas = o.w.postGradView()->canvas();
        QVERIFY(canvas->scale() >= 0.6);
        double top = 1e9;
        for (const auto &it : canvas->view().items)
            top = std::min(top, it.y);
        for (size_t i = 0; i < canvas->view().items.size(); ++i) {
            const QRectF r = canvas->itemRect(int(i));
            QVERIFY2(r.left() >= 0, canvas->view().items[i].label.c_str());     // from its left end
            if (canvas->view().items[i].y == top && r.left() < canvas->width()) // the first row
                QVERIFY2(r.top() >= 0 && r.bottom() <= canvas->height(), canvas->view().items[i].label.c_str());
        }
        QVERIFY2(cutAtEdges(*canvas).isEmpty(), qPrintable(cutAtEdges(*canvas).join(QStringLiteral(", "))));
        // The FX canvas, narrower now, shows its selected node whole again (it was centred in the
        // wider canvas, now past its right edge).
        QCOMPARE(main->selectedLabel(), QStringLiteral("h"));
        const QRectF h = main->itemRect(main->itemOf(o.w.selection()->find(QStringLiteral("h"))));
        QVERIFY2(QRectF(main->sceneViewport()).contains(h),
                 qPrintable(QStringLiteral("%1,%2 in %3").arg(h.left()).arg(h.right()).arg(main->width())));
    }

    /// The dock opened at the window's size with the first candidate (h) selected: at first sight
    /// neither the dock's canvas nor the FX canvas beside it cuts a node or a kernel label at an
    /// edge, both at a readable zoom with the selection (and its post-grad nodes) whole, and the
    /// kernel labels name their kernels whole (broken onto lines where the outline is narrow).
    void firstSightCutsNothing()
    {
        Opened o(QString::fromUtf8(kCompiled), QSize(1600, 1000));
        QCOMPARE(o.w.selection()->currentNode(), QStringLiteral("h"));
        QVERIFY(o.w.openPostGrad());
        QCoreApplication::processEvents(); // the docks laid out at their sizes, the FX canvas refitted
        auto *view = o.w.postGradView();
        auto *canvas = view->canvas(), *main = o.w.canvas();
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(o.w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/compiled_post_grad_open.png")));
        QCOMPARE(names(view->linked()), (std::set<QString>{"permute_5", "view_11"}));
        QVERIFY(allInView(*canvas, view->linked()));
        QVERIFY2(canvas->scale() >= 0.6, qPrintable(QString::number(canvas->scale())));
        QVERIFY2(cutAtEdges(*canvas).isEmpty(), qPrintable(cutAtEdges(*canvas).join(QStringLiteral(", "))));
        QVERIFY(QRectF(main->sceneViewport()).contains(main->itemRect(main->itemOf(o.w.selection()->find(QStringLiteral("h"))))));
        QVERIFY2(main->scale() >= views::GraphCanvas::kLandScale, qPrintable(QString::number(main->scale())));
        QVERIFY2(cutAtEdges(*main).isEmpty(), qPrintable(cutAtEdges(*main).join(QStringLiteral(", "))));
        for (const views::GraphCanvas *c : {canvas, main}) {
            QVERIFY(c->kernelLabelsDrawn());
            QVERIFY2(unnamedKernels(*c).isEmpty(), qPrintable(unnamedKernels(*c).join(QStringLiteral("; "))));
        }
    }

    /// Each kernel is one outline around the nodes it covers: in the post-grad view one outline
    /// for each kernel (var_mean's layer norm a single outline round its nine nodes, not a ring
    /// each), labelled once; on either canvas no outline around a node its kernel does not cover,
    /// and no node inside two outlines (the output projection's GEMM is not drawn inside the layer
    /// norm kernel that takes its output).
    void oneOutlinePerKernel()
    {
        Opened o(QString::fromUtf8(kCompiled), QSize(1600, 1000));
        QVERIFY(o.w.openPostGrad());
        QCoreApplication::processEvents();
        auto *canvas = o.w.postGradView()->canvas(), *main = o.w.canvas();
        const auto &groups = canvas->kernelGroups();
        int outlined = 0, labelled = 0;
        for (size_t g = 0; g < groups.size(); ++g) {
            outlined += !canvas->kernelOutline(int(g)).isEmpty();
            labelled += !canvas->kernelLabelRect(int(g)).isEmpty();
        }
        QCOMPARE(outlined, int(groups.size()));
        QCOMPARE(labelled, int(groups.size()));
        QVERIFY2(misleadingOutlines(*canvas, true).isEmpty(), qPrintable(misleadingOutlines(*canvas, true)));
        QVERIFY2(misleadingOutlines(*main, false).isEmpty(), qPrintable(misleadingOutlines(*main, false)));
        // The output projection (a collapsed box): inside its GEMM's outline, outside the norm's.
        const auto &fx = main->kernelGroups();
        int box = -1;
        for (size_t i = 0; i < main->view().items.size(); ++i)
            if (main->view().items[i].kind == layout::ViewItem::Kind::Module && main->view().items[i].module == "proj")
                box = int(i);
        QVERIFY(box >= 0);
        const auto &it = main->view().items[size_t(box)];
        const QPointF scene = QRectF(it.x, it.y, it.w, it.h).center();
        std::set<QString> around;
        for (size_t g = 0; g < fx.size(); ++g)
            if (main->kernelOutline(int(g)).contains(scene))
                around.insert(fx[g].name);
        QCOMPARE(around, (std::set<QString>{"aten::addmm"}));
    }

    /// An FX node selected in the window outlines the post-grad nodes that came from it and brings
    /// them into view; a post-grad node clicked selects its FX nodes in the window.
    void selectionBothWays()
    {
        Opened o;
        QVERIFY(o.w.openPostGrad());
        views::PostGradView *view = o.w.postGradView();
        QCoreApplication::processEvents();
        auto *canvas = view->canvas();
        // FX -> post-grad: the GELU is five ATen ops after decomposition.
        QVERIFY(o.w.selectNode(QStringLiteral("gelu")));
        QCOMPARE(names(view->linked()), (std::set<QString>{"mul_2", "mul_3", "erf", "add_3", "mul_4"}));
        for (const ir::Node *n : view->linked())
            QVERIFY(canvas->highlightOf(canvas->itemOf(n)) > 0);
        QVERIFY(allInView(*canvas, view->linked()));
        QVERIFY(canvas->scale() >= 0.6); // legible
        QVERIFY2(view->caption().contains(QStringLiteral("erf")), qPrintable(view->caption()));
        const ir::Node *erf = view->graph().find("erf");
        QCOMPARE(canvas->highlightOf(canvas->itemOf(view->graph().find("addmm"))), 0);
        // A node far from the GELU (the QKV projection) moves the view onto its post-grad nodes.
        QVERIFY(o.w.selectNode(QStringLiteral("linear")));
        QCOMPARE(names(view->linked()), (std::set<QString>{"view", "permute", "addmm", "view_1"}));
        QVERIFY(allInView(*canvas, view->linked()));
        QCOMPARE(canvas->highlightOf(canvas->itemOf(erf)), 0);
        // A module box (the output projection, collapsed): the post-grad nodes of all its nodes.
        o.w.selection()->selectModule(QStringLiteral("proj"), nullptr);
        QCOMPARE(names(view->linked()), (std::set<QString>{"view_12", "permute_6", "addmm_1", "view_13"}));
        QVERIFY(allInView(*canvas, view->linked()));
        // A node no post-grad node came from (the attention went to one SDPA call) says so.
        QVERIFY(o.w.selectNode(QStringLiteral("att")));
        QVERIFY(view->linked().empty());
        QVERIFY2(view->caption().contains(QStringLiteral("no post-grad node")), qPrintable(view->caption()));
        // Post-grad -> FX: clicking the permute that merges two FX nodes selects both in the window.
        QVERIFY(o.w.selectNode(QStringLiteral("gelu")));
        QCoreApplication::processEvents();
        const ir::Node *permute = view->graph().find("permute_5");
        QVERIFY(permute);
        const auto &item = canvas->view().items[size_t(canvas->itemOf(permute))];
        canvas->setView(1.0, QPointF(item.x + item.w / 2, item.y + item.h / 2));
        const QPoint at = canvas->itemRect(canvas->itemOf(permute)).center().toPoint();
        QVERIFY(canvas->rect().contains(at));
        QTest::mouseClick(canvas, Qt::LeftButton, {}, at);
        QCOMPARE(canvas->selectedLabel(), QStringLiteral("permute_5"));
        QCOMPARE(view->fxOf(QStringLiteral("permute_5")), (QStringList{"transpose_4", "h"}));
        views::Selection *sel = o.w.selection();
        QCOMPARE(names(sel->highlighted()), (std::set<QString>{"transpose_4", "h"}));
        QCOMPARE(sel->currentNode(), QStringLiteral("h"));
        auto *main = o.w.canvas();
        QCOMPARE(main->selectedLabel(), QStringLiteral("h"));
        for (const ir::Node *n : sel->highlighted())
            QVERIFY(main->highlightOf(main->itemOf(n)) > 0);
        QVERIFY(QRectF(main->rect()).contains(main->itemRect(main->itemOf(sel->find(QStringLiteral("h"))))));
        // The post-grad side keeps the clicked node (the window's selection does not pull it back).
        QCOMPARE(names(view->linked()), (std::set<QString>{"permute_5"}));
        // Selecting in the window again drops the outline this view put there.
        QVERIFY(o.w.selectNode(QStringLiteral("gelu")));
        QVERIFY(sel->highlighted().empty());
        QCOMPARE(names(view->linked()), (std::set<QString>{"mul_2", "mul_3", "erf", "add_3", "mul_4"}));
    }

    /// A kernel picked on the timeline is emphasised on its post-grad nodes; a kernel's outline
    /// clicked in the post-grad view selects it on the timeline and its group on the window's canvas.
    void kernelsBothWays()
    {
        Opened o;
        QVERIFY(o.w.openPostGrad());
        QCoreApplication::processEvents();
        auto *canvas = o.w.postGradView()->canvas();
        auto *timeline = o.w.profilePanel()->timeline();
        const auto &groups = canvas->kernelGroups();
        const auto &main = o.w.canvas()->kernelGroups();
        auto named = [](const std::vector<views::KernelGroup> &gs, const QString &name) {
            return int(std::find_if(gs.begin(), gs.end(), [&](const auto &g) { return g.name == name; }) - gs.begin());
        };
        const int gelu = named(groups, QStringLiteral("cpp_fused_gelu_view_1"));
        QVERIFY(gelu < int(groups.size()));
        timeline->selectKernel(int(main[size_t(named(main, QStringLiteral("cpp_fused_gelu_view_1")))].kernels.front()));
        QCOMPARE(canvas->selectedKernelGroup(), gelu);
        timeline->selectKernel(-1);
        QCOMPARE(canvas->selectedKernelGroup(), -1);
        // The other way: the first layer norm's outline clicked here.
        const int norm = named(groups, QStringLiteral("cpp_fused_add_native_layer_norm_view_0"));
        QVERIFY(norm < int(groups.size()));
        const QRectF label = canvas->kernelLabelRect(norm);
        QVERIFY(!label.isEmpty());
        canvas->setView(1.5, label.center());
        QTest::mouseClick(canvas, Qt::LeftButton, {}, canvas->rect().center());
        QCOMPARE(canvas->selectedKernelGroup(), norm);
        QCOMPARE(timeline->selectedKernel(), int(groups[size_t(norm)].kernels.front()));
        QCOMPARE(o.w.canvas()->selectedKernelGroup(), named(main, QStringLiteral("cpp_fused_add_native_layer_norm_view_0")));
    }

    /// Without its post-grad graph the action is disabled and names the missing file; a broken
    /// file is said in the status bar, and nothing opens.
    void missingOrBrokenFile()
    {
        QTemporaryDir tmp;
        const QString profile = tmp.filePath(QStringLiteral("compiled_post_grad_cpu.json"));
        QVERIFY(QFile::copy(QString::fromUtf8(kCompiled), profile));
        {
            Opened o(profile);
            QAction *act = postGradAction(o.w);
            QVERIFY(!act->isEnabled());
            QVERIFY2(act->toolTip().contains(QStringLiteral("compiled_post_grad_cpu.post_grad.json")) &&
                         act->toolTip().contains(QStringLiteral("missing")),
                     qPrintable(act->toolTip()));
            QVERIFY(!o.w.openPostGrad());
            QVERIFY(!o.w.postGradView());
        }
        QFile broken(tmp.filePath(QStringLiteral("compiled_post_grad_cpu.post_grad.json")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{\"format\": \"fxlens-graph\", \"nodes\": [");
        broken.close();
        Opened o(profile);
        QVERIFY(postGradAction(o.w)->isEnabled());
        QVERIFY(!o.w.openPostGrad());
        QVERIFY(!o.w.postGradView());
        const QString message = o.w.statusBar()->currentMessage();
        QVERIFY2(message.contains(QStringLiteral("compiled_post_grad_cpu.post_grad.json")), qPrintable(message));
    }

    /// The linked view on the transformer (docs/screenshots/compiled_post_grad_linked.png): the
    /// GELU's kernel and node selected in the FX graph, its post-grad nodes outlined in Inductor's graph.
    void screenshot()
    {
        Opened o;
        o.w.resize(1600, 1000);
        QVERIFY(o.w.openPostGrad());
        QCoreApplication::processEvents();
        const auto &main = o.w.canvas()->kernelGroups();
        const auto gelu = std::find_if(main.begin(), main.end(), [](const auto &g) { return g.name == "cpp_fused_gelu_view_1"; });
        QVERIFY(gelu != main.end());
        o.w.profilePanel()->selectKernelGroup(int(gelu - main.begin())); // the kernel, and its last node (gelu)
        QCoreApplication::processEvents();
        QCOMPARE(o.w.selection()->currentNode(), QStringLiteral("gelu"));
        QVERIFY(o.w.postGradView()->canvas()->selectedKernelGroup() >= 0);
        QVERIFY(allInView(*o.w.postGradView()->canvas(), o.w.postGradView()->linked()));
        QVERIFY(QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots")));
        QVERIFY(o.w.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/compiled_post_grad_linked.png")));
    }
};

QTEST_MAIN(TestPostGradView)
#include "tst_PostGradView.moc"
