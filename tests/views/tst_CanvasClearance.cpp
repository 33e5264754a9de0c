// SPDX-License-Identifier: MIT
// What lines run through on the canvas, measured on the views a person reaches: expanded modules
// after rewrite steps and history jumps, opened in place one by one. An edge keeps
// kEdgeFrameGap from a frame's sides and never leaves a frame that holds both its ends; no edge
// and no kernel outline runs through an edge's value label.
#include "GraphCanvas.h"
#include "MainWindow.h"
#include "RewriteDebugger.h"
#include "SourceServices.h"
#include "TestServices.h"

#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <numeric>

using namespace fxlens;

namespace {

/// How far along a frame's side an edge may run within kEdgeFrameGap of it (an edge that
/// crosses a side at a right angle is near it for no length along it).
constexpr double kAlongSide = 3;

/// The least gap an edge keeps from a frame's side it runs beside, in the scene: 12 px on screen at
/// the zoom a view lands at, told apart from the side at a glance (to half a pixel: a long edge's
/// lane lies just kEdgeFrameGap from the frames around it).
constexpr double kSideGap = 12 / views::GraphCanvas::kLandScale - 0.5;
static_assert(kSideGap <= layout::kEdgeFrameGap, "the layout keeps edges this far from frame sides");

struct Window {
    views::MainWindow w{testServices()};
    views::GraphCanvas *canvas() { return w.canvas(); }
};

/// The example `file` in a window, each module in `expand` opened with the modules around it (as
/// --expand opens it), then `steps` steps of Run (as --apply-steps runs them).
std::unique_ptr<Window> opened(const char *file, const QStringList &expand, int steps)
{
    auto win = std::make_unique<Window>();
    win->w.resize(1200, 800);
    win->w.show();
    if (!win->w.openFile(QStringLiteral(FXLENS_EXAMPLES "/") + QLatin1String(file)))
        return nullptr;
    for (const QString &m : expand) {
        const QStringList parts = m.split(QLatin1Char('.'));
        for (int i = 1; i <= parts.size(); ++i)
            win->canvas()->setExpanded(parts.mid(0, i).join(QLatin1Char('.')), true);
    }
    if (steps > 0)
        win->w.debugger()->run(steps);
    return win;
}

QString edgeName(const views::GraphCanvas &c, size_t e)
{
    const auto &edge = c.view().edges[e];
    return QString::fromStdString(c.view().items[edge.from].label + " -> " + c.view().items[edge.to].label);
}

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

QString describe(const QRectF &r) { return QStringLiteral("(%1,%2 %3x%4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height()); }

bool within(const std::string &cluster, const std::string &path) { return cluster == path || cluster.rfind(path + ".", 0) == 0; }

/// How far along the vertical line x = `side` (from y0 to y1) segment a-b runs within `gap` of it:
/// the y extent of the part of the segment in that band.
double alongSide(QPointF a, QPointF b, double side, double y0, double y1, double gap)
{
    double t0 = 0, t1 = 1;
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
    clip(a.x(), b.x(), side - gap, side + gap);
    clip(a.y(), b.y(), y0, y1);
    return t1 > t0 ? (t1 - t0) * std::abs(b.y() - a.y()) : 0;
}

/// What is wrong with the edges beside the frames ("" when nothing): an edge that runs along a
/// frame's side within kEdgeFrameGap of it, or that leaves a frame holding both its ends.
QString edgesBesideFrames(const views::GraphCanvas &c)
{
    const auto &v = c.view();
    for (size_t e = 0; e < v.edges.size(); ++e) {
        const QPolygonF line = lineOf(c, e);
        const auto &from = v.items[v.edges[e].from], &to = v.items[v.edges[e].to];
        for (const auto &f : c.frames()) {
            const QRectF r = f.rect;
            if (within(from.cluster, f.path) && within(to.cluster, f.path))
                for (const QPointF &p : line)
                    if (!r.contains(p))
                        return edgeName(c, e) +
                            QStringLiteral(" leaves the frame of %1 %2 at %3,%4")
                                .arg(QString::fromStdString(f.path), describe(r))
                                .arg(p.x())
                                .arg(p.y());
            for (qsizetype k = 1; k < line.size(); ++k)
                for (const double side : {r.left(), r.right()})
                    if (const double along = alongSide(line[k - 1], line[k], side, r.top(), r.bottom(), kSideGap); along > kAlongSide)
                        return edgeName(c, e) +
                            QStringLiteral(" runs %1 px along a side of %2 %3: %4")
                                .arg(along)
                                .arg(QString::fromStdString(f.path), describe(r), describe(QRectF(line[k - 1], line[k])));
        }
    }
    return {};
}

/// How far two edges may run along one line (a pixel or two where they meet at an item's middle).
constexpr double kSharedLength = 3;

/// The length two segments run along one line (0 when they are not collinear, or do not overlap).
double collinearOverlap(QPointF a, QPointF b, QPointF c, QPointF d)
{
    const QPointF u = b - a;
    const double len = std::hypot(u.x(), u.y());
    if (len < 1e-6)
        return 0;
    const QPointF n = u / len;
    const auto off = [&](QPointF p) { return std::abs((p.x() - a.x()) * n.y() - (p.y() - a.y()) * n.x()); };
    if (off(c) > 0.5 || off(d) > 0.5)
        return 0;
    const auto along = [&](QPointF p) { return (p.x() - a.x()) * n.x() + (p.y() - a.y()) * n.y(); };
    const double lo = std::max(0.0, std::min(along(c), along(d))), hi = std::min(len, std::max(along(c), along(d)));
    return std::max(0.0, hi - lo);
}

/// Two edges drawn along one line for more than kSharedLength ("" when none). Edges out of one
/// item carry its value and are drawn as one trunk that branches; edges into one item meet at its
/// arrowhead: those may share their lines.
QString sharedSegments(const views::GraphCanvas &c)
{
    const auto &v = c.view();
    struct Seg {
        QPointF a, b;
        size_t edge;
    };
    std::vector<Seg> segs;
    for (size_t e = 0; e < v.edges.size(); ++e) {
        const QPolygonF line = lineOf(c, e);
        for (qsizetype k = 1; k < line.size(); ++k)
            segs.push_back({line[k - 1], line[k], e});
    }
    for (size_t i = 0; i < segs.size(); ++i) {
        const QRectF ri = QRectF(segs[i].a, segs[i].b).normalized().adjusted(-1, -1, 1, 1);
        for (size_t j = i + 1; j < segs.size(); ++j) {
            const auto &ei = v.edges[segs[i].edge], &ej = v.edges[segs[j].edge];
            if (ei.from == ej.from || ei.to == ej.to || !ri.intersects(QRectF(segs[j].a, segs[j].b).normalized().adjusted(-1, -1, 1, 1)))
                continue;
            if (const double len = collinearOverlap(segs[i].a, segs[i].b, segs[j].a, segs[j].b); len > kSharedLength)
                return edgeName(c, segs[i].edge) + QStringLiteral(" and ") + edgeName(c, segs[j].edge) +
                    QStringLiteral(" share %1 px: %2 and %3")
                        .arg(len)
                        .arg(describe(QRectF(segs[i].a, segs[i].b)), describe(QRectF(segs[j].a, segs[j].b)));
        }
    }
    return {};
}

/// Whether segment a-b enters the rectangle's interior.
bool meets(QPointF a, QPointF b, const QRectF &r)
{
    const int steps = int(QLineF(a, b).length()) + 2;
    for (int k = 0; k <= steps; ++k)
        if (const QPointF p = a + (b - a) * (double(k) / steps); r.contains(p) && p.x() > r.left() && p.x() < r.right())
            return true;
    return false;
}

/// Whether one straight line from p to q (of edge e) would do: it passes no item but e's ends
/// (by 2 px), and crosses no frame's border (both ends in the same frames, clear of the others).
bool straightWouldDo(const views::GraphCanvas &c, size_t e, QPointF p, QPointF q)
{
    const auto &v = c.view();
    for (size_t i = 0; i < v.items.size(); ++i)
        if (i != v.edges[e].from && i != v.edges[e].to &&
            meets(p, q, QRectF(v.items[i].x, v.items[i].y, v.items[i].w, v.items[i].h).adjusted(-2, -2, 2, 2)))
            return false;
    for (const auto &f : c.frames())
        if (f.rect.contains(p) != f.rect.contains(q) || (!f.rect.contains(p) && meets(p, q, f.rect)))
            return false;
    return true;
}

/// The edge drawn as a staircase ("" when none): three sideways jogs or more in one direction,
/// with only straight-down pieces between them, where one straight line would do
/// (straightWouldDo). `bends` counts every bend of every edge.
QString staircases(const views::GraphCanvas &c, int *bends = nullptr)
{
    QString found;
    for (size_t e = 0; e < c.view().edges.size(); ++e) {
        const QPolygonF line = lineOf(c, e);
        int run = 0, dir = 0;
        qsizetype runStart = 0;
        for (qsizetype k = 1; k < line.size(); ++k) {
            const double dx = line[k].x() - line[k - 1].x();
            if (bends && k + 1 < line.size()) {
                const QPointF u = line[k] - line[k - 1], w = line[k + 1] - line[k];
                *bends += std::abs(u.x() * w.y() - u.y() * w.x()) > 1e-3 * std::hypot(u.x(), u.y()) * std::hypot(w.x(), w.y());
            }
            if (std::abs(dx) < 0.5)
                continue;
            const int d = dx > 0 ? 1 : -1;
            if (d != dir)
                runStart = k - 1, run = 0;
            ++run;
            dir = d;
            if (run >= 3 && found.isEmpty() && straightWouldDo(c, e, line[runStart], line[k]))
                found = edgeName(c, e) +
                    QStringLiteral(" steps %1 times sideways from %2,%3 to %4,%5 where a line would do")
                        .arg(run)
                        .arg(line[runStart].x())
                        .arg(line[runStart].y())
                        .arg(line[k].x())
                        .arg(line[k].y());
        }
    }
    return found;
}

/// Edges of one source that pass a row of items around both of its ends, drawing a box around
/// the row ("" when none).
QString rowsBoxed(const views::GraphCanvas &c)
{
    const auto &v = c.view();
    // Rows: items whose vertical extents overlap.
    std::vector<size_t> byY(v.items.size());
    std::iota(byY.begin(), byY.end(), size_t(0));
    std::sort(byY.begin(), byY.end(), [&](size_t a, size_t b) { return v.items[a].y < v.items[b].y; });
    struct Row {
        double top, bottom, left = 1e300, right = -1e300;
        size_t items = 0;
    };
    std::vector<Row> rows;
    for (size_t i : byY) {
        const auto &it = v.items[i];
        if (rows.empty() || it.y >= rows.back().bottom)
            rows.push_back({it.y, it.y + it.h});
        auto &r = rows.back();
        r.bottom = std::max(r.bottom, it.y + it.h), r.left = std::min(r.left, it.x), r.right = std::max(r.right, it.x + it.w);
        ++r.items;
    }
    std::map<std::pair<uint32_t, size_t>, int> sides; // (source, row) -> bit 1: passes left of it, 2: right
    for (size_t e = 0; e < v.edges.size(); ++e) {
        const QPolygonF line = lineOf(c, e);
        for (qsizetype k = 1; k < line.size(); ++k)
            for (size_t r = 0; r < rows.size(); ++r) {
                const Row &row = rows[r];
                const double y0 = std::min(line[k - 1].y(), line[k].y()), y1 = std::max(line[k - 1].y(), line[k].y());
                if (row.items < 3 || y0 > row.top + 1 || y1 < row.bottom - 1)
                    continue;
                const double x = (line[k - 1].x() + line[k].x()) / 2;
                sides[{v.edges[e].from, r}] |= x < row.left ? 1 : x > row.right ? 2 : 0;
            }
    }
    for (const auto &[key, s] : sides)
        if (s == 3)
            return QString::fromStdString(v.items[key.first].label) +
                QStringLiteral("'s edges pass around both ends of the row at y %1").arg(rows[key.second].top);
    return {};
}

/// The edge that runs through an edge label ("" when none): a segment of an edge (its own edge's
/// arrowhead aside: it is no segment).
QString edgesThroughLabels(const views::GraphCanvas &c)
{
    for (const auto &l : c.edgeLabels())
        for (size_t e = 0; e < c.view().edges.size(); ++e) {
            const QPolygonF line = lineOf(c, e);
            for (qsizetype k = 1; k < line.size(); ++k)
                if (meets(line[k - 1], line[k], l.rect))
                    return edgeName(c, e) +
                        QStringLiteral(" through the label %1 %2 of %3").arg(l.text, describe(l.rect), edgeName(c, l.edge));
        }
    return {};
}

/// The kernel outline that runs through an edge label ("" when none).
QString outlinesThroughLabels(const views::GraphCanvas &c)
{
    for (const auto &l : c.edgeLabels())
        for (size_t g = 0; g < c.kernelGroups().size(); ++g)
            for (const QPolygonF &ring : c.kernelOutline(int(g)).toSubpathPolygons()) {
                for (qsizetype k = 1; k < ring.size(); ++k)
                    if (meets(ring[k - 1], ring[k], l.rect))
                        return c.kernelGroups()[g].name +
                            QStringLiteral("'s outline through the label %1 %2 of %3").arg(l.text, describe(l.rect), edgeName(c, l.edge));
            }
    return {};
}

/// The ink of a vertical stroke at scene x, at scene y, in `scene` (exportScenePng at scale 1: the
/// scene 20 px in): how much darker than what lies 3 px either side (the lighter side) the pixels
/// it covers are, summed (a line between two pixels columns is drawn half as dark in each).
int strokeContrast(const QImage &scene, double x, double y)
{
    const int px = int(std::floor(x)) + 20, py = int(std::lround(y)) + 20;
    const int beside = std::max(qGray(scene.pixel(px - 3, py)), qGray(scene.pixel(px + 3, py)));
    int ink = 0;
    for (int dx = -1; dx <= 1; ++dx)
        ink += std::max(0, beside - qGray(scene.pixel(px + dx, py)));
    return ink;
}

/// The median of `v` (0 for none).
int median(std::vector<int> v)
{
    if (v.empty())
        return 0;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
}

const QStringList kLayer3 = {QStringLiteral("model.encoder.layer.3")};
const QStringList kLayer0Self = {QStringLiteral("model.encoder.layer.0.attention.self")};
const QStringList kResnetLayer12 = {QStringLiteral("layer1"), QStringLiteral("layer1.0"), QStringLiteral("layer1.2")};

} // namespace

class TestCanvasClearance : public QObject {
    Q_OBJECT
private Q_SLOTS:
    /// The views: BERT after a full run with layer 0's self-attention open; BERT's layer 3 after 87
    /// steps, and after going back to step 83 and forward again; ResNet-50's layer1, layer1.0 and
    /// layer1.2 opened one by one.
    void views_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("expand");
        QTest::addColumn<int>("steps");
        QTest::addColumn<int>("jumpTo"); // a version to check out and come back from (-1: none)
        const QString bert = QStringLiteral("bert_base_dynamo.json.gz");
        QTest::newRow("bert layer0 self after run") << bert << kLayer0Self << 200 << -1;
        QTest::newRow("bert layer0 self") << bert << kLayer0Self << 0 << -1;
        QTest::newRow("bert layer3 after 87") << bert << kLayer3 << 87 << -1;
        QTest::newRow("bert layer3 87 83 87") << bert << kLayer3 << 87 << 83;
        QTest::newRow("resnet50 layer1.2") << QStringLiteral("resnet50_fx.json.gz") << kResnetLayer12 << 0 << -1;
    }

    std::unique_ptr<Window> shown()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, expand);
        QFETCH(int, steps);
        QFETCH(int, jumpTo);
        auto win = opened(qPrintable(file), expand, steps);
        if (win && jumpTo >= 0) {
            const int at = win->w.debugger()->version();
            if (!win->w.debugger()->checkout(jumpTo) || !win->w.debugger()->checkout(at))
                return nullptr;
        }
        // FXLENS_SHOTS=DIR: the whole scene at scale 1 (offset by 20 px) and its frames, to look at.
        if (const QString dir = qEnvironmentVariable("FXLENS_SHOTS"); win && !dir.isEmpty()) {
            const QString name =
                dir + QLatin1Char('/') + QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_'));
            win->canvas()->exportScenePng(name + QStringLiteral(".png"));
            win->canvas()->exportScenePng(name + QStringLiteral("_0.6.png"), 0.6);
            QFile out(name + QStringLiteral(".txt"));
            if (out.open(QIODevice::WriteOnly)) {
                out.write(qPrintable(QStringLiteral("labels %1 of %2 edges\n")
                                         .arg(win->canvas()->edgeLabels().size())
                                         .arg(win->canvas()->view().edges.size())));
                for (const auto &f : win->canvas()->frames())
                    out.write(qPrintable(QString::fromStdString(f.path) + QLatin1Char(' ') + describe(f.rect) + QLatin1Char('\n')));
            }
        }
        return win;
    }

    /// No edge runs along a frame's side within kEdgeFrameGap of it, and none leaves a frame
    /// that holds both its ends.
    void edgesClearOfFrameSides_data() { views_data(); }
    void edgesClearOfFrameSides()
    {
        auto win = shown();
        QVERIFY(win);
        QVERIFY(win->canvas()->frames().size() >= 3);
        const QString wrong = edgesBesideFrames(*win->canvas());
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    /// Nested frames read as bands of colour, not as parallel lines an edge could be taken for:
    /// each frame's sides are drawn at most half as dark (against what lies beside them) as the
    /// edges are, and still darker than their fill (the band's edge shows).
    void frameSidesFainterThanEdges_data() { views_data(); }
    void frameSidesFainterThanEdges()
    {
        auto win = shown();
        QVERIFY(win);
        const views::GraphCanvas &c = *win->canvas();
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("scene.png"));
        QVERIFY(win->canvas()->exportScenePng(file));
        const QImage scene(file);
        QVERIFY(!scene.isNull());
        std::vector<int> edges; // each long vertical stretch of an edge, at its middle
        for (size_t e = 0; e < c.view().edges.size(); ++e) {
            const QPolygonF line = lineOf(c, e);
            for (qsizetype k = 1; k < line.size(); ++k)
                if (std::abs(line[k].x() - line[k - 1].x()) < 0.5 && std::abs(line[k].y() - line[k - 1].y()) > 30)
                    edges.push_back(strokeContrast(scene, line[k].x(), (line[k].y() + line[k - 1].y()) / 2));
        }
        const int edge = median(edges);
        QVERIFY2(edge >= 80, qPrintable(QString::number(edge)));
        for (const auto &f : c.frames())
            for (const double x : {f.rect.left(), f.rect.right()}) {
                std::vector<int> side; // at five heights down the side's middle
                for (int k = 1; k <= 5; ++k)
                    side.push_back(strokeContrast(scene, x, f.rect.top() + f.rect.height() * (0.2 + 0.1 * k)));
                const int contrast = median(side);
                QVERIFY2(
                    contrast * 2 <= edge && contrast >= 8,
                    qPrintable(QStringLiteral("a side of %1: %2 (edges %3)").arg(QString::fromStdString(f.path)).arg(contrast).arg(edge)));
            }
    }

    /// The views above and more: the transformer, tangle4 as it opens and with a block open.
    void moreViews_data()
    {
        views_data();
        QTest::newRow("transformer") << QStringLiteral("transformer_dynamo.json") << QStringList() << 0 << -1;
        QTest::newRow("tangle4") << QStringLiteral("tangle4_fx.json") << QStringList() << 0 << -1;
        QTest::newRow("tangle4 blocks.3") << QStringLiteral("tangle4_fx.json") << QStringList{QStringLiteral("blocks.3")} << 0 << -1;
        QTest::newRow("tangle4 blocks.0") << QStringLiteral("tangle4_fx.json") << QStringList{QStringLiteral("blocks.0")} << 0 << -1;
        QTest::newRow("resnet50 layer1") << QStringLiteral("resnet50_fx.json.gz") << QStringList{QStringLiteral("layer1")} << 0 << -1;
    }

    /// Every edge has a line of its own: no two edges (but those out of one item, one value
    /// drawn as a trunk that branches, or into one item, meeting at its arrowhead) run along one
    /// line for more than a few pixels, where one could not tell which goes where.
    void edgesShareNoSegment_data() { moreViews_data(); }
    void edgesShareNoSegment()
    {
        auto win = shown();
        QVERIFY(win);
        const QString wrong = sharedSegments(*win->canvas());
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    /// No edge is drawn as a staircase of short jogs (three sideways in one direction): where
    /// nothing is in the way, it runs straight.
    void edgesNotStairs_data() { moreViews_data(); }
    void edgesNotStairs()
    {
        auto win = shown();
        QVERIFY(win);
        int bends = 0;
        const QString wrong = staircases(*win->canvas(), &bends);
        qInfo("%d bends over %zu edges", bends, win->canvas()->view().edges.size());
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    /// The edges of one item that fan out past a row do not pass it around both ends: they
    /// would draw a box around the row that reads as a module's frame.
    void rowsNotBoxed_data() { moreViews_data(); }
    void rowsNotBoxed()
    {
        auto win = shown();
        QVERIFY(win);
        const QString wrong = rowsBoxed(*win->canvas());
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    /// No edge runs through an edge's value label (its own included).
    void edgesClearOfLabels_data() { views_data(); }
    void edgesClearOfLabels()
    {
        auto win = shown();
        QVERIFY(win);
        QVERIFY(!win->canvas()->edgeLabels().empty());
        const QString wrong = edgesThroughLabels(*win->canvas());
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    /// A compiled profile's kernels outlined on the transformer: no outline and no edge runs
    /// through an edge label.
    void kernelOutlinesClearOfLabels()
    {
        test::CompiledTransformer o(QStringLiteral(FXLENS_TEST_DATA "/profile/compiled_post_grad_cpu.json"));
        views::GraphCanvas *c = o.w.canvas();
        QVERIFY(!c->kernelGroups().empty());
        QVERIFY(!c->edgeLabels().empty());
        if (const QString dir = qEnvironmentVariable("FXLENS_SHOTS"); !dir.isEmpty())
            c->exportScenePng(dir + QStringLiteral("/transformer_kernels.png"));
        const QString outline = outlinesThroughLabels(*c);
        QVERIFY2(outline.isEmpty(), qPrintable(outline));
        const QString edge = edgesThroughLabels(*c);
        QVERIFY2(edge.isEmpty(), qPrintable(edge));
    }
};

QTEST_MAIN(TestCanvasClearance)
#include "tst_CanvasClearance.moc"
