// SPDX-License-Identifier: MIT
// GraphCanvas: edges (routes, arrowheads, value labels, the selection's in/out edges), colours by
// op category, tooltips and constants (see GraphCanvas.h). The legend is in CanvasLegend.cpp,
// module frames in CanvasFrames.cpp, export in CanvasExport.cpp.
#include "GraphCanvas.h"
#include "ToolTip.h"

#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

namespace fxlens::views {

using layout::OpCategory;
using layout::ViewItem;

QColor GraphCanvas::categoryColour(OpCategory c, bool dark)
{
    // Light / dark fills, one hue per category (Model Explorer and Netron colour by op kind too).
    static const std::array<std::pair<QRgb, QRgb>, layout::kOpCategories> colours = {{
        {qRgb(0xd4, 0xf0, 0xd8), qRgb(0x2e, 0x5a, 0x3a)}, // input
        {qRgb(0xfc, 0xe0, 0xc4), qRgb(0x66, 0x44, 0x22)}, // output
        {qRgb(0xe6, 0xe6, 0xe6), qRgb(0x4a, 0x4a, 0x4a)}, // parameter / constant
        {qRgb(0xc9, 0xda, 0xfb), qRgb(0x2b, 0x44, 0x77)}, // matmul / conv
        {qRgb(0xe4, 0xee, 0xf8), qRgb(0x33, 0x40, 0x4d)}, // elementwise
        {qRgb(0xf6, 0xd6, 0xe4), qRgb(0x5c, 0x2e, 0x44)}, // reduction
        {qRgb(0xe2, 0xf4, 0xf1), qRgb(0x25, 0x50, 0x4a)}, // view / reshape
        {qRgb(0xff, 0xe8, 0xa8), qRgb(0x66, 0x55, 0x1a)}, // data movement
        {qRgb(0xe2, 0xd8, 0xf6), qRgb(0x46, 0x33, 0x66)}, // normalization
        {qRgb(0xfb, 0xf3, 0xd5), qRgb(0x4a, 0x44, 0x2a)}, // module
        {qRgb(0xee, 0xee, 0xf2), qRgb(0x3c, 0x3c, 0x44)}, // other
    }};
    const auto &p = colours[size_t(c)];
    return QColor(dark ? p.second : p.first);
}

QPolygonF GraphCanvas::edgeLine(size_t e) const
{
    const auto &edge = m_view.edges[e];
    QPolygonF line;
    if (edge.route.size() >= 2) {
        line.reserve(qsizetype(edge.route.size()));
        for (const auto &p : edge.route)
            line << QPointF(p.x, p.y);
    } else {
        const auto &a = m_view.items[edge.from], &b = m_view.items[edge.to];
        line << QPointF(a.x + a.w / 2, a.y + a.h) << QPointF(b.x + b.w / 2, b.y);
    }
    return line;
}

QRectF GraphCanvas::edgeBounds(size_t e) const { return e < m_edgeBounds.size() ? m_edgeBounds[e] : QRectF(); }

void GraphCanvas::indexEdges()
{
    m_edgesOf.assign(m_view.items.size(), {});
    m_edgeBounds.resize(m_view.edges.size());
    for (size_t e = 0; e < m_view.edges.size(); ++e) {
        const auto &edge = m_view.edges[e];
        m_edgesOf[edge.from].push_back(uint32_t(e));
        m_edgesOf[edge.to].push_back(uint32_t(e));
        const auto &a = m_view.items[edge.from], &b = m_view.items[edge.to];
        QRectF r = QRectF(a.x, a.y, a.w, a.h).united(QRectF(b.x, b.y, b.w, b.h));
        for (const auto &p : edge.route)
            r = r.united(QRectF(p.x, p.y, 0, 0));
        m_edgeBounds[e] = r;
    }
}

namespace {

double lengthOf(const QPolygonF &l)
{
    double len = 0;
    for (qsizetype k = 1; k < l.size(); ++k)
        len += QLineF(l[k - 1], l[k]).length();
    return len;
}

/// A filled arrowhead at the end of `line`, `size` scene units long.
QPolygonF arrowhead(const QPolygonF &line, double size)
{
    const QPointF tip = line.back();
    QPointF from = line[line.size() - 2];
    for (qsizetype k = line.size() - 2; k >= 0 && QLineF(line[k], tip).length() < 1e-6; --k)
        from = line[k];
    QLineF dir(tip, from);
    if (dir.length() < 1e-6)
        return {};
    dir.setLength(size);
    const QPointF back = dir.p2(), normal = QPointF(-(back.y() - tip.y()), back.x() - tip.x()) * 0.45;
    return QPolygonF({tip, back + normal, back - normal});
}

} // namespace

/// The edges of `items`: a budget of edge pixels when zoomed out, arrowheads once they are a few
/// pixels long, the value each edge carries (shape and dtype) once text is legible, and the
/// selection's inputs and outputs in their own colours on top.
void GraphCanvas::paintEdges(QPainter &p, const std::vector<int> &items, const QRectF &sceneRect, double scale, bool everything,
                             const QColor &edge)
{
    const bool aa = p.testRenderHint(QPainter::Antialiasing);
    // Zoomed out, long diagonal lines are the costliest thing to smooth and gain little from it.
    p.setRenderHint(QPainter::Antialiasing, everything || scale >= 0.5);
    QVector<QLineF> lines;
    const std::vector<size_t> shown = edgesToDraw(items, sceneRect, scale, everything, lines);
    p.setPen(QPen(edge, 0.0));
    p.drawLines(lines);
    if (everything || scale >= 0.3)
        paintArrowheads(p, shown, sceneRect, everything, edge);
    paintSelectedEdges(p, scale);
    if (everything || scale >= kEdgeLabelScale)
        paintEdgeLabels(p, shown, sceneRect, everything);
    p.setRenderHint(QPainter::Antialiasing, aa);
}

std::vector<size_t> GraphCanvas::edgesToDraw(const std::vector<int> &items, const QRectF &sceneRect, double scale, bool everything,
                                             QVector<QLineF> &lines) const
{
    std::vector<uint8_t> drawn(m_view.edges.size(), 0);
    std::vector<size_t> shown;
    double edgePixels = 0;
    // Zoomed out, edges are thin grey strokes that cost most of a frame: the budget shrinks with
    // the zoom (a fifth of it at 0.2).
    const double budget = kEdgePixelBudget * std::clamp(scale, 0.2, 1.0);
    // Draws edge `e`; false once over the budget.
    const auto take = [&](size_t e) {
        drawn[e] = 1;
        const QPolygonF line = edgeLine(e);
        if (!everything) {
            const bool bothInView = sceneRect.contains(line.front()) && sceneRect.contains(line.back());
            if (scale < 0.25 && !bothInView)
                return true;
            edgePixels += lengthOf(line) * scale;
            if (edgePixels > budget)
                return false; // over the budget: what is drawn so far
        }
        for (qsizetype k = 1; k < line.size(); ++k)
            lines.push_back(QLineF(line[k - 1], line[k]));
        shown.push_back(e);
        return true;
    };
    // A hub (an input read by thousands of nodes, a cat of thousands) keeps only the edges whose
    // other end is in view: the rest would cross the screen as a solid fan.
    for (int i : items) {
        const bool hub = !everything && m_edgesOf[size_t(i)].size() > 16;
        for (uint32_t e : m_edgesOf[size_t(i)]) {
            if (drawn[e])
                continue;
            const auto &a = m_view.items[m_view.edges[e].from], &b = m_view.items[m_view.edges[e].to];
            if (hub) {
                const auto &other = int(m_view.edges[e].from) == i ? b : a;
                if (!sceneRect.intersects(QRectF(other.x, other.y, other.w, other.h)))
                    continue;
            }
            if (!take(e))
                return shown;
        }
    }
    // Zoomed in, an edge with both ends off screen that crosses it (a long skip edge) too.
    if (!everything && scale >= 0.25 && m_edgeBounds.size() <= kCrossingEdgeLimit)
        for (size_t e = 0; e < m_edgeBounds.size(); ++e)
            if (!drawn[e] && m_edgeBounds[e].intersects(sceneRect) && !take(e))
                break;
    return shown;
}

void GraphCanvas::paintArrowheads(QPainter &p, const std::vector<size_t> &shown, const QRectF &sceneRect, bool everything,
                                  const QColor &edge) const
{
    // One path for every arrowhead in view: one fill call. The selection's edges get theirs in
    // paintSelectedEdges().
    QPainterPath heads;
    heads.setFillRule(Qt::WindingFill);
    for (size_t e : shown)
        if (int(m_view.edges[e].from) != m_selected && int(m_view.edges[e].to) != m_selected) {
            const auto &b = m_view.items[m_view.edges[e].to];
            if (everything || sceneRect.intersects(QRectF(b.x, b.y - 10, b.w, 10)))
                heads.addPolygon(arrowhead(edgeLine(e), 8));
        }
    p.fillPath(heads, edge);
}

void GraphCanvas::paintSelectedEdges(QPainter &p, double scale) const
{
    // The selection's edges: its inputs in blue, its outputs in orange, drawn over the rest.
    if (m_selected < 0 || size_t(m_selected) >= m_edgesOf.size())
        return;
    const QColor in(40, 110, 220), out(230, 110, 0);
    for (uint32_t e : m_edgesOf[size_t(m_selected)]) {
        const QColor c = int(m_view.edges[e].to) == m_selected ? in : out;
        const QPolygonF line = edgeLine(e);
        p.setPen(QPen(c, 2.5 / std::max(scale, 0.05)));
        p.setBrush(Qt::NoBrush);
        p.drawPolyline(line);
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawPolygon(arrowhead(line, 10));
    }
}

void GraphCanvas::paintEdgeLabels(QPainter &p, const std::vector<size_t> &shown, const QRectF &sceneRect, bool everything) const
{
    // The labels placed for this layout (placeEdgeLabels), of the edges drawn, in view.
    std::vector<uint8_t> drawn(m_view.edges.size(), 0);
    for (size_t e : shown)
        drawn[e] = 1;
    QFont f = p.font();
    f.setPixelSize(kEdgeLabelPixels);
    p.setFont(f);
    p.setPen(palette().color(QPalette::PlaceholderText));
    for (const auto &l : m_edgeLabels)
        if (drawn[l.edge] && (everything || sceneRect.intersects(l.rect)))
            p.drawText(l.rect, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, l.text);
}

namespace {

/// Rectangles by the cells of a coarse grid: what a label may not cover.
class Obstacles {
public:
    void add(const QRectF &r)
    {
        const size_t k = m_rects.size();
        m_rects.push_back(r);
        forCells(r, [&](int64_t c) { m_cells[c].push_back(k); });
    }
    bool hits(const QRectF &r) const
    {
        bool hit = false;
        forCells(r, [&](int64_t c) {
            if (auto it = m_cells.find(c); !hit && it != m_cells.end())
                for (size_t k : it->second)
                    if (m_rects[k].intersects(r)) {
                        hit = true;
                        break;
                    }
        });
        return hit;
    }

private:
    static constexpr double kCell = 96;
    template <typename F> static void forCells(const QRectF &r, F &&f)
    {
        for (int64_t y = int64_t(std::floor(r.top() / kCell)); y <= int64_t(std::floor(r.bottom() / kCell)); ++y)
            for (int64_t x = int64_t(std::floor(r.left() / kCell)); x <= int64_t(std::floor(r.right() / kCell)); ++x)
                f(y * (int64_t(1) << 32) + x);
    }
    std::vector<QRectF> m_rects;
    std::unordered_map<int64_t, std::vector<size_t>> m_cells;
};

/// Edge segments and outline sides by the cells of a coarse grid: what a label's text may not be
/// crossed by.
class Lines {
public:
    void add(QPointF a, QPointF b)
    {
        const size_t k = m_lines.size();
        m_lines.emplace_back(a, b);
        forCells(QRectF(a, b).normalized(), [&](int64_t c) { m_cells[c].push_back(k); });
    }
    void addOutline(const QPainterPath &outline)
    {
        for (const QPolygonF &ring : outline.toSubpathPolygons())
            for (qsizetype k = 1; k < ring.size(); ++k)
                add(ring[k - 1], ring[k]);
    }
    bool hits(const QRectF &r) const
    {
        bool hit = false;
        forCells(r, [&](int64_t c) {
            if (auto it = m_cells.find(c); !hit && it != m_cells.end())
                hit = std::any_of(it->second.begin(), it->second.end(), [&](size_t k) { return crosses(m_lines[k], r); });
        });
        return hit;
    }

private:
    static constexpr double kCell = 96;
    /// Whether the segment meets the rectangle (Liang–Barsky clipping).
    static bool crosses(const QLineF &l, const QRectF &r)
    {
        double t0 = 0, t1 = 1;
        const double dx = l.dx(), dy = l.dy();
        const double p[4] = {-dx, dx, -dy, dy}, q[4] = {l.x1() - r.left(), r.right() - l.x1(), l.y1() - r.top(), r.bottom() - l.y1()};
        for (int i = 0; i < 4; ++i) {
            if (p[i] == 0) {
                if (q[i] < 0)
                    return false;
                continue;
            }
            const double t = q[i] / p[i];
            if (p[i] < 0)
                t0 = std::max(t0, t);
            else
                t1 = std::min(t1, t);
            if (t0 > t1)
                return false;
        }
        return true;
    }
    template <typename F> static void forCells(const QRectF &r, F &&f)
    {
        for (int64_t y = int64_t(std::floor(r.top() / kCell)); y <= int64_t(std::floor(r.bottom() / kCell)); ++y)
            for (int64_t x = int64_t(std::floor(r.left() / kCell)); x <= int64_t(std::floor(r.right() / kCell)); ++x)
                f(y * (int64_t(1) << 32) + x);
    }
    std::vector<QLineF> m_lines;
    std::unordered_map<int64_t, std::vector<size_t>> m_cells;
};

/// Where a label may go beside an edge, best first: beside the middle of its last stretch (into
/// the target), then of its first, then further along either, right of the line before left.
std::vector<QRectF> labelPlaces(const QPolygonF &line, QSizeF size)
{
    std::vector<QRectF> out;
    std::vector<qsizetype> order;
    for (qsizetype k = line.size() - 1; k >= 1; --k)
        order.push_back(k);
    if (order.size() > 1)
        std::rotate(order.begin() + 1, order.end() - 1, order.end()); // the first stretch second
    for (double t : {0.5, 0.3, 0.7})
        for (qsizetype k : order) {
            const QLineF seg(line[k - 1], line[k]);
            if (seg.length() < size.height() + 4)
                continue;
            const QPointF at = seg.pointAt(t);
            out.emplace_back(QPointF(at.x() + 4, at.y() - size.height() / 2), size);
            out.emplace_back(QPointF(at.x() - 4 - size.width(), at.y() - size.height() / 2), size);
        }
    return out;
}

} // namespace

void GraphCanvas::clearGhosts()
{
    if (m_ghosts.empty())
        return;
    m_ghosts.clear();
    placeLabels(); // labels may take the places the ghosts held
    update();
}

void GraphCanvas::placeEdgeLabels()
{
    m_edgeLabels.clear();
    constexpr size_t kMaxLabelledEdges = 30000;
    if (m_view.edges.size() > kMaxLabelledEdges)
        return;
    QFont f = font();
    f.setPixelSize(kEdgeLabelPixels);
    const QFontMetricsF fm(f);
    Obstacles taken;
    for (const auto &it : m_view.items)
        taken.add(QRectF(it.x - 1, it.y - 1, it.w + 2, it.h + 2));
    for (const auto &g : m_ghosts)
        taken.add(QRectF(g.x - 1, g.y - 1, g.w + 2, g.h + 2));
    for (const auto &fr : m_frames)
        taken.add(fr.titleRect());
    // What a label's text may not be crossed by: the edges (the arrowheads, and every segment
    // but the last few pixels into a target, beside which the arrowhead lies) and the kernel
    // outlines.
    Lines lines;
    for (size_t e = 0; e < m_view.edges.size(); ++e) {
        const QPolygonF line = edgeLine(e);
        taken.add(QRectF(line.back().x() - 5, line.back().y() - 10, 10, 10));
        for (qsizetype k = 1; k < line.size(); ++k)
            lines.add(line[k - 1], line[k]);
    }
    for (const auto &o : m_kernelOutlines)
        lines.addOutline(o.shape);
    // A label lies inside a frame or outside it, never across its outline.
    auto acrossFrame = [&](const QRectF &r) {
        return std::any_of(m_frames.begin(), m_frames.end(),
                           [&](const Frame &fr) { return fr.rect.intersects(r) && !fr.rect.adjusted(2, 2, -2, -2).contains(r); });
    };
    // Top to bottom: each edge in the order of its target.
    std::vector<size_t> order;
    for (size_t e = 0; e < m_view.edges.size(); ++e)
        if (m_view.edges[e].value && m_view.edges[e].value->meta().val.kind != ir::ValueMeta::Kind::Unknown)
            order.push_back(e);
    auto key = [&](size_t e) {
        const auto &b = m_view.items[m_view.edges[e].to];
        return std::make_pair(b.y, b.x);
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    // A value read at several places is labelled once where its readers are near each other.
    std::unordered_map<const ir::Node *, std::vector<QPointF>> labelled;
    for (size_t e : order) {
        const QString text = edgeLabel(e);
        if (text.isEmpty())
            continue;
        const QSizeF size(fm.horizontalAdvance(text) + 1, fm.height());
        auto &same = labelled[m_view.edges[e].value];
        for (const QRectF &r : labelPlaces(edgeLine(e), size)) {
            if (taken.hits(r) || acrossFrame(r) || lines.hits(r.adjusted(-1, -1, 1, 1)))
                continue;
            if (std::any_of(same.begin(), same.end(), [&](const QPointF &q) { return QLineF(q, r.center()).length() < 150; }))
                break;
            taken.add(r.adjusted(-4, -1, 4, 1));
            m_edgeLabels.push_back({e, r, text});
            same.push_back(r.center());
            break;
        }
    }
}

QString GraphCanvas::edgeLabel(size_t e) const
{
    const auto &edge = m_view.edges[e];
    QString text = QString::fromStdString(edge.value->meta().val.toString());
    if (text.startsWith(QLatin1Char('('))) // a tuple (split, unbind): its getitems carry the pieces' shapes
        return {};
    if (edge.count > 1)
        text += QStringLiteral(" ×%1").arg(edge.count);
    if (text.size() > 40)
        text = text.left(38) + QStringLiteral("…");
    return text;
}

QColor GraphCanvas::diffColour(DiffMark d, bool dark)
{
    switch (d) {
    case DiffMark::Added: return QColor(dark ? 0x2e7d32 : 0xa5e3a8);
    case DiffMark::Removed: return QColor(dark ? 0x8e2a2a : 0xf4a6a6);
    case DiffMark::Changed: return QColor(dark ? 0x9a5a10 : 0xffb84d); // amber, apart from data movement's yellow
    case DiffMark::None: break;
    }
    return {};
}

void GraphCanvas::setShowConstants(bool on)
{
    if (on == m_viewOptions.showConstants)
        return;
    m_viewOptions.showConstants = on;
    relayout(true);
}

int GraphCanvas::edgeAt(QPointF pos) const
{
    const QPointF s = toScene(pos);
    const double tolerance = 4 / std::max(m_scale, 1e-3);
    const QRectF around(s.x() - tolerance, s.y() - tolerance, 2 * tolerance, 2 * tolerance);
    int best = -1;
    double bestDist = tolerance;
    for (int i : itemsIn(around.adjusted(-400, -400, 400, 400)))
        for (uint32_t e : m_edgesOf[size_t(i)]) {
            const QPolygonF line = edgeLine(e);
            for (qsizetype k = 1; k < line.size(); ++k) {
                const QPointF a = line[k - 1], b = line[k], d = b - a;
                const double len2 = QPointF::dotProduct(d, d);
                const double t = len2 > 0 ? std::clamp(QPointF::dotProduct(s - a, d) / len2, 0.0, 1.0) : 0;
                const double dist = QLineF(s, a + d * t).length();
                if (dist < bestDist)
                    bestDist = dist, best = int(e);
            }
        }
    return best;
}

QString GraphCanvas::toolTipAt(QPointF pos) const
{
    const int i = itemAt(pos);
    if (i < 0)
        if (const int g = kernelGroupAt(pos); g >= 0)
            return kernelToolTip(g);
    if (i >= 0) {
        const auto &it = m_view.items[size_t(i)];
        QString text = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(it.label).toHtmlEscaped());
        if (it.kind == ViewItem::Kind::Module)
            text += tr("<br>module %1<br>%2<br><i>double-click to expand</i>")
                        .arg(QString::fromStdString(it.module).toHtmlEscaped(), QString::fromStdString(it.detail).toHtmlEscaped());
        else
            text += QStringLiteral("<br>%1 · %2")
                        .arg(QString::fromStdString(it.detail).toHtmlEscaped(), QString::fromLatin1(layout::opCategoryName(it.category)));
        if (!it.value.empty())
            text += tr("<br>value %1").arg(QString::fromStdString(it.value).toHtmlEscaped());
        if (it.kind == ViewItem::Kind::Node && !it.module.empty())
            text += tr("<br>in %1").arg(QString::fromStdString(it.module).toHtmlEscaped());
        if (it.hiddenInputs)
            text +=
                tr("<br>reads %n hidden parameter(s)/constant(s): %1%2", nullptr, int(it.hiddenInputs))
                    .arg(QString::fromStdString(it.hiddenSummary).toHtmlEscaped(), it.hiddenInputs > 3 ? QStringLiteral(", …") : QString());
        if (heatOf(i) > 0)
            text += tr("<br>profile: %1% of the hottest item").arg(heatOf(i) * 100, 0, 'f', 0);
        if (highlightOf(i) == 2)
            text += tr("<br><i>anchor of the highlighted match</i>");
        else if (highlightOf(i) == 1)
            text += tr("<br><i>part of the highlighted match</i>");
        else if (isMarked(i))
            text += tr("<br><i>candidate anchor: a pattern may match from here</i>");
        if (const auto d = diffOf(i); d == DiffMark::Added)
            text += tr("<br><i>new in this step</i>");
        else if (d == DiffMark::Changed)
            text += tr("<br><i>changed in this step</i>");
        return text;
    }
    const int e = edgeAt(pos);
    if (e < 0)
        return {};
    const auto &edge = m_view.edges[size_t(e)];
    QString text = QStringLiteral("<b>%1</b> → <b>%2</b>")
                       .arg(QString::fromStdString(m_view.items[edge.from].label).toHtmlEscaped(),
                            QString::fromStdString(m_view.items[edge.to].label).toHtmlEscaped());
    if (edge.value && edge.value->meta().val.kind != ir::ValueMeta::Kind::Unknown)
        text += tr("<br>%1 = %2")
                    .arg(QString::fromStdString(edge.value->name()).toHtmlEscaped(),
                         QString::fromStdString(edge.value->meta().val.toString()).toHtmlEscaped());
    if (edge.count > 1)
        text += tr("<br>%1 values between these two").arg(edge.count);
    if (edge.back)
        text += tr("<br><i>goes back up (a cycle between module boxes)</i>");
    return text;
}

bool GraphCanvas::event(QEvent *e)
{
    return showToolTip(this, e, [this](const QPoint &p) { return toolTipAt(p); }) || QWidget::event(e);
}

} // namespace fxlens::views
