// SPDX-License-Identifier: MIT
// GraphCanvas: fitting the drawing to the widget's scene viewport (above the legend's bar, never
// below the readable minimum) and zooming around a point.
#include "GraphCanvas.h"

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>

namespace fxlens::views {

QRectF GraphCanvas::fitArea(QSizeF widget, const QRect &legend, QSizeF content)
{
    const double margin = 20;
    // The drawing goes above the legend or beside it, whichever leaves it larger: at first sight no
    // node lies under the legend.
    const QRectF area(margin, margin, widget.width() - 2 * margin, widget.height() - 2 * margin);
    if (legend.isEmpty())
        return area;
    const auto scaleIn = [&](const QRectF &r) {
        return std::min(r.width() / std::max(content.width(), 1.0), r.height() / std::max(content.height(), 1.0));
    };
    const QRectF above(area.left(), area.top(), area.width(), std::max(1.0, legend.top() - margin / 2 - area.top()));
    const QRectF beside(legend.right() + margin / 2, area.top(), std::max(1.0, area.right() - legend.right() - margin / 2), area.height());
    return scaleIn(above) >= scaleIn(beside) ? above : beside;
}

void GraphCanvas::fitToView()
{
    if (m_view.items.empty() || width() <= 0 || height() <= 0) {
        m_scale = 1;
        m_offset = QPointF(0, 0);
        update();
        return;
    }
    const QRectF area = fitArea(sceneViewport().size(), {}, QSizeF(m_view.width, m_view.height));
    const double across = area.width() / std::max(m_view.width, 1.0), down = area.height() / std::max(m_view.height, 1.0);
    m_scale = std::clamp(std::min(across, down), 1e-5, 2.0); // a small graph is enlarged, up to twice its size
    m_offset = QPointF(area.center().x() - m_view.width * m_scale / 2, area.center().y() - m_view.height * m_scale / 2);
    if (m_scale < kMinFitScale) {
        // Too wide (or tall) to show whole: its short side fitted, at least the readable minimum,
        // a wide one centred (where a layered layout has its inputs and outputs), a tall one from
        // its top (the inputs); the minimap shows the rest.
        m_scale = std::max(m_scale, std::min({kMinFitScale, std::max(across, down), 2.0}));
        m_offset.setX(area.center().x() - m_view.width * m_scale / 2);
        m_offset.setY(m_view.height * m_scale <= area.height() ? area.center().y() - m_view.height * m_scale / 2 : area.top());
    }
    update();
    Q_EMIT viewChanged();
}

QRectF GraphCanvas::nodesRect(const std::vector<const ir::Node *> &nodes) const
{
    QRectF r;
    for (const ir::Node *n : nodes)
        if (const int i = itemOf(n); i >= 0) {
            const auto &it = m_view.items[size_t(i)];
            r = r.united(QRectF(it.x, it.y, std::max(it.w, 1.0), std::max(it.h, 1.0)));
        }
    return r;
}

bool GraphCanvas::showModule(const QString &module)
{
    const std::string m = module.toStdString();
    QRectF r;
    for (const auto &it : m_view.items)
        if (it.module == m || it.module.rfind(m + ".", 0) == 0)
            r = r.united(QRectF(it.x, it.y, it.w, it.h));
    if (r.isEmpty() || width() <= 0 || height() <= 0)
        return false;
    r.adjust(-40, -40, 40, 40); // the frame and its title
    const QRectF area = fitArea(sceneViewport().size(), {}, r.size());
    m_scale = std::clamp(std::min(area.width() / r.width(), area.height() / r.height()), kMinFitScale, 1.0);
    const double top = r.height() * m_scale <= area.height() ? area.center().y() - r.height() * m_scale / 2 : area.top();
    m_offset = QPointF(area.center().x() - r.center().x() * m_scale, top - r.top() * m_scale);
    m_untouched = false;
    update();
    Q_EMIT viewChanged();
    return true;
}

void GraphCanvas::refit()
{
    if (m_selected >= 0 && size_t(m_selected) < m_view.items.size())
        landOn(m_selected);
    else
        readableView();
    update();
    Q_EMIT viewChanged();
}

void GraphCanvas::landOn(int item)
{
    const QRect vp = sceneViewport();
    constexpr double kMargin = 16;
    const auto &it = m_view.items[size_t(item)];
    const QRectF node(it.x, it.y, it.w, it.h);
    const auto fitsAt = [&](const QRectF &r, double s) {
        return r.width() * s <= vp.width() - 2 * kMargin && r.height() * s <= vp.height() - 2 * kMargin;
    };
    double scale = std::max(m_scale, 0.8);
    std::vector<const Frame *> around; // innermost first
    for (auto f = m_frames.rbegin(); f != m_frames.rend(); ++f)
        if (f->rect.contains(node))
            around.push_back(&*f);
    QRectF keep = node;
    if (!around.empty() && !fitsAt(around.front()->rect, scale)) {
        const QRectF &r = around.front()->rect;
        const double fit = std::min((vp.width() - 2 * kMargin) / r.width(), (vp.height() - 2 * kMargin) / r.height());
        if (fit >= kLandScale) // the frame whole, still readable
            scale = fit;
    }
    for (const Frame *f : around)
        if (fitsAt(f->rect, scale))
            keep = f->rect; // the largest frame around it that fits whole
        else
            break;
    if (keep == node && !around.empty()) {
        // Too large to show whole: the node and its frame's title (the title's plate), along each
        // axis where both fit.
        const QRectF title = around.front()->titleRect();
        const QFontMetricsF fm(font());
        const QRectF plate(title.left() - 2, title.top(),
                           std::min(title.width(), fm.horizontalAdvance(QString::fromStdString(around.front()->path)) + 4), title.height());
        const QRectF both = node.united(plate);
        if (both.width() * scale <= vp.width() - 2 * kMargin)
            keep.setLeft(both.left()), keep.setRight(both.right());
        if (both.height() * scale <= vp.height() - 2 * kMargin)
            keep.setTop(both.top()), keep.setBottom(both.bottom());
    }
    // The node in the centre, then panned as little as brings what to keep inside the margin.
    m_scale = scale;
    m_offset = QRectF(vp).center() - node.center() * m_scale;
    const QRectF on(keep.topLeft() * m_scale + m_offset, keep.size() * m_scale);
    const QRectF inner = QRectF(vp).adjusted(kMargin, kMargin, -kMargin, -kMargin);
    m_offset += QPointF(on.left() < inner.left()         ? inner.left() - on.left()
                            : on.right() > inner.right() ? inner.right() - on.right()
                                                         : 0,
                        on.top() < inner.top()             ? inner.top() - on.top()
                            : on.bottom() > inner.bottom() ? inner.bottom() - on.bottom()
                                                           : 0);
    uncutItems(keep, m_scale); // panned only: the zoom chosen above stays
}

std::vector<double> GraphCanvas::wholeShifts(bool across, const QRectF &keep, size_t count) const
{
    constexpr double kGap = 4; // what a rectangle moved clear of an edge keeps from it
    const QRectF vp = sceneViewport();
    const auto span = [across](const QRectF &r) { return across ? std::pair{r.left(), r.right()} : std::pair{r.top(), r.bottom()}; };
    const auto [lo, hi] = span(vp);
    const double most = (hi - lo) / 2;
    // What a pan along this axis can bring into view: the items, and the kernel labels once drawn.
    const QRectF reach = across ? vp.adjusted(-most, 0, most, 0) : vp.adjusted(0, -most, 0, most);
    std::vector<std::pair<double, double>> spans;
    for (const int i : itemsIn(QRectF(toScene(reach.topLeft()), reach.size() / m_scale)))
        if (const QRectF r = itemRect(i); r.intersects(reach))
            spans.push_back(span(r));
    if (kernelLabelsDrawn())
        for (const auto &o : m_kernelOutlines)
            if (const QRectF r(o.label.topLeft() * m_scale + m_offset, o.label.size() * m_scale); !o.label.isEmpty() && r.intersects(reach))
                spans.push_back(span(r));
    // The least pans first: none, else those that put a rectangle's end just inside or outside an edge.
    std::vector<double> shifts{0};
    for (const auto &[a, b] : spans)
        shifts.insert(shifts.end(), {lo + kGap - a, lo - kGap - b, hi - kGap - b, hi + kGap - a});
    std::sort(shifts.begin(), shifts.end(), [](double x, double y) { return std::abs(x) < std::abs(y); });
    // A point is inside a rectangle when it is inside their union's (open) intervals.
    std::sort(spans.begin(), spans.end());
    std::vector<std::pair<double, double>> merged;
    for (const auto &ab : spans)
        if (!merged.empty() && ab.first < merged.back().second)
            merged.back().second = std::max(merged.back().second, ab.second);
        else
            merged.push_back(ab);
    const auto cuts = [&](double at) {
        const auto it = std::lower_bound(merged.begin(), merged.end(), at, [](const auto &ab, double x) { return ab.first < x; });
        return it != merged.begin() && std::prev(it)->second > at;
    };
    const auto [ka, kb] = span(QRectF(keep.topLeft() * m_scale + m_offset, keep.size() * m_scale));
    std::vector<double> out;
    for (const double s : shifts) {
        if (std::abs(s) > most || out.size() >= count)
            break;
        if ((keep.isNull() || (ka + s >= lo && kb + s <= hi)) && !cuts(lo - s) && !cuts(hi - s) &&
            std::find(out.begin(), out.end(), s) == out.end())
            out.push_back(s);
    }
    return out;
}

void GraphCanvas::uncutItems(const QRectF &keep, double least)
{
    const double scale = m_scale;
    const QPointF offset = m_offset;
    // Zoomed out around what to keep (else the viewport's centre), a few percent a step; at each
    // zoom the least pans down (a few tried), each with the least pan across that leaves all whole.
    const QPointF anchor = keep.isNull() ? viewportCentre() : QRectF(keep.topLeft() * m_scale + m_offset, keep.size() * m_scale).center();
    const QPointF at = toScene(anchor);
    for (double s = scale;; s *= 0.97) {
        m_scale = s;
        const QPointF base = anchor - at * s;
        for (const double down : wholeShifts(false, keep, 12)) {
            m_offset = base + QPointF(0, down);
            if (const auto across = wholeShifts(true, keep, 1); !across.empty()) {
                m_offset.rx() += across.front();
                if (const auto again = wholeShifts(false, keep, 1); !again.empty() && again.front() == 0)
                    return;
            }
        }
        if (s * 0.97 < least)
            break;
    }
    // No zoom that readable leaves everything whole: at the zoom it had, each axis panned where
    // that leaves it whole.
    m_scale = scale;
    m_offset = offset;
    if (const auto across = wholeShifts(true, keep, 1); !across.empty())
        m_offset.rx() += across.front();
    if (const auto down = wholeShifts(false, keep, 1); !down.empty())
        m_offset.ry() += down.front();
}

void GraphCanvas::showNodes(const std::vector<const ir::Node *> &nodes, double least)
{
    const QRect vp = sceneViewport();
    const QRectF r = nodes.empty() ? QRectF(0, 0, m_view.width, m_view.height) : nodesRect(nodes);
    if (r.isEmpty() || vp.width() <= 0 || vp.height() <= 0)
        return;
    constexpr double kMargin = 30;
    const QSizeF room(std::max(vp.width() - 2 * kMargin, 1.0), std::max(vp.height() - 2 * kMargin, 1.0));
    m_scale = std::clamp(std::min(room.width() / std::max(r.width(), 1.0), room.height() / std::max(r.height(), 1.0)), least, 1.0);
    // Along an axis where it does not fit at that zoom: its start (left end, top) in view.
    const QRectF keep(r.topLeft(), QSizeF(std::min(r.width(), room.width() / m_scale), std::min(r.height(), room.height() / m_scale)));
    m_offset = QRectF(vp).center() - keep.center() * m_scale;
    uncutItems(keep, least);
    update();
    Q_EMIT viewChanged();
}

void GraphCanvas::zoomBy(double factor, QPointF around)
{
    const QPointF s = toScene(around);
    m_untouched = false;
    m_scale = std::clamp(m_scale * factor, 1e-5, 8.0);
    m_offset = around - s * m_scale;
    update();
    Q_EMIT viewChanged();
}

} // namespace fxlens::views
