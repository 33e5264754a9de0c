// SPDX-License-Identifier: MIT
// GraphCanvas: fitting the drawing to the widget (clear of the legend, never below the readable
// minimum) and zooming around a point.
#include "GraphCanvas.h"

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
    const QRectF area = fitArea(size(), legendRect(), QSizeF(m_view.width, m_view.height));
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
    const QRectF area = fitArea(size(), legendRect(), r.size());
    m_scale = std::clamp(std::min(area.width() / r.width(), area.height() / r.height()), kMinFitScale, 1.0);
    const double top = r.height() * m_scale <= area.height() ? area.center().y() - r.height() * m_scale / 2 : area.top();
    m_offset = QPointF(area.center().x() - r.center().x() * m_scale, top - r.top() * m_scale);
    m_untouched = false;
    update();
    Q_EMIT viewChanged();
    return true;
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
