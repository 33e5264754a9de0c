// SPDX-License-Identifier: MIT
// What a canvas shows at first sight after an action: the legend beside the drawing (a node is
// never under it), a selected node with its frame's title (not cut at the canvas' edge), and the
// view after a run with no node cut at one edge only.
#include "GraphCanvas.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "Selection.h"
#include "SlowWait.h"
#include "TestServices.h"
#include "io/GraphJson.h"

#include <QDir>
#include <QtTest>

using fxlens::views::GraphCanvas;

namespace {

QString example(const char *name) { return QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(name); }

QString shots()
{
    QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
    return QStringLiteral(FXLENS_BUILD_DIR "/screenshots/");
}

struct Shown {
    std::unique_ptr<fxlens::ir::Graph> graph;
    GraphCanvas canvas;
};

std::unique_ptr<Shown> show(const QString &file, int width, int height)
{
    auto r = fxlens::io::readGraphFile(file.toStdString());
    if (!r)
        return nullptr;
    auto s = std::make_unique<Shown>();
    s->graph = std::move(r.value());
    s->canvas.resize(width, height);
    s->canvas.show();
    s->canvas.setGraph(s->graph.get());
    return s;
}

/// A scene rectangle where the canvas draws it (widget coordinates), by way of item 0.
QRectF onScreen(const GraphCanvas &c, const QRectF &scene)
{
    const auto &it = c.view().items.front();
    const QPointF offset = c.itemRect(0).topLeft() - QPointF(it.x, it.y) * c.scale();
    return QRectF(scene.topLeft() * c.scale() + offset, scene.size() * c.scale());
}

/// What the user sees cut by an edge of the canvas' scene viewport: the items (by label) and the
/// frame titles (by path) that lie partly inside it and partly outside.
QStringList cutAtEdges(const GraphCanvas &c)
{
    const QRectF vp = c.sceneViewport();
    const auto cut = [&](const QRectF &r) { return r.intersects(vp) && !vp.contains(r); };
    QStringList out;
    for (size_t i = 0; i < c.view().items.size(); ++i)
        if (cut(c.itemRect(int(i))))
            out << QString::fromStdString(c.view().items[i].label);
    for (const auto &f : c.frames())
        if (cut(onScreen(c, f.titlePlate())))
            out << QStringLiteral("title ") + QString::fromStdString(f.path);
    return out;
}

/// The title of frame `path` whole in the viewport.
bool titleShown(const GraphCanvas &c, const std::string &path)
{
    const auto f = std::find_if(c.frames().begin(), c.frames().end(), [&](const auto &fr) { return fr.path == path; });
    return f != c.frames().end() && QRectF(c.sceneViewport()).contains(onScreen(c, f->titlePlate()));
}

} // namespace

class TestViewLanding : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// ResNet-50 with layer1 expanded: the legend is a bar below the drawing, so the legend looks
    /// the same whether or not a node (fc) lies where it is: the node is not drawn under it.
    void legendCoversNoNode()
    {
        auto s = show(example("resnet50_fx.json.gz"), 900, 800);
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        c.setExpanded(QStringLiteral("layer1"), true);
        c.fitToView();
        const QRect legend = c.legendRect();
        QVERIFY(!legend.isEmpty());
        QVERIFY(!legend.intersects(c.sceneViewport()));
        for (size_t i = 0; i < c.view().items.size(); ++i) // fitted: every item above the legend
            QVERIFY2(QRectF(c.sceneViewport()).contains(c.itemRect(int(i))), c.view().items[i].label.c_str());
        const int fc = c.itemOf(s->graph->find("fc"));
        QVERIFY(fc >= 0);
        const auto &item = c.view().items[size_t(fc)];
        c.setView(1.0, QPointF(item.x + item.w / 2, item.y + item.h / 2) - QPointF(0, 200)); // fc far above
        QVERIFY(!c.itemRect(fc).intersects(legend));
        const QImage clear = c.grab(legend).toImage();
        // fc moved to where the legend is: still not drawn there.
        c.setView(1.0, QPointF(item.x + item.w / 2, item.y + item.h / 2) + QPointF(0, c.height() / 2.0 - legend.center().y()));
        QVERIFY(c.itemRect(fc).intersects(legend));
        QVERIFY(c.grab(legend).toImage() == clear);
        QVERIFY(c.grab().save(shots() + QStringLiteral("legend_bar_resnet50.png")));
    }

    /// A node selected inside BERT's layer 0 self-attention (its modules expanded for it): the
    /// node whole in view and its frame's title in view with it, not cut at an edge.
    void selectionShowsItsFrameTitle()
    {
        auto s = show(example("bert_base_dynamo.json.gz"), 1000, 700);
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        const std::string self = "model.encoder.layer.0.attention.self";
        std::vector<const fxlens::ir::Node *> inSelf;
        for (const fxlens::ir::Node *n = s->graph->first(); n; n = n->next())
            if (n->meta().modulePath() == self)
                inSelf.push_back(n);
        QVERIFY(inSelf.size() > 10);
        const QString name = QString::fromStdString(inSelf[inSelf.size() / 2]->name());
        c.zoomBy(1.0, QPointF()); // a view the user has moved: not the first candidate's overview
        QVERIFY(c.selectNode(name));
        QCOMPARE(c.selectedLabel(), name);
        const QRectF vp = c.sceneViewport();
        QVERIFY(vp.contains(c.itemRect(c.itemOf(inSelf[inSelf.size() / 2]))));
        const auto frame = std::find_if(c.frames().begin(), c.frames().end(), [&](const auto &f) { return f.path == self; });
        QVERIFY(frame != c.frames().end());
        const QRectF title = onScreen(c, frame->titleRect());
        const QRectF text(title.topLeft(), QSizeF(std::min(title.width(), 120.0), title.height())); // its start
        QVERIFY2(vp.contains(text), qPrintable(QStringLiteral("title at %1,%2").arg(text.left()).arg(text.top())));
        QVERIFY(c.grab().save(shots() + QStringLiteral("bert_expand_landing.png")));
    }

    /// BERT with its layers unstacked, the view at the `model` frame's left edge: double-clicking
    /// layer 3 opens it where its box stood, widening the frames around it to the left; the titles
    /// of the opened frame and of the frames around it are then whole in view, and no item is cut.
    void expandKeepsTheTitlesAround()
    {
        auto s = show(example("bert_base_dynamo.json.gz"), 1000, 800);
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        c.setExpanded(QStringLiteral("model"), true);
        c.setExpanded(QStringLiteral("model.encoder"), true);
        while (!c.stacks().empty())
            c.unstack(0);
        const auto model = std::find_if(c.frames().begin(), c.frames().end(), [](const auto &f) { return f.path == "model"; });
        QVERIFY(model != c.frames().end());
        int box = -1; // layer 3's box
        for (size_t i = 0; i < c.view().items.size() && box < 0; ++i)
            if (c.view().items[i].module == "model.encoder.layer.3")
                box = int(i);
        QVERIFY(box >= 0);
        const auto &it = c.view().items[size_t(box)];
        c.setView(1.0, QPointF(model->rect.left() + c.width() / 2.0, it.y + it.h / 2)); // the frame's left edge at the left
        QVERIFY(titleShown(c, "model"));
        QTest::mouseDClick(&c, Qt::LeftButton, {}, c.itemRect(box).center().toPoint());
        QVERIFY(c.isExpanded(QStringLiteral("model.encoder.layer.3")));
        for (const char *path : {"model.encoder.layer.3", "model.encoder", "model"})
            QVERIFY2(titleShown(c, path), path);
        QVERIFY2(cutAtEdges(c).isEmpty(), qPrintable(cutAtEdges(c).join(QLatin1Char(' '))));
        QVERIFY(c.grab().save(shots() + QStringLiteral("bert_expand_layer3_titles.png")));
    }

    /// Landing on a module (--expand: ResNet-50's layer1.0, BERT's layer 3) leaves no item and no
    /// frame title cut at an edge: what does not fit is out of view, not half in it.
    void expandLandsOnWholeThings_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("module");
        QTest::addColumn<QSize>("size");
        for (const QSize size : {QSize(480, 700), QSize(470, 730), QSize(900, 650), QSize(700, 600), QSize(1300, 880)}) {
            QTest::addRow("resnet50 layer1.0 %dx%d", size.width(), size.height())
                << QStringLiteral("resnet50_fx.json.gz") << QStringLiteral("layer1.0") << size;
            QTest::addRow("bert layer.3 %dx%d", size.width(), size.height())
                << QStringLiteral("bert_base_dynamo.json.gz") << QStringLiteral("model.encoder.layer.3") << size;
        }
    }
    void expandLandsOnWholeThings()
    {
        QFETCH(QString, file);
        QFETCH(QString, module);
        QFETCH(QSize, size);
        auto s = show(example(file.toLatin1().constData()), size.width(), size.height());
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        const QStringList parts = module.split(QLatin1Char('.'));
        for (int i = 1; i <= parts.size(); ++i)
            c.setExpanded(parts.mid(0, i).join(QLatin1Char('.')), true);
        QVERIFY(c.showModule(module));
        QVERIFY(titleShown(c, module.toStdString()));
        QVERIFY2(cutAtEdges(c).isEmpty(), qPrintable(cutAtEdges(c).join(QLatin1Char(' '))));
        QVERIFY(c.grab().save(shots() + QStringLiteral("expand_landing_%1.png").arg(parts.constFirst())));
    }

    /// A module box half past the bottom edge (ResNet-50's layer1.2 below an expanded layer1.0),
    /// double-clicked: the view moves to show its frame whole (its title and its nodes), with
    /// nothing cut at an edge; the same for a box half past the right edge.
    void expandAtTheEdgeBringsTheFrameIn_data()
    {
        QTest::addColumn<bool>("right");
        QTest::newRow("bottom") << false;
        QTest::newRow("right") << true;
    }
    void expandAtTheEdgeBringsTheFrameIn()
    {
        QFETCH(bool, right);
        auto s = show(example("resnet50_fx.json.gz"), 640, 760);
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        c.setExpanded(QStringLiteral("layer1"), true);
        c.setExpanded(QStringLiteral("layer1.0"), true);
        int box = -1;
        for (size_t i = 0; i < c.view().items.size() && box < 0; ++i)
            if (c.view().items[i].module == "layer1.2")
                box = int(i);
        QVERIFY(box >= 0);
        const auto &it = c.view().items[size_t(box)];
        const QRectF vp = c.sceneViewport();
        // The box's top 12 px in view at the bottom edge (or its left 30 px at the right edge).
        const QPointF at =
            right ? QPointF(it.x + 30 - vp.width() / 2, it.y + it.h / 2) : QPointF(it.x + it.w / 2, it.y + 12 - vp.height() / 2);
        c.setView(1.0, at + (QPointF(c.width() / 2.0, c.height() / 2.0) - vp.center()));
        const QRectF visible = c.itemRect(box).intersected(vp);
        QVERIFY2(!visible.isEmpty() && !vp.contains(c.itemRect(box)), "the box is half in view");
        QTest::mouseDClick(&c, Qt::LeftButton, {}, visible.center().toPoint());
        QVERIFY(c.isExpanded(QStringLiteral("layer1.2")));
        QVERIFY(c.grab().save(shots() + QStringLiteral("expand_at_edge_%1.png").arg(QString::fromLatin1(QTest::currentDataTag()))));
        QVERIFY(titleShown(c, "layer1.2"));
        const auto frame = std::find_if(c.frames().begin(), c.frames().end(), [](const auto &f) { return f.path == "layer1.2"; });
        QVERIFY(frame != c.frames().end());
        const QRectF r = onScreen(c, frame->rect);
        if (r.height() <= vp.height() && r.width() <= vp.width())
            QVERIFY2(vp.contains(r),
                     qPrintable(QStringLiteral("frame at %1,%2 %3x%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height())));
        QVERIFY2(cutAtEdges(c).isEmpty(), qPrintable(cutAtEdges(c).join(QLatin1Char(' '))));
    }

    /// A file's first candidate deep in a tall graph (transformer_dynamo's `h`): the view it opened
    /// with (the inputs at the top) panned to show the candidate with what leads to it above it in
    /// view, and nothing cut at an edge (the three-wide rows above it out of view, not cut).
    void firstCandidateWithWhatLeadsToIt()
    {
        auto s = show(example("transformer_dynamo.json"), 480, 700);
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        const fxlens::ir::Node *h = s->graph->find("h");
        QVERIFY(h);
        QVERIFY(c.selectNode(QStringLiteral("h")));
        const QRectF vp = c.sceneViewport(), box = c.itemRect(c.itemOf(h));
        QVERIFY(vp.contains(box));
        // What leads to h (its last three producers, one row each) in view above it.
        for (const char *before : {"transpose_4", "matmul_1", "att"}) {
            const QRectF r = c.itemRect(c.itemOf(s->graph->find(before)));
            QVERIFY2(vp.contains(r) && r.bottom() < box.top(), before);
        }
        for (size_t i = 0; i < c.view().items.size(); ++i) {
            const QRectF r = c.itemRect(int(i));
            QVERIFY2(!r.intersects(vp) || vp.contains(r), c.view().items[i].label.c_str());
        }
        QVERIFY(c.grab().save(shots() + QStringLiteral("transformer_first_candidate.png")));
    }

    /// Where the stretch from the drawing's start down to the first candidate fits at a legible
    /// zoom, the first screen shows it: the input, the candidate, and what lies between, whole.
    void firstCandidateFromTheInput_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("canvas of a 1200x800 window") << QSize(470, 690);
        QTest::newRow("taller") << QSize(700, 900);
    }
    void firstCandidateFromTheInput()
    {
        QFETCH(QSize, size);
        auto s = show(example("transformer_dynamo.json"), size.width(), size.height());
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        QVERIFY(c.selectNode(QStringLiteral("h")));
        QVERIFY2(32 * c.scale() >= 14, qPrintable(QString::number(c.scale()))); // the overview's legible zoom, or more
        const QRectF vp = c.sceneViewport();
        for (const char *name : {"l_x_", "split", "matmul", "att", "h"})
            QVERIFY2(vp.contains(c.itemRect(c.itemOf(s->graph->find(name)))), name);
        QVERIFY2(cutAtEdges(c).isEmpty(), qPrintable(cutAtEdges(c).join(QLatin1Char(' '))));
    }

    /// The window narrowed (or a dock opened beside the canvas): a drawing shown whole stays whole
    /// (fitted again), and a view on a tall graph keeps its selected node in view with no node cut
    /// at the new edges, rather than staying pinned at its top-left corner.
    void resizeKeepsTheViewTrue_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("whole");
        QTest::addColumn<QSize>("from");
        QTest::addColumn<QSize>("to");
        QTest::newRow("tangle4 whole") << QStringLiteral("tangle4_fx.json") << true << QSize(1500, 900) << QSize(1000, 700);
        QTest::newRow("transformer at h") << QStringLiteral("transformer_dynamo.json") << false << QSize(1200, 700) << QSize(900, 520);
    }
    void resizeKeepsTheViewTrue()
    {
        QFETCH(QString, file);
        QFETCH(bool, whole);
        QFETCH(QSize, from);
        QFETCH(QSize, to);
        fxlens::views::MainWindow w{testServices()};
        w.resize(from);
        w.show();
        QVERIFY(w.openFile(example(file.toUtf8().constData())));
        QCoreApplication::processEvents();
        GraphCanvas *c = w.canvas();
        const auto allIn = [c] {
            for (size_t i = 0; i < c->view().items.size(); ++i)
                if (!QRectF(c->sceneViewport()).contains(c->itemRect(int(i))))
                    return false;
            return true;
        };
        QCOMPARE(allIn(), whole);
        const int selected = c->itemOf(whole ? nullptr : w.graph()->find("h"));
        if (!whole)
            c->selectNode(QStringLiteral("h"));
        const int before = c->width();
        w.resize(to);
        QTRY_VERIFY_WITH_TIMEOUT(c->width() < before - 100, kSlowWait);
        QTest::qWait(50); // the queued placement
        QCoreApplication::processEvents();
        if (whole)
            QVERIFY(allIn());
        else
            QVERIFY(QRectF(c->sceneViewport()).contains(c->itemRect(selected)));
        QVERIFY2(cutAtEdges(*c).isEmpty(), qPrintable(cutAtEdges(*c).join(QLatin1Char(' '))));
    }

    /// A run that shrinks the drawing to what fits the canvas at its zoom shows it whole and
    /// centred (tangle50, landed on the first candidate in its block, run to its fixpoint: five boxes), not
    /// small in the corner of the view it had.
    void runThatShrinksShowsTheResultWhole()
    {
        fxlens::views::MainWindow w{testServices()};
        w.resize(1200, 800);
        w.show();
        QVERIFY(w.openFile(example("tangle50_torch.json")));
        GraphCanvas *c = w.canvas();
        w.debugger()->setPreset(QStringLiteral("all"));
        QTRY_VERIFY_WITH_TIMEOUT(!w.selection()->currentNode().isEmpty(), kSlowWait); // the first candidate
        c->zoomBy(1.0, QPointF());                                                    // as Ctrl+G: its block opened, landed on
        QVERIFY(c->selectNode(w.selection()->currentNode()));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        QCoreApplication::processEvents();
        const QRectF vp = c->sceneViewport();
        QRectF drawn;
        for (size_t i = 0; i < c->view().items.size(); ++i) {
            QVERIFY2(vp.contains(c->itemRect(int(i))), c->view().items[i].label.c_str());
            drawn |= c->itemRect(int(i));
        }
        QVERIFY2(std::abs(drawn.center().x() - vp.center().x()) < 30 && std::abs(drawn.center().y() - vp.center().y()) < 30,
                 qPrintable(QStringLiteral("drawing centred at %1,%2 in a view centred at %3,%4")
                                .arg(drawn.center().x())
                                .arg(drawn.center().y())
                                .arg(vp.center().x())
                                .arg(vp.center().y())));
        QVERIFY(c->grab().save(shots() + QStringLiteral("tangle50_after_run_whole.png")));
    }

    /// A small drawing opens enlarged to fill the canvas; a step that makes it larger (tangle4's
    /// first step unstacks its four blocks) stays whole while its text is drawn, not a few boxes
    /// at the opening's enlargement. A step the user applies lands on the node it made
    /// (its block opened: a row of 32 getitems), legible and not enlarged either.
    void stepThatGrowsKeepsTheOverview_data()
    {
        QTest::addColumn<bool>("apply");
        QTest::newRow("run") << false;
        QTest::newRow("apply") << true;
    }
    void stepThatGrowsKeepsTheOverview()
    {
        QFETCH(bool, apply);
        fxlens::views::MainWindow w{testServices()};
        w.resize(1200, 800);
        w.show();
        QVERIFY(w.openFile(example("tangle4_fx.json")));
        GraphCanvas *c = w.canvas();
        QVERIFY(c->scale() > 1); // enlarged: the whole drawing fills the canvas
        const size_t before = c->view().items.size();
        w.debugger()->setPreset(QStringLiteral("all"));
        if (apply)
            QVERIFY(w.debugger()->applySelected());
        else
            QCOMPARE(w.debugger()->run(1), QStringLiteral("step limit"));
        QCoreApplication::processEvents();
        QVERIFY(c->view().items.size() > before); // the blocks unstacked
        const QRectF vp = c->sceneViewport();
        int whole = 0;
        for (size_t i = 0; i < c->view().items.size(); ++i)
            whole += vp.contains(c->itemRect(int(i)));
        c->grab().save(shots() + QStringLiteral("tangle4_step_grows_%1.png").arg(apply ? QStringLiteral("apply") : QStringLiteral("run")));
        QVERIFY2(32 * c->scale() >= 14 - 1e-9 && c->scale() <= 1, qPrintable(QString::number(c->scale()))); // its text drawn
        if (apply) {
            const QString made = c->selectedLabel();
            QVERIFY(!made.isEmpty());
            bool shown = false;
            for (size_t i = 0; i < c->view().items.size(); ++i)
                shown |= c->view().items[i].label == made.toStdString() && vp.contains(c->itemRect(int(i)));
            QVERIFY2(shown, qPrintable(made));
            return;
        }
        QVERIFY2(whole == int(c->view().items.size()), // at 1200×800 it fits whole with its text drawn
                 qPrintable(QStringLiteral("%1 of %2 boxes whole at zoom %3").arg(whole).arg(c->view().items.size()).arg(c->scale())));
    }

    /// After Run (F5) to the fixpoint no node is left cut at one edge of the view, where panning
    /// A first candidate at the end of a drawing far wider than the view (ctr_aten's last
    /// dead-code node, at the right end of a 12,000 px row): the view ends where the drawing
    /// ends, the candidate at its edge with the row beside it, not alone with an empty band past
    /// the drawing's end.
    void noEmptyBandPastTheDrawingsEnd()
    {
        auto s = show(example("ctr_aten.json"), 470, 690);
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        QVERIFY(c.selectNode(QStringLiteral("_assert_tensor_metadata_25")));
        const QRectF vp = c.sceneViewport(), box = c.itemRect(c.itemOf(s->graph->find("_assert_tensor_metadata_25")));
        QVERIFY(vp.contains(box));
        QRectF drawing;
        for (size_t i = 0; i < c.view().items.size(); ++i)
            drawing = drawing.united(c.itemRect(int(i)));
        QVERIFY(drawing.width() > 4 * vp.width());
        QVERIFY2(
            drawing.right() >= vp.right() - 24 && drawing.left() <= vp.left() + 24,
            qPrintable(
                QStringLiteral("drawing %1..%2, view %3..%4").arg(drawing.left()).arg(drawing.right()).arg(vp.left()).arg(vp.right())));
    }

    /// Scrolled into the middle of a tall expanded module, where no frame title shows, the view
    /// names the frame it lies in on a plate at its top-left (the innermost across the top edge);
    /// a click on the plate scrolls that frame's title into view, and the plate goes. While a
    /// title shows at the top, there is none.
    void contextTitleWhereNoTitleShows()
    {
        auto s = show(example("bert_base_dynamo.json.gz"), 600, 500);
        QVERIFY(s);
        GraphCanvas &c = s->canvas;
        for (const char *m : {"model", "model.encoder", "model.encoder.layer.0", "model.encoder.layer.0.attention"})
            c.setExpanded(QLatin1String(m), true);
        QVERIFY(c.showModule(QStringLiteral("model.encoder.layer.0.attention")));
        QCOMPARE(c.contextTitle().first, -1); // its title in view
        // The view's top edge halfway down the attention frame.
        const auto &frames = c.frames();
        const auto at =
            std::find_if(frames.begin(), frames.end(), [](const auto &f) { return f.path == "model.encoder.layer.0.attention"; });
        QVERIFY(at != frames.end());
        const double scale = 0.8, top = at->rect.center().y();
        c.setView(scale, QPointF(at->rect.center().x(), top + c.sceneViewport().height() / 2 / scale));
        const auto [f, plate] = c.contextTitle();
        QVERIFY(f >= 0);
        const std::string &path = frames[size_t(f)].path;
        QVERIFY2(path.rfind("model.encoder.layer.0.attention", 0) == 0, path.c_str());
        for (const auto &fr : frames) // no title in the plate's band, none under it
            QVERIFY(!onScreen(c, fr.titlePlate()).intersects(QRectF(plate)));
        QVERIFY(c.sceneViewport().contains(plate));
        QVERIFY(c.grab().save(shots() + QStringLiteral("context_title.png")));
        QTest::mouseClick(&c, Qt::LeftButton, {}, plate.center());
        const QRectF title = onScreen(c, frames[size_t(f)].titlePlate());
        QVERIFY2(c.sceneViewport().contains(title.toRect()), qPrintable(QStringLiteral("%1,%2").arg(title.x()).arg(title.y())));
        QCOMPARE(c.contextTitle().first, -1);
        QVERIFY(c.selectedLabel().isEmpty()); // the click selected nothing
    }

    /// shows it whole.
    void runEndsOnAWholeNode()
    {
        fxlens::views::MainWindow w{testServices()};
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(example("bert_base_dynamo.json.gz")));
        w.debugger()->setPreset(QStringLiteral("all"));
        QCOMPARE(w.debugger()->run(), QStringLiteral("fixpoint"));
        QCoreApplication::processEvents();
        GraphCanvas *c = w.canvas();
        // No item in view is cut at one edge only (panning would show it whole).
        const QRectF vp = c->sceneViewport();
        for (const bool across : {true, false}) {
            QStringList low, high;
            for (size_t i = 0; i < c->view().items.size(); ++i) {
                const QRectF r = c->itemRect(int(i));
                if (!r.intersects(vp))
                    continue;
                const double a = across ? r.left() : r.top(), b = across ? r.right() : r.bottom();
                const double lo = across ? vp.left() : vp.top(), hi = across ? vp.right() : vp.bottom();
                if (a < lo && b > lo)
                    low << QString::fromStdString(c->view().items[i].label);
                if (a < hi && b > hi)
                    high << QString::fromStdString(c->view().items[i].label);
            }
            QVERIFY2(low.isEmpty() == high.isEmpty(),
                     qPrintable(low.join(QLatin1Char(' ')) + QStringLiteral(" | ") + high.join(QLatin1Char(' '))));
        }
        QVERIFY2(cutAtEdges(*c).isEmpty(), qPrintable(cutAtEdges(*c).join(QLatin1Char(' ')))); // nor a frame title
        QVERIFY(c->grab().save(shots() + QStringLiteral("bert_after_run.png")));
    }
};

QTEST_MAIN(TestViewLanding)
#include "tst_ViewLanding.moc"
