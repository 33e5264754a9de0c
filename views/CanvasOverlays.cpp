// SPDX-License-Identifier: MIT
// CanvasOverlays, and the canvas' overlay setters and selection wiring over it (see GraphCanvas.h).
#include "CanvasOverlays.h"

#include "GraphCanvas.h"
#include "Selection.h"

#include <QFontMetricsF>

#include <algorithm>

namespace fxlens::views {

namespace {

int itemOf(const layout::ViewGraph &view, const ir::Node *n)
{
    return n && n->id() < view.itemOfNode.size() ? view.itemOfNode[n->id()] : -1;
}

} // namespace

void CanvasOverlays::set(Layer layer, NodeValues values, const layout::ViewGraph &view)
{
    m_layers[size_t(layer)].source = std::move(values);
    map(layer, view);
}

void CanvasOverlays::setNodes(Layer layer, const std::vector<const ir::Node *> &nodes, const layout::ViewGraph &view)
{
    NodeValues values;
    values.reserve(nodes.size());
    for (const ir::Node *n : nodes)
        values.push_back({n, 1.0});
    set(layer, std::move(values), view);
}

std::vector<const ir::Node *> CanvasOverlays::nodes(Layer layer) const
{
    std::vector<const ir::Node *> out;
    for (const auto &[n, v] : source(layer))
        out.push_back(n);
    return out;
}

void CanvasOverlays::map(Layer layer, const layout::ViewGraph &view)
{
    Data &d = m_layers[size_t(layer)];
    d.perItem.assign(view.items.size(), 0.0);
    double top = 0;
    for (const auto &[n, v] : d.source) {
        const int i = itemOf(view, n);
        if (i < 0)
            continue;
        double &to = d.perItem[size_t(i)];
        switch (layer) {
        case Layer::Heat: // summed per item, then a share of the costliest
            if (v > 0)
                top = std::max(top, to += v);
            break;
        case Layer::Diff: // a box holding nodes marked differently shows "changed"
            to = to == 0 || to == v ? v : 3.0;
            break;
        default: // flags; the highlight's anchor (2) wins over its other nodes (1)
            to = std::max(to, v);
            break;
        }
    }
    if (layer == Layer::Heat) {
        for (double &h : d.perItem)
            h = top > 0 ? h / top : 0.0;
        if (top <= 0)
            d.perItem.clear();
    }
}

void CanvasOverlays::remap(const layout::ViewGraph &view)
{
    for (size_t l = 0; l < kLayers; ++l)
        map(Layer(l), view);
}

void CanvasOverlays::clear(Layer layer)
{
    m_layers[size_t(layer)].source.clear();
    m_layers[size_t(layer)].perItem.clear();
}

void CanvasOverlays::clearAll()
{
    for (size_t l = 0; l < kLayers; ++l)
        clear(Layer(l));
}

// --- the canvas' overlays ----------------------------------------------------------------------------

void GraphCanvas::setHighlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor)
{
    CanvasOverlays::NodeValues values;
    for (const ir::Node *n : nodes)
        values.push_back({n, 1.0});
    if (anchor)
        values.push_back({anchor, 2.0});
    m_overlays.set(Layer::Highlight, std::move(values), m_view);
    m_anchorName = anchor ? anchor->name() : std::string();
    m_anchorModule = anchor && !layout::displayModules(anchor).empty() ? layout::displayModules(anchor).back().path : std::string();
    update();
}

std::pair<QString, QRectF> GraphCanvas::anchorNote(int item) const
{
    if (item < 0 || size_t(item) >= m_view.items.size() || m_anchorName.empty() || highlightOf(item) != 2)
        return {};
    const ViewItem &it = m_view.items[size_t(item)];
    if (it.kind != ViewItem::Kind::Module)
        return {};
    const QString name = QString::fromStdString(m_anchorName);
    const QString text = it.stacked > 0 && !m_anchorModule.empty()
        ? QStringLiteral("%1 in %2").arg(name, QString::fromStdString(m_anchorModule))
        : QStringLiteral("contains %1").arg(name);
    QFont title = font(), small = font();
    title.setPixelSize(12); // as paintScene draws them
    small.setPixelSize(10);
    const double titleEnd = it.x + 6 + QFontMetricsF(title).horizontalAdvance(QString::fromStdString(it.label));
    const QFontMetricsF fm(small);
    const double right = it.x + it.w - (isMarked(item) ? 14 : 6); // clear of the mark's dot
    const QRectF r(right - fm.horizontalAdvance(text), it.y + 3, fm.horizontalAdvance(text), fm.height());
    if (r.left() < titleEnd + 10)
        return {};
    return {text, r};
}

void GraphCanvas::paintAnchorNote(QPainter &p, int item) const
{
    if (const auto [note, at] = anchorNote(item); !note.isEmpty()) {
        // On a plate of the canvas' base colour: red text on a box the profile tints red is lost.
        p.setPen(Qt::NoPen);
        p.setBrush(palette().color(QPalette::Base));
        p.drawRoundedRect(at.adjusted(-3, -1, 3, 1), 3, 3);
        p.setPen(QColor(220, 40, 40));
        p.drawText(at, Qt::AlignRight | Qt::AlignTop, note);
    }
}

void GraphCanvas::setMarked(const std::vector<const ir::Node *> &nodes)
{
    m_overlays.setNodes(Layer::Marked, nodes, m_view);
    update();
}

void GraphCanvas::setHeat(const std::vector<std::pair<const ir::Node *, double>> &values)
{
    m_overlays.set(Layer::Heat, values, m_view);
    m_pixelColor.clear();
    update();
}

void GraphCanvas::setSearchHits(const std::vector<const ir::Node *> &nodes)
{
    m_overlays.setNodes(Layer::Search, nodes, m_view);
    update();
}

void GraphCanvas::setDiffMarks(const std::vector<std::pair<const ir::Node *, DiffMark>> &marks)
{
    CanvasOverlays::NodeValues values;
    for (const auto &[n, mark] : marks)
        values.push_back({n, double(mark)});
    m_overlays.set(Layer::Diff, std::move(values), m_view);
    m_pixelColor.clear();
    update();
}

void GraphCanvas::setSelection(Selection *selection)
{
    connect(this, &GraphCanvas::nodeSelected, selection, [this, selection](const QString &name) { selection->setCurrentNode(name, this); });
    connect(this, &GraphCanvas::moduleSelected, selection, [this, selection](const QString &path) { selection->selectModule(path, this); });
    connect(selection, &Selection::currentNodeChanged, this, [this](const ir::Node *n, QObject *origin) {
        if (n && origin != this)
            selectNode(QString::fromStdString(n->name()));
    });
    connect(selection, &Selection::highlightChanged, this, &GraphCanvas::setHighlight);
}

} // namespace fxlens::views
