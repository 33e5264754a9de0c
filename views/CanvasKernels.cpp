// SPDX-License-Identifier: MIT
// The canvas' kernel outlines: a compiled profile's kernels, each around the items of the FX nodes
// it covers, its name and time on the outline (see GraphCanvas.h).
#include "GraphCanvas.h"

#include "ProfilePanel.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>

#include <algorithm>
#include <numeric>

namespace fxlens::views {

namespace {

constexpr double kMargin = 9, kStep = 6; ///< an outline's margin around its items; per outline inside it
constexpr int kMaxNesting = 4;           ///< outlines inside one that widen it (more share its margin)
constexpr int kLabelPixels = 11;
constexpr double kLegible = 6.5; ///< a label's least size on screen (pixels): a node's op line at the readable zoom

QColor outlineColour(bool dark) { return dark ? QColor(190, 150, 255) : QColor(120, 60, 190); }

QRectF transposed(const QRectF &r) { return QRectF(r.y(), r.x(), r.height(), r.width()); }

/// What joins `a` above `b` (their sides level or apart) across the gap between them: as wide as
/// both where that meets no rectangle of `others(area)` (with a few pixels clear of it), else the
/// widest stretch that does not, kJoin of it at least within the width they share; empty when
/// there is none or the gap is wider than kGap.
template <class Others> QRectF joinDown(const QRectF &a, const QRectF &b, Others others, bool flip)
{
    constexpr double kJoin = 16, kGap = 48, kClear = 3;
    const double top = a.bottom(), bottom = b.top(), left = std::max(a.left(), b.left()), right = std::min(a.right(), b.right());
    if (bottom - top > kGap || right - left < kJoin)
        return {};
    const QRectF span(std::min(a.left(), b.left()), top, std::max(a.right(), b.right()) - std::min(a.left(), b.left()), bottom - top);
    std::vector<std::pair<double, double>> free{{span.left(), span.right()}};
    for (QRectF r : others(flip ? transposed(span) : span)) {
        r = flip ? transposed(r) : r;
        std::vector<std::pair<double, double>> rest;
        for (const auto &[l, h] : free) {
            if (r.left() - kClear > l)
                rest.emplace_back(l, std::min(h, r.left() - kClear));
            if (r.right() + kClear < h)
                rest.emplace_back(std::max(l, r.right() + kClear), h);
        }
        free = std::move(rest);
    }
    const auto shared = [&](const std::pair<double, double> &x) { return std::min(x.second, right) - std::max(x.first, left); };
    const auto best = std::max_element(free.begin(), free.end(), [&](const auto &x, const auto &y) { return shared(x) < shared(y); });
    if (best == free.end() || shared(*best) < kJoin)
        return {};
    return QRectF(best->first, top, best->second - best->first, bottom - top);
}

/// What joins two padded items across the gap between them: below one another (sharing some width)
/// or side by side (sharing some height); where they overlap, the overlap (no notch left between
/// their rounded corners); empty when nothing joins them.
template <class Others> QRectF joinAcross(QRectF a, QRectF b, Others others)
{
    if (a.intersects(b))
        return a.intersected(b);
    const bool flip = a.bottom() >= b.top() && b.bottom() >= a.top(); // level: join them across x
    if (flip)
        a = transposed(a), b = transposed(b);
    if (a.top() > b.top())
        std::swap(a, b);
    const QRectF join = joinDown(a, b, others, flip);
    return flip && !join.isEmpty() ? transposed(join) : join;
}

/// `outline` without the holes that hold no other item (`holds(hole's bounds)`): the gaps left where
/// four items meet, between the joins of two columns.
template <class Holds> QPainterPath withoutEmptyHoles(const QPainterPath &outline, Holds holds)
{
    const QList<QPolygonF> rings = outline.toSubpathPolygons();
    QPainterPath out;
    for (const QPolygonF &ring : rings) {
        const QRectF bounds = ring.boundingRect();
        const auto around = std::count_if(rings.begin(), rings.end(), [&](const QPolygonF &other) {
            return &other != &ring && other.boundingRect().contains(bounds) && other.containsPoint(ring.front(), Qt::OddEvenFill);
        });
        const bool hole = around % 2 == 1; // (a part inside a hole is inside two rings)
        if (!hole || holds(bounds))
            out.addPolygon(ring);
    }
    out.closeSubpath();
    return out;
}

/// `text` on `lines` lines at most `width` pixels wide, broken after a '_' (a kernel name's
/// words, each line as full as it goes); empty when it does not fit so.
QStringList wrapped(const QString &text, const QFontMetricsF &fm, double width, int lines)
{
    QStringList out{QString()};
    for (qsizetype from = 0; from < text.size();) {
        const qsizetype cut = text.indexOf(QLatin1Char('_'), from);
        const QString word = text.mid(from, cut < 0 ? -1 : cut - from + 1);
        if (!out.back().isEmpty() && fm.horizontalAdvance(out.back() + word) > width)
            out << QString();
        out.back() += word;
        from += word.size();
    }
    const bool fits = std::all_of(out.begin(), out.end(), [&](const QString &l) { return fm.horizontalAdvance(l) <= width; });
    return fits && out.size() <= lines ? out : QStringList();
}

} // namespace

void GraphCanvas::setKernelGroups(std::vector<KernelGroup> groups)
{
    m_kernelGroups = std::move(groups);
    m_kernelGroup = -1;
    placeKernelGroups();
    placeLabels();
    update();
}

void GraphCanvas::setSelectedKernelGroup(int g)
{
    m_kernelGroup = g >= 0 && size_t(g) < m_kernelGroups.size() ? g : -1;
    update();
}

QRectF GraphCanvas::kernelGroupRect(int g) const
{
    return g >= 0 && size_t(g) < m_kernelOutlines.size() ? m_kernelOutlines[size_t(g)].rect : QRectF();
}

QPainterPath GraphCanvas::kernelOutline(int g) const
{
    return g >= 0 && size_t(g) < m_kernelOutlines.size() ? m_kernelOutlines[size_t(g)].shape : QPainterPath();
}

QRectF GraphCanvas::kernelLabelRect(int g) const
{
    return g >= 0 && size_t(g) < m_kernelOutlines.size() ? m_kernelOutlines[size_t(g)].label : QRectF();
}

void GraphCanvas::placeKernelGroups()
{
    m_kernelOutlines.assign(m_kernelGroups.size(), {});
    const auto isBox = [this](int i) { return m_view.items[size_t(i)].kind == layout::ViewItem::Kind::Module; };
    std::vector<int> covering(m_view.items.size(), 0); // kernels with nodes in each item
    std::vector<int> alone(m_view.items.size(), 0);    // kernels whose nodes all lie in this one collapsed module box
    for (size_t g = 0; g < m_kernelGroups.size(); ++g) {
        auto &o = m_kernelOutlines[g];
        o.text = groupLabel(m_kernelGroups[g]);
        for (const ir::Node *n : m_kernelGroups[g].nodes)
            if (const int i = itemOf(n); i >= 0 && std::find(o.items.begin(), o.items.end(), i) == o.items.end()) {
                o.items.push_back(i);
                ++covering[size_t(i)];
            }
        if (o.items.size() == 1 && isBox(o.items[0]))
            ++alone[size_t(o.items[0])];
    }
    // A collapsed module box stands for the kernels inside it: kernels inside it alone are not
    // outlined when there are several (an outline for each would only ring the box again and
    // again), and a kernel with items of its own beside a box that other kernels cover too is
    // outlined around those (an extern matmul's linear is not drawn inside the fused kernel that
    // takes its output).
    for (auto &o : m_kernelOutlines) {
        if (o.items.size() == 1 && alone[size_t(o.items[0])] > 1)
            o.items.clear();
        else if (!std::all_of(o.items.begin(), o.items.end(), isBox))
            o.items.erase(std::remove_if(o.items.begin(), o.items.end(), [&](int i) { return isBox(i) && covering[size_t(i)] > 1; }),
                          o.items.end());
    }
    // Nesting: an outline sharing items with others drawn before it (fewer items first; the same
    // items: the earlier kernel inside) leaves room for theirs, so every outline stays visible.
    std::vector<size_t> order(m_kernelOutlines.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return m_kernelOutlines[a].items.size() < m_kernelOutlines[b].items.size(); });
    std::vector<int> rings(m_view.items.size(), 0); // outlines drawn around each item so far
    for (const size_t g : order) {
        auto &o = m_kernelOutlines[g];
        int within = 0;
        for (const int i : o.items)
            within = std::max(within, rings[size_t(i)]++);
        if (!o.items.empty())
            shapeOutline(o, kMargin + kStep * std::min(within, kMaxNesting));
    }
}

void GraphCanvas::shapeOutline(KernelOutline &o, double margin) const
{
    // Its items' rectangles with the margin, joined across each gap between two of them where the
    // join meets no other item: one outline around them where they are together, never around
    // another item (another item between them leaves it in parts).
    std::vector<QRectF> padded;
    for (const int i : o.items) {
        const auto &it = m_view.items[size_t(i)];
        padded.push_back(QRectF(it.x, it.y, it.w, it.h).adjusted(-margin, -margin, margin, margin));
    }
    const auto others = [&](const QRectF &area) {
        std::vector<QRectF> out;
        for (const int i : itemsIn(area))
            if (std::find(o.items.begin(), o.items.end(), i) == o.items.end()) {
                const auto &it = m_view.items[size_t(i)];
                out.push_back(QRectF(it.x, it.y, it.w, it.h));
            }
        return out;
    };
    QPainterPath path;
    path.setFillRule(Qt::WindingFill);
    for (const QRectF &r : padded)
        path.addRoundedRect(r, 8, 8);
    for (size_t a = 0; a < padded.size(); ++a)
        for (size_t b = a + 1; b < padded.size(); ++b)
            if (const QRectF join = joinAcross(padded[a], padded[b], others); !join.isEmpty())
                path.addRect(join);
    o.shape = withoutEmptyHoles(path.simplified(), [&](const QRectF &hole) { return !others(hole).empty(); });
    o.rect = o.shape.boundingRect();
    // The top row: where the label goes (around its topmost items).
    o.top = QRectF();
    for (const QRectF &r : padded)
        if (r.top() < o.rect.top() + 1)
            o.top |= r;
}

void GraphCanvas::placeLabels()
{
    placeEdgeLabels();
    placeKernelLabels();
    measureContent(); // labels moved: what a fit shows
}

void GraphCanvas::measureContent()
{
    // What is drawn, labels included (a layout leaves room around it for labels it may not need).
    QRectF r;
    for (const auto &it : m_view.items)
        r |= QRectF(it.x, it.y, it.w, it.h);
    for (const auto &g : m_ghosts)
        r |= QRectF(g.x, g.y, g.w, g.h);
    for (const auto &f : m_frames)
        r |= f.rect;
    for (const auto &l : m_edgeLabels)
        r |= l.rect;
    for (const auto &k : m_kernelOutlines)
        r |= k.rect | k.label;
    m_content = r.isEmpty() ? QRectF(0, 0, m_view.width, m_view.height) : r.intersected(QRectF(0, 0, m_view.width, m_view.height));
}

void GraphCanvas::placeKernelLabels()
{
    // Labels: on the outline's top edge near its left corner (as a titled border), else further
    // along it, else on its bottom edge, else just above or below the outline. The text whole on one
    // line within the outline's sides, else on one line running on past its right side (not past the
    // nodes' right end), else broken after a '_' onto two or three lines within its sides, else shortened
    // (elided) to its width. Never over an item, an edge's label or another kernel's label.
    QFont f = font();
    f.setPixelSize(kLabelPixels);
    const QFontMetricsF fm(f);
    std::vector<QRectF> taken; // edge labels and the labels placed so far
    for (const auto &e : m_edgeLabels)
        taken.push_back(e.rect);
    const QRectF drawing(0, 0, m_view.width, m_view.height);
    double nodesRight = 0; // a label running on past its outline ends by the nodes' right end (a fit shows them)
    for (const auto &it : m_view.items)
        nodesRight = std::max(nodesRight, it.x + it.w);
    const auto isFree = [&](const QRectF &r) {
        if (!drawing.contains(r) || std::any_of(taken.begin(), taken.end(), [&](const QRectF &t) { return t.intersects(r); }))
            return false;
        const auto items = itemsIn(r);
        return std::none_of(items.begin(), items.end(), [&](int i) {
            const auto &it = m_view.items[size_t(i)];
            return r.intersects(QRectF(it.x, it.y, it.w, it.h));
        });
    };
    for (auto &o : m_kernelOutlines) {
        if (o.rect.isEmpty())
            continue;
        const QRectF box = o.top; // on its top row's edge
        const double room = std::min(box.width() - 16, 320.0);
        struct Way {
            QStringList lines;
            double reach; ///< how far right of the outline's left side (and its 8-pixel inset) it may end
        };
        const double sides = box.width() - 16, past = nodesRight - box.left() - 8;
        std::vector<Way> ways{{{o.text}, sides}, {{o.text}, past}}; // most readable first
        for (const int n : {2, 3})
            if (const QStringList lines = wrapped(o.text, fm, room - 6, n); !lines.isEmpty()) {
                ways.push_back({lines, sides});
                break;
            }
        ways.push_back({{fm.elidedText(o.text, Qt::ElideMiddle, room - 6)}, sides});
        ways.push_back({{fm.elidedText(o.text, Qt::ElideMiddle, std::min(room, 90.0) - 6)}, sides});
        for (const Way &way : ways) {
            double w = 0;
            for (const QString &l : way.lines)
                w = std::max(w, fm.horizontalAdvance(l) + 6);
            const double h = fm.height() + fm.lineSpacing() * double(way.lines.size() - 1) + 2;
            for (const double y : {box.top() - h / 2, box.bottom() - h / 2, box.top() - h - 1, box.bottom() + 1})
                for (double x = box.left() + 8; x + w <= box.left() + 8 + way.reach && x <= box.right() - 48 && o.label.isEmpty(); x += 6)
                    if (const QRectF r(x, y, w, h); w >= 40 && isFree(r))
                        o.label = r;
            if (!o.label.isEmpty()) {
                o.lines = way.lines;
                taken.push_back(o.label);
                break;
            }
        }
    }
}

bool GraphCanvas::kernelLabelsDrawn() const { return kLabelPixels * m_scale >= kLegible; }

QStringList GraphCanvas::kernelLabelLines(int g) const
{
    return g >= 0 && size_t(g) < m_kernelOutlines.size() ? m_kernelOutlines[size_t(g)].lines : QStringList();
}

void GraphCanvas::paintKernelGroups(QPainter &p, double scale) const
{
    if (m_kernelOutlines.empty())
        return;
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    const QColor ink = outlineColour(dark), strong(230, 110, 0);
    const double px = 1.0 / std::max(scale, 0.05);
    p.save();
    p.setBrush(Qt::NoBrush);
    for (size_t g = 0; g < m_kernelOutlines.size(); ++g) {
        const auto &o = m_kernelOutlines[g];
        if (o.rect.isEmpty() || int(g) == m_kernelGroup)
            continue;
        p.setPen(QPen(ink, 1.5 * px, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p.drawPath(o.shape);
    }
    if (const auto *sel = m_kernelGroup >= 0 ? &m_kernelOutlines[size_t(m_kernelGroup)] : nullptr; sel && !sel->rect.isEmpty()) {
        QColor wash = strong;
        wash.setAlpha(40);
        p.setPen(QPen(strong, 3 * px, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
        p.setBrush(wash);
        p.drawPath(sel->shape);
        p.setBrush(Qt::NoBrush);
        for (const ir::Node *n : m_kernelGroups[size_t(m_kernelGroup)].nodes) // every item it covers (a module box too)
            if (const int i = itemOf(n); i >= 0) {
                const auto &it = m_view.items[size_t(i)];
                p.drawRoundedRect(QRectF(it.x, it.y, it.w, it.h).adjusted(-2, -2, 2, 2), 7, 7);
            }
    }
    if (kLabelPixels * scale >= kLegible) { // labels once legible (kernelLabelsDrawn)
        QFont f = font();
        f.setPixelSize(kLabelPixels);
        p.setFont(f);
        const QColor base = palette().color(QPalette::Base);
        for (size_t g = 0; g < m_kernelOutlines.size(); ++g) {
            const auto &o = m_kernelOutlines[g];
            if (o.label.isEmpty())
                continue;
            const bool selected = int(g) == m_kernelGroup;
            p.setPen(Qt::NoPen);
            p.setBrush(base);
            p.drawRect(o.label);
            p.setPen(selected ? strong : ink);
            p.drawText(o.label.adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter, o.lines.join(QLatin1Char('\n')));
        }
    }
    p.restore();
}

int GraphCanvas::kernelGroupAt(QPointF pos) const
{
    const QPointF s = toScene(pos);
    const double tol = 4 / std::max(m_scale, 0.05);
    int best = -1;
    double bestArea = 0;
    for (size_t g = 0; g < m_kernelOutlines.size(); ++g) {
        const auto &o = m_kernelOutlines[g];
        if (o.label.contains(s))
            return int(g);
        if (o.rect.isEmpty() || !o.rect.adjusted(-tol, -tol, tol, tol).contains(s))
            continue;
        QPainterPathStroker edge;
        edge.setWidth(2 * tol);
        const double area = o.rect.width() * o.rect.height();
        if (edge.createStroke(o.shape).contains(s) && (best < 0 || area < bestArea))
            best = int(g), bestArea = area;
    }
    return best;
}

QString GraphCanvas::kernelToolTip(int g) const
{
    const auto &k = m_kernelGroups[size_t(g)];
    QStringList names;
    for (const ir::Node *n : k.nodes)
        names << QString::fromStdString(n->name()).toHtmlEscaped();
    return tr("<b>%1</b><br>%2 per iteration · covers %n FX node(s): %3<br><i>click to select the kernel</i>", nullptr, int(names.size()))
        .arg(k.name.toHtmlEscaped(), ProfilePanel::formatTime(k.usPerIteration), names.join(QStringLiteral(", ")));
}

} // namespace fxlens::views
