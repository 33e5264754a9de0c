// SPDX-License-Identifier: MIT
// How expanded modules are drawn, measured on what the canvas shows: one rectangle per frame,
// nested with a margin, its title in its own top band; edge labels that overlap no node and no
// other label; long edges apart from frame sides; after steps, no holes and no stale ghosts.
#include "GraphCanvas.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "SlowWait.h"
#include "TestServices.h"
#include "io/GraphJson.h"

#include <QDir>
#include <QDockWidget>
#include <QtTest>

#include <map>

using namespace fxlens;

namespace {

constexpr double kBorderGap = 4; ///< an edge this near a frame's side, along it, reads as the side
constexpr double kAlong = 24;    ///< ... for longer than this (an edge crossing a side at 20° or more is near it for less)

struct Shown {
    std::unique_ptr<ir::Graph> graph;
    views::GraphCanvas canvas;
};

/// An example on a shown canvas with `modules` expanded (with everything inside them), or every
/// module when `modules` is empty.
std::unique_ptr<Shown> opened(const char *file)
{
    auto r = io::readGraphFile(std::string(FXLENS_EXAMPLES "/") + file);
    if (!r)
        return nullptr;
    auto shown = std::make_unique<Shown>();
    shown->graph = std::move(r.value());
    shown->canvas.resize(1400, 900);
    shown->canvas.show();
    shown->canvas.setGraph(shown->graph.get());
    return shown;
}

std::unique_ptr<Shown> expanded(const char *file, const QStringList &modules = {})
{
    auto shown = opened(file);
    if (!shown)
        return nullptr;
    if (modules.isEmpty())
        shown->canvas.expandAll();
    for (const auto &m : layout::allModules(*shown->graph))
        for (const QString &prefix : modules)
            if (QString::fromStdString(m) == prefix || QString::fromStdString(m).startsWith(prefix + QLatin1Char('.')))
                shown->canvas.setExpanded(QString::fromStdString(m), true);
    return shown;
}

/// An example on a shown canvas with exactly `modules` expanded, one by one from the canvas (each
/// opened in place, as a double-click and --expand open it), then laid out afresh when `fresh`.
std::unique_ptr<Shown> expandedOnly(const char *file, const QStringList &modules, bool fresh = true)
{
    auto shown = opened(file);
    if (!shown)
        return nullptr;
    for (const QString &m : modules)
        shown->canvas.setExpanded(m, true);
    if (fresh)
        shown->canvas.relayoutFresh();
    return shown;
}

/// How an edges_data row's modules are opened.
enum class Opened { Inside, Fresh, InPlace };

/// The view of the current edges_data row (file, modules, how they are opened).
std::unique_ptr<Shown> shownForEdges()
{
    QFETCH(QString, file);
    QFETCH(QStringList, modules);
    QFETCH(int, how);
    if (Opened(how) == Opened::Inside)
        return expanded(qPrintable(file), modules);
    return expandedOnly(qPrintable(file), modules, Opened(how) == Opened::Fresh);
}

/// The length of segment a-b lying within `gap` of the side from p to q (horizontal or vertical).
double lengthAlong(QPointF a, QPointF b, QPointF p, QPointF q, double gap)
{
    double t0 = 0, t1 = 1;
    // The t range where one coordinate of a + t (b - a) lies in [lo, hi].
    auto clip = [&](double from, double to, double lo, double hi) {
        const double d = to - from;
        if (std::abs(d) < 1e-9) {
            if (from < lo || from > hi)
                t1 = -1;
            return;
        }
        const double u = (lo - from) / d, w = (hi - from) / d;
        t0 = std::max(t0, std::min(u, w)), t1 = std::min(t1, std::max(u, w));
    };
    const bool vertical = std::abs(p.x() - q.x()) < 1e-9;
    clip(a.x(), b.x(), vertical ? p.x() - gap : std::min(p.x(), q.x()), vertical ? p.x() + gap : std::max(p.x(), q.x()));
    clip(a.y(), b.y(), vertical ? std::min(p.y(), q.y()) : p.y() - gap, vertical ? std::max(p.y(), q.y()) : p.y() + gap);
    return t1 > t0 ? (t1 - t0) * QLineF(a, b).length() : 0;
}

/// An edge as the canvas draws it: its route, or a straight line between its ends.
QPolygonF lineOf(const views::GraphCanvas &c, size_t e)
{
    const auto &edge = c.view().edges[e];
    QPolygonF line;
    for (const auto &p : edge.route)
        line << QPointF(p.x, p.y);
    if (line.size() < 2) {
        const auto &a = c.view().items[edge.from], &b = c.view().items[edge.to];
        line = QPolygonF({QPointF(a.x + a.w / 2, a.y + a.h), QPointF(b.x + b.w / 2, b.y)});
    }
    return line;
}

/// Whether segment a-b enters the rectangle's interior (shrunk by half a pixel).
bool meets(QPointF a, QPointF b, QRectF r)
{
    r.adjust(0.5, 0.5, -0.5, -0.5);
    const int steps = int(QLineF(a, b).length()) + 2;
    for (int k = 0; k <= steps; ++k)
        if (r.contains(a + (b - a) * (double(k) / steps)))
            return true;
    return false;
}

QRectF rectOf(const layout::ViewItem &it) { return QRectF(it.x, it.y, it.w, it.h); }

QString describe(const QRectF &r) { return QStringLiteral("(%1,%2 %3x%4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height()); }

/// BERT's encoder layer 0 down to its attention's self-attention, opened one by one.
const QStringList kBertLayer0 = {QStringLiteral("model"), QStringLiteral("model.encoder"), QStringLiteral("model.encoder.layer.0"),
                                 QStringLiteral("model.encoder.layer.0.attention"), QStringLiteral("model.encoder.layer.0.attention.self")};

bool within(const std::string &cluster, const std::string &path) { return cluster == path || cluster.rfind(path + ".", 0) == 0; }

/// What is wrong with the canvas' frames ("" when nothing): a node or a frame's title in another
/// frame's title band; a module's items not all in its frame; a frame over an item of another module.
QString framesUntrue(const views::GraphCanvas &c)
{
    const auto &frames = c.frames();
    for (const auto &g : frames) {
        const QRectF band(g.rect.left(), g.rect.top(), g.rect.width(), layout::kFrameTitle);
        for (const auto &it : c.view().items) {
            if (rectOf(it).intersects(band))
                return QString::fromStdString(it.label + " in the title band of " + g.path) + describe(rectOf(it)) + describe(band);
            if (!within(it.cluster, g.path) && rectOf(it).intersects(g.rect))
                return QString::fromStdString(it.label + " under the frame of " + g.path);
        }
        for (const auto &f : frames)
            if (&f != &g && f.titleRect().intersects(band))
                return QString::fromStdString("the title of " + f.path + " in the title band of " + g.path);
    }
    for (const auto &m : c.view().modules) {
        std::vector<QRectF> members;
        for (const auto &it : c.view().items)
            if (within(it.cluster, m))
                members.push_back(rectOf(it));
        if (members.size() < 2)
            continue;
        auto f = std::find_if(frames.begin(), frames.end(), [&](const auto &x) { return x.path == m; });
        if (f == frames.end())
            return QString::fromStdString("no frame for " + m);
        for (const QRectF &r : members)
            if (!f->rect.contains(r))
                return QString::fromStdString("an item out of the frame of " + m) + describe(r) + describe(f->rect);
    }
    return {};
}

} // namespace

class TestCanvasDrawing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void views_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("modules");
        QTest::newRow("resnet50 layer1") << QStringLiteral("resnet50_fx.json.gz") << QStringList{QStringLiteral("layer1")};
        QTest::newRow("resnet50 all") << QStringLiteral("resnet50_fx.json.gz") << QStringList{};
        QTest::newRow("bert all") << QStringLiteral("bert_base_dynamo.json.gz") << QStringList{};
    }

    /// No two edge labels overlap, and none covers a node: those without room are left out.
    void edgeLabelsApart_data() { views_data(); }
    void edgeLabelsApart()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, modules);
        auto shown = expanded(qPrintable(file), modules);
        QVERIFY(shown);
        const views::GraphCanvas &c = shown->canvas;
        const auto &labels = c.edgeLabels();
        QVERIFY2(labels.size() * 2 > c.view().edges.size(), qPrintable(QString::number(labels.size()))); // most edges keep theirs
        for (size_t a = 0; a < labels.size(); ++a) {
            for (size_t b = a + 1; b < labels.size(); ++b)
                QVERIFY2(!labels[a].rect.intersects(labels[b].rect),
                         qPrintable(labels[a].text + describe(labels[a].rect) + QStringLiteral(" / ") + labels[b].text +
                                    describe(labels[b].rect)));
            for (const auto &it : c.view().items)
                QVERIFY2(!labels[a].rect.intersects(rectOf(it)),
                         qPrintable(labels[a].text + QStringLiteral(" on ") + QString::fromStdString(it.label)));
        }
    }

    /// One rectangle per frame; a child's strictly inside its parent's with a margin on every side;
    /// frames that do not nest do not meet.
    void framesNest_data() { views_data(); }
    void framesNest()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, modules);
        auto shown = expanded(qPrintable(file), modules);
        QVERIFY(shown);
        const auto &frames = shown->canvas.frames();
        QVERIFY(frames.size() >= 3);
        std::map<std::string, QRectF> byPath;
        for (const auto &f : frames) {
            QPainterPath outline;
            outline.addRect(f.rect);
            QVERIFY2(f.shape.subtracted(outline).isEmpty() && outline.subtracted(f.shape).isEmpty(), f.path.c_str()); // no notches
            byPath[f.path] = f.rect;
        }
        auto inside = [&](const std::string &child, const std::string &parent) { return child.rfind(parent + ".", 0) == 0; };
        for (const auto &f : frames)
            for (const auto &g : frames) {
                if (&f == &g)
                    continue;
                if (inside(f.path, g.path)) {
                    const QRectF margin = g.rect.adjusted(layout::kFramePad - 0.5, layout::kFramePad - 0.5, -(layout::kFramePad - 0.5),
                                                          -(layout::kFramePad - 0.5));
                    QVERIFY2(margin.contains(f.rect),
                             qPrintable(QString::fromStdString(f.path + " in " + g.path) + describe(f.rect) + describe(g.rect)));
                } else if (!inside(g.path, f.path)) {
                    QVERIFY2(!f.rect.intersects(g.rect), qPrintable(QString::fromStdString(f.path + " meets " + g.path)));
                }
            }
    }

    /// Each frame's title lies in its own top band, at its top-left, and meets no other title and
    /// no node.
    void frameTitles_data() { views_data(); }
    void frameTitles()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, modules);
        auto shown = expanded(qPrintable(file), modules);
        QVERIFY(shown);
        const views::GraphCanvas &c = shown->canvas;
        const auto &frames = c.frames();
        QVERIFY(!frames.empty());
        for (const auto &f : frames) {
            const QRectF t = f.titleRect();
            QVERIFY2(f.rect.contains(t) && t.top() - f.rect.top() < 4 && t.left() - f.rect.left() < 10 &&
                         t.bottom() <= f.rect.top() + layout::kFrameTitle,
                     f.path.c_str());
            for (const auto &g : frames)
                QVERIFY2(&f == &g || !t.intersects(g.titleRect()), qPrintable(QString::fromStdString(f.path + " / " + g.path)));
            for (const auto &it : c.view().items)
                QVERIFY2(!t.intersects(rectOf(it)), qPrintable(QString::fromStdString(f.path + " on " + it.label)));
        }
    }

    /// The views of the edge tests: ResNet-50's layer1 and BERT's layer 0 opened down to its
    /// self-attention, laid out afresh and opened in place from the canvas (as --expand and
    /// double-clicks open them), ResNet-50's layer2.0.downsample opened in place (a frame opened
    /// beside the row's other items, its long title above its entry), tangle50 and the two models
    /// wholly expanded.
    void edges_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("modules");
        QTest::addColumn<int>("how"); // Opened
        const QStringList layer10 = {QStringLiteral("layer1"), QStringLiteral("layer1.0")};
        QTest::newRow("resnet50 layer1") << QStringLiteral("resnet50_fx.json.gz") << QStringList{QStringLiteral("layer1")}
                                         << int(Opened::Inside);
        QTest::newRow("resnet50 layer1.0 in place") << QStringLiteral("resnet50_fx.json.gz") << layer10 << int(Opened::InPlace);
        QTest::newRow("resnet50 layer1.0") << QStringLiteral("resnet50_fx.json.gz") << layer10 << int(Opened::Fresh);
        QTest::newRow("resnet50 layer2.0.downsample in place")
            << QStringLiteral("resnet50_fx.json.gz")
            << QStringList{QStringLiteral("layer2"), QStringLiteral("layer2.0"), QStringLiteral("layer2.0.downsample")}
            << int(Opened::InPlace);
        QTest::newRow("bert layer0") << QStringLiteral("bert_base_dynamo.json.gz") << kBertLayer0 << int(Opened::Fresh);
        QTest::newRow("bert layer0 in place") << QStringLiteral("bert_base_dynamo.json.gz") << kBertLayer0 << int(Opened::InPlace);
        QTest::newRow("tangle50 all") << QStringLiteral("tangle50_torch.json") << QStringList{} << int(Opened::Inside);
        QTest::newRow("resnet50 all") << QStringLiteral("resnet50_fx.json.gz") << QStringList{} << int(Opened::Inside);
        QTest::newRow("bert all") << QStringLiteral("bert_base_dynamo.json.gz") << QStringList{} << int(Opened::Inside);
    }

    /// No stretch of an edge runs along a frame's side: it is within kBorderGap pixels of one for
    /// at most kAlong pixels (an edge that must pass a side crosses it).
    void edgesApartFromFrames_data() { edges_data(); }
    void edgesApartFromFrames()
    {
        auto shown = shownForEdges();
        QVERIFY(shown && !shown->canvas.frames().empty());
        const views::GraphCanvas &c = shown->canvas;
        for (size_t e = 0; e < c.view().edges.size(); ++e) {
            const QPolygonF line = lineOf(c, e);
            for (qsizetype k = 1; k < line.size(); ++k)
                for (const auto &f : c.frames()) {
                    const QRectF r = f.rect;
                    const std::pair<QPointF, QPointF> sides[] = {{r.topLeft(), r.bottomLeft()},
                                                                 {r.topRight(), r.bottomRight()},
                                                                 {r.topLeft(), r.topRight()},
                                                                 {r.bottomLeft(), r.bottomRight()}};
                    for (const auto &[p, q] : sides)
                        QVERIFY2(lengthAlong(line[k - 1], line[k], p, q, kBorderGap) <= kAlong,
                                 qPrintable(QStringLiteral("%1 -> %2 along %3 %4")
                                                .arg(QString::fromStdString(c.view().items[c.view().edges[e].from].label),
                                                     QString::fromStdString(c.view().items[c.view().edges[e].to].label),
                                                     QString::fromStdString(f.path), describe(QRectF(line[k - 1], line[k])))));
                }
        }
    }

    /// No edge crosses a frame's title: edges entering a frame cross its title band right of it.
    void edgesClearOfTitles_data() { edges_data(); }
    void edgesClearOfTitles()
    {
        auto shown = shownForEdges();
        QVERIFY(shown && !shown->canvas.frames().empty());
        const views::GraphCanvas &c = shown->canvas;
        for (size_t e = 0; e < c.view().edges.size(); ++e) {
            const QPolygonF line = lineOf(c, e);
            for (const auto &f : c.frames())
                for (qsizetype k = 1; k < line.size(); ++k)
                    QVERIFY2(!meets(line[k - 1], line[k], f.titlePlate()),
                             qPrintable(QStringLiteral("%1 -> %2 over the title of %3")
                                            .arg(QString::fromStdString(c.view().items[c.view().edges[e].from].label),
                                                 QString::fromStdString(c.view().items[c.view().edges[e].to].label),
                                                 QString::fromStdString(f.path))));
        }
    }

    /// Edges cross a frame's title band straight down, beside its title: none runs slanting or
    /// sideways within the band.
    void edgesStraightThroughTitleBands_data() { edges_data(); }
    void edgesStraightThroughTitleBands()
    {
        auto shown = shownForEdges();
        QVERIFY(shown && !shown->canvas.frames().empty());
        const views::GraphCanvas &c = shown->canvas;
        for (size_t e = 0; e < c.view().edges.size(); ++e) {
            const QPolygonF line = lineOf(c, e);
            for (const auto &f : c.frames()) {
                const QRectF band(f.rect.left(), f.rect.top(), f.rect.width(), layout::kFrameTitle);
                for (qsizetype k = 1; k < line.size(); ++k)
                    QVERIFY2(std::abs(line[k].x() - line[k - 1].x()) < 0.5 || !meets(line[k - 1], line[k], band),
                             qPrintable(QStringLiteral("%1 -> %2 slants through the title band of %3 %4")
                                            .arg(QString::fromStdString(c.view().items[c.view().edges[e].from].label),
                                                 QString::fromStdString(c.view().items[c.view().edges[e].to].label),
                                                 QString::fromStdString(f.path), describe(QRectF(line[k - 1], line[k])))));
            }
        }
    }

    /// The ghosts of a step's removed nodes last while that step is the one on screen: the next
    /// step has its own, and undo or the Pattern Editor drops them.
    void ghostsOnlyOfTheCurrentStep()
    {
        views::MainWindow w(testServices());
        w.resize(1400, 900);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/tangle50_torch.json")));
        views::GraphCanvas *c = w.canvas();
        c->expandAll();
        auto ghostLabels = [&] {
            std::set<std::string> out;
            for (const auto &g : c->ghosts())
                out.insert(g.label);
            return out;
        };
        QVERIFY(w.debugger()->applySelected());
        const auto first = ghostLabels();
        QVERIFY(!first.empty());
        QVERIFY(w.debugger()->applySelected());
        for (const auto &g : ghostLabels())
            QVERIFY2(!first.count(g), g.c_str());
        QVERIFY(w.debugger()->undo());
        QVERIFY(c->ghosts().empty());
        QVERIFY(w.debugger()->applySelected());
        QVERIFY(!c->ghosts().empty());
        auto *editor = w.findChild<QDockWidget *>(QStringLiteral("patternEditorDock"));
        QVERIFY(editor);
        editor->hide(); // (the window's saved layout may show it already)
        QVERIFY(!c->ghosts().empty());
        editor->show();
        editor->raise();
        QTRY_VERIFY_WITH_TIMEOUT(c->ghosts().empty(), kSlowWait);
    }

    /// A step that removes much of the picture leaves no hole: the view is laid out afresh.
    void holesClosedAfterLargeRemoval()
    {
        auto shown = expanded("resnet50_fx.json.gz", {QStringLiteral("layer1")});
        QVERIFY(shown);
        views::GraphCanvas &c = shown->canvas;
        ir::Graph &g = *shown->graph;
        // Block layer1.1 goes: its input feeds what read its output.
        ir::Node *in = nullptr, *out = nullptr;
        for (ir::Node *n = g.first(); n; n = n->next()) {
            if (n->name() == "layer1_0_relu_2")
                in = n;
            if (n->name() == "layer1_1_relu_2")
                out = n;
        }
        QVERIFY(in && out);
        g.replaceAllUsesWith(out, in);
        for (bool erased = true; erased;) {
            erased = false;
            for (ir::Node *n = g.first(); n; n = n->next())
                if (n->users().empty() && n->meta().modulePath().rfind("layer1.1", 0) == 0) {
                    erased = g.erase(n);
                    break;
                }
        }
        c.graphEdited();
        QVERIFY(c.ghosts().empty());
        std::map<std::string, QRectF> after;
        for (const auto &it : c.view().items)
            after[it.label] = rectOf(it);
        c.relayoutFresh();
        for (const auto &it : c.view().items)
            QVERIFY2(after[it.label] == rectOf(it), it.label.c_str()); // as a fresh layout: no hole
    }

    /// BERT's encoder layer 0 and its attention opened in place, one by one (as a person does):
    /// no node and no frame title in another frame's title band, each frame around all its
    /// nodes; so after every step of preset all with keep places, and after going back to the
    /// original and forward again.
    void bertFramesInPlaceAndAfterSteps()
    {
        views::MainWindow w(testServices());
        w.resize(1800, 1100);
        w.show();
        QVERIFY(w.openFile(QStringLiteral(FXLENS_EXAMPLES "/bert_base_dynamo.json.gz")));
        views::GraphCanvas *c = w.canvas();
        for (const QString &m : kBertLayer0) {
            c->setExpanded(m, true);
            QVERIFY2(framesUntrue(*c).isEmpty(), qPrintable(m + QStringLiteral(": ") + framesUntrue(*c)));
        }
        QVERIFY(c->frames().size() >= 4);
        QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
        auto shoot = [&](const char *name) {
            QVERIFY(c->selectNode(QStringLiteral("matmul")));
            c->zoomBy(0.8 / c->scale(), QPointF(c->width() / 2.0, c->height() / 2.0));
            QVERIFY(c->grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/") + QLatin1String(name)));
        };
        shoot("bert_layer0_frames.png");
        w.debugger()->setPreset(QStringLiteral("all"));
        int steps = 0;
        for (; w.debugger()->applySelected(); ++steps)
            QVERIFY2(framesUntrue(*c).isEmpty(), qPrintable(QStringLiteral("step %1: ").arg(steps + 1) + framesUntrue(*c)));
        QVERIFY(steps > 20);
        while (w.debugger()->undo()) {
        }
        QVERIFY2(framesUntrue(*c).isEmpty(), qPrintable(framesUntrue(*c)));
        for (int k = 0; w.debugger()->redo(); ++k)
            QVERIFY2(framesUntrue(*c).isEmpty(), qPrintable(QStringLiteral("redo %1: ").arg(k + 1) + framesUntrue(*c)));
        QVERIFY(c->isExpanded(kBertLayer0.back()));
        shoot("bert_layer0_keep_places.png");
    }

    /// The pictures a person looks at: ResNet-50's layer1 and one BERT encoder layer, expanded.
    void screenshots()
    {
        QDir().mkpath(QStringLiteral(FXLENS_BUILD_DIR "/screenshots"));
        auto resnet = expanded("resnet50_fx.json.gz", {QStringLiteral("layer1")});
        QVERIFY(resnet);
        resnet->canvas.relayoutFresh(); // (View > Re-layout: expanded in place, the title bands crowd the row above)
        QVERIFY(resnet->canvas.selectNode(QStringLiteral("layer1_0_conv1")));
        resnet->canvas.zoomBy(1.0 / resnet->canvas.scale(), QPointF(700, 450));
        QVERIFY(resnet->canvas.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/resnet50_layer1_expanded.png")));
        auto bert = expanded("bert_base_dynamo.json.gz", {QStringLiteral("model.encoder.layer.0")});
        QVERIFY(bert);
        for (const char *around : {"model", "model.encoder"}) // the layer's frame drawn, not its collapsed parent
            bert->canvas.setExpanded(QString::fromLatin1(around), true);
        bert->canvas.relayoutFresh();
        QVERIFY(bert->canvas.selectNode(QStringLiteral("matmul")));
        bert->canvas.zoomBy(0.9 / bert->canvas.scale(), QPointF(700, 450));
        const auto layer = std::find_if(bert->canvas.frames().begin(), bert->canvas.frames().end(),
                                        [](const auto &f) { return f.path == "model.encoder.layer.0.attention.self"; });
        QVERIFY(layer != bert->canvas.frames().end());
        QVERIFY(QRectF(bert->canvas.rect()).intersects(bert->canvas.itemRect(bert->canvas.itemOf(bert->graph->find("matmul")))));
        QVERIFY(bert->canvas.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/bert_encoder_layer.png")));
        auto self = expandedOnly("bert_base_dynamo.json.gz", kBertLayer0); // as --expand ...attention.self shows it, laid out afresh
        QVERIFY(self);
        const auto &top = *std::find_if(self->canvas.frames().begin(), self->canvas.frames().end(),
                                        [](const auto &f) { return f.path == "model.encoder.layer.0"; });
        self->canvas.setView(1.0, top.rect.topLeft() + QPointF(650, 400));
        QVERIFY(self->canvas.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/bert_layer0_self_fresh.png")));
        // The same views opened in place, one module after another (as --expand opens them).
        auto shootFrame = [](Shown &shown, const std::string &frame, const char *name) {
            const auto &frames = shown.canvas.frames();
            auto f = std::find_if(frames.begin(), frames.end(), [&](const auto &x) { return x.path == frame; });
            QVERIFY(f != frames.end());
            shown.canvas.setView(1.0, f->rect.topLeft() + QPointF(650, 400));
            QVERIFY(shown.canvas.grab().save(QStringLiteral(FXLENS_BUILD_DIR "/screenshots/") + QLatin1String(name)));
        };
        auto selfInPlace = expandedOnly("bert_base_dynamo.json.gz", kBertLayer0, false);
        QVERIFY(selfInPlace);
        shootFrame(*selfInPlace, "model.encoder.layer.0", "bert_layer0_self_in_place.png");
        auto layer10 = expandedOnly("resnet50_fx.json.gz", {QStringLiteral("layer1"), QStringLiteral("layer1.0")}, false);
        QVERIFY(layer10);
        shootFrame(*layer10, "layer1", "resnet50_layer1.0_in_place.png");
    }
};

QTEST_MAIN(TestCanvasDrawing)
#include "tst_CanvasDrawing.moc"
