// SPDX-License-Identifier: MIT
// GraphCanvas: fitting the drawing to the widget's scene viewport (above the legend's bar, never
// below the readable minimum) and zooming around a point.
#include "GraphCanvas.h"

#include <QFontMetricsF>

#include <algorithm>

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
    uncutItems(keep);
}

void GraphCanvas::uncutItems(const QRectF &keep)
{
    const QRectF vp = sceneViewport();
    for (const bool across : {true, false}) {
        const auto span = [across](const QRectF &r) { return across ? std::pair{r.left(), r.right()} : std::pair{r.top(), r.bottom()}; };
        const QPointF unit = across ? QPointF(1, 0) : QPointF(0, 1);
        const auto [lo, hi] = span(vp);
        // After panning by `shift` along the axis: how far the items cut at the low edge need the
        // view panned forward to be whole, and those cut at the high edge backward.
        const auto needs = [&](double shift) {
            double low = 0, high = 0;
            for (int i : itemsIn(QRectF(toScene(vp.topLeft() - unit * shift), vp.size() / m_scale))) {
                const QRectF r = itemRect(i).translated(unit * shift);
                if (!r.intersects(vp))
                    continue;
                if (const auto [a, b] = span(r); a < lo && b > lo)
                    low = std::max(low, lo - a + 4);
                else if (a < hi && b > hi)
                    high = std::max(high, b - hi + 4);
            }
            return std::pair{low, high};
        };
        const auto [low, high] = needs(0);
        if ((low > 0) == (high > 0))
            continue; // none cut, or both edges: panning cannot help
        const double shift = low > 0 ? low : -high;
        const auto [ka, kb] = span(QRectF(keep.topLeft() * m_scale + m_offset, keep.size() * m_scale).translated(unit * shift));
        if (const auto after = needs(shift); after.first == 0 && after.second == 0 && (keep.isNull() || (ka >= lo && kb <= hi)))
            m_offset += unit * shift;
    }
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
