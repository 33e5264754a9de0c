// SPDX-License-Identifier: MIT
// GraphCanvas: the colour legend, a bar along the canvas' bottom edge below the drawing (never
// over it): the op categories in view, then the diff colours while items are marked.
#include "GraphCanvas.h"

#include <QLinearGradient>
#include <QPainter>

#include <array>

namespace fxlens::views {

using layout::OpCategory;

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
    // A profile's tint reddens boxes by their device time: without an entry a red box reads as
    // "removed".
    if (!m_overlays.source(Layer::Heat).empty()) {
        const QColor base = tintBase(dark);
        rows.push_back({tr("device time (tint: 0 → most)"), heatTint(base, 0), heatTint(base, 1)});
    }
    return rows;
}

namespace {
QFont legendFont(QFont f)
{
    f.setPixelSize(11);
    return f;
}

/// Where each row of the legend is drawn in a bar `width` wide whose top is at 0: its entries
/// (a swatch, then the name) side by side, wrapped onto further lines; `height` is the bar's.
std::vector<QRect> legendCells(const std::vector<GraphCanvas::LegendRow> &rows, const QFontMetrics &fm, int width, int *height)
{
    const int line = fm.height() + 4, pad = 8, gap = 16;
    std::vector<QRect> cells;
    int x = pad, y = 3;
    for (const auto &r : rows) {
        const int w = 22 + fm.horizontalAdvance(r.name);
        if (x > pad && x + w > width - pad)
            x = pad, y += line;
        cells.emplace_back(x, y, w, line);
        x += w + gap;
    }
    *height = rows.empty() ? 0 : y + line + 3;
    return cells;
}
} // namespace

QRect GraphCanvas::legendRect() const
{
    if (!m_legend || m_view.items.empty())
        return {};
    int h = 0;
    legendCells(legendRows(), QFontMetrics(legendFont(font())), width(), &h);
    return QRect(0, height() - h, width(), h);
}

QRect GraphCanvas::sceneViewport() const { return QRect(0, 0, width(), height() - legendRect().height()); }

void GraphCanvas::paintLegend(QPainter &p)
{
    const QFont f = legendFont(font());
    p.setFont(f);
    const QRect bar = legendRect();
    p.fillRect(bar, palette().color(QPalette::Window));
    p.setPen(palette().color(QPalette::Mid));
    p.setBrush(Qt::NoBrush);
    p.drawLine(bar.topLeft(), bar.topRight());
    const auto rows = legendRows();
    int h = 0;
    const auto cells = legendCells(rows, QFontMetrics(f), width(), &h);
    for (size_t k = 0; k < rows.size(); ++k) {
        const QRect c = cells[k].translated(0, bar.top());
        const QRect swatch(c.left(), c.top() + 3, 16, c.height() - 6);
        if (rows[k].to.isValid()) {
            QLinearGradient ramp(swatch.topLeft(), swatch.topRight());
            ramp.setColorAt(0, rows[k].colour);
            ramp.setColorAt(1, rows[k].to);
            p.fillRect(swatch, ramp);
        } else {
            p.fillRect(swatch, rows[k].colour);
        }
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(swatch);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(c.adjusted(22, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, rows[k].name);
    }
}

void GraphCanvas::setLegendVisible(bool on)
{
    m_legend = on;
    update();
}

} // namespace fxlens::views
