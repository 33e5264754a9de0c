// SPDX-License-Identifier: MIT
// GraphCanvas: edges (routes, arrowheads, value labels, the selection's in/out edges), colours by
// op category and the legend, tooltips and constants (see GraphCanvas.h). Module frames are in
// CanvasFrames.cpp, export in CanvasExport.cpp.
#include "GraphCanvas.h"
#include "ToolTip.h"

#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>

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
    if (everything || scale >= 0.7)
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
            drawn[e] = 1;
            const QPolygonF line = edgeLine(e);
            if (!everything) {
                const bool bothInView = sceneRect.contains(line.front()) && sceneRect.contains(line.back());
                if (scale < 0.25 && !bothInView)
                    continue;
                edgePixels += lengthOf(line) * scale;
                if (edgePixels > budget)
                    return shown; // over the budget: what is drawn so far
            }
            for (qsizetype k = 1; k < line.size(); ++k)
                lines.push_back(QLineF(line[k - 1], line[k]));
            shown.push_back(e);
        }
    }
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
    // Values on edges once text is legible: the shape and dtype beside the edge's last stretch.
    QFont f = p.font();
    f.setPixelSize(9);
    p.setFont(f);
    p.setPen(palette().color(QPalette::PlaceholderText));
    size_t labels = 0;
    // Frames' title bands sit in the gap above their first row, where labels go too: a label
    // that would run into one moves above the frame.
    std::vector<QRectF> titles;
    for (const auto &fr : m_frames)
        if (everything || sceneRect.intersects(fr.rect))
            titles.emplace_back(fr.rect.left(), fr.rect.top(), fr.rect.width(), 15);
    const QFontMetricsF fm(f);
    for (size_t e : shown) {
        const ir::Node *v = m_view.edges[e].value;
        if (!v || v->meta().val.kind == ir::ValueMeta::Kind::Unknown)
            continue;
        const QPolygonF line = edgeLine(e);
        const QPointF end = line.back(), before = line[line.size() - 2];
        // Text is what a frame spends most on: only labels in view, at most 200.
        if (!everything && (!sceneRect.contains((end + before) / 2) || ++labels > 200))
            continue;
        const QString text = edgeLabel(e);
        if (text.isEmpty())
            continue;
        QPointF at = (end + before) / 2 + QPointF(4, 3);
        const QRectF box(at.x(), at.y() - fm.ascent(), fm.horizontalAdvance(text), fm.height());
        for (const QRectF &t : titles)
            if (t.intersects(box)) {
                at.setY(t.top() - fm.descent() - 1);
                break;
            }
        p.drawText(at, text);
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

std::vector<GraphCanvas::LegendRow> GraphCanvas::legendRows() const
{
    std::array<bool, layout::kOpCategories> present{};
    for (const auto &it : m_view.items)
        present[size_t(it.category)] = true;
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    std::vector<LegendRow> rows;
    for (int c = 0; c < layout::kOpCategories; ++c)
        if (present[size_t(c)])
            rows.push_back({QString::fromLatin1(layout::opCategoryName(OpCategory(c))), categoryColour(OpCategory(c), dark)});
    if (!m_overlays.source(Layer::Diff).empty() || !m_ghosts.empty())
        for (const auto &[d, name] :
             {std::pair{DiffMark::Removed, tr("removed")}, {DiffMark::Added, tr("added")}, {DiffMark::Changed, tr("changed")}})
            rows.push_back({name, diffColour(d, dark)});
    return rows;
}

namespace {
QFont legendFont(QFont f)
{
    f.setPixelSize(11);
    return f;
}
} // namespace

QRect GraphCanvas::legendRect() const
{
    if (!m_legend || m_view.items.empty())
        return {};
    const QFontMetrics fm(legendFont(font()));
    int widest = 0;
    const auto rows = legendRows();
    for (const auto &r : rows)
        widest = std::max(widest, fm.horizontalAdvance(r.name));
    const int line = fm.height() + 2, n = int(rows.size());
    return QRect(10, height() - 10 - n * line - 8, widest + 34, n * line + 8);
}

void GraphCanvas::paintLegend(QPainter &p)
{
    const QFont f = legendFont(font());
    p.setFont(f);
    const int line = QFontMetrics(f).height() + 2;
    const QRect box = legendRect();
    p.setOpacity(0.92);
    p.fillRect(box, palette().color(QPalette::Window));
    p.setOpacity(1);
    p.setPen(palette().color(QPalette::Mid));
    p.setBrush(Qt::NoBrush);
    p.drawRect(box);
    int y = box.top() + 4;
    for (const auto &row : legendRows()) {
        p.fillRect(QRect(box.left() + 6, y + 2, 16, line - 5), row.colour);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(box.left() + 28, y, box.width() - 30, line), Qt::AlignVCenter | Qt::AlignLeft, row.name);
        y += line;
    }
}

void GraphCanvas::setLegendVisible(bool on)
{
    m_legend = on;
    update();
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
