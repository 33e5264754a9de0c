// SPDX-License-Identifier: MIT
#include "GraphCanvas.h"

#include <QFile>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QSvgGenerator>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace fxlens::views {

using layout::ViewItem;

namespace {

QColor fillFor(const ViewItem &i, bool dark)
{
    if (i.kind == ViewItem::Kind::Module)
        return dark ? QColor(0x4a, 0x44, 0x2a) : QColor(0xfb, 0xf3, 0xd5);
    switch (i.node->op()) {
    case ir::OpKind::Placeholder: return dark ? QColor(0x2e, 0x5a, 0x3a) : QColor(0xd4, 0xf0, 0xd8);
    case ir::OpKind::GetAttr: return dark ? QColor(0x4a, 0x4a, 0x4a) : QColor(0xe6, 0xe6, 0xe6);
    case ir::OpKind::CallFunction: return dark ? QColor(0x2b, 0x44, 0x66) : QColor(0xd6, 0xe6, 0xfa);
    case ir::OpKind::CallMethod: return dark ? QColor(0x25, 0x55, 0x55) : QColor(0xd2, 0xf0, 0xee);
    case ir::OpKind::CallModule: return dark ? QColor(0x4e, 0x33, 0x66) : QColor(0xe8, 0xdc, 0xf6);
    case ir::OpKind::Output: return dark ? QColor(0x66, 0x44, 0x22) : QColor(0xfc, 0xe0, 0xc4);
    }
    return Qt::white;
}

} // namespace

GraphCanvas::GraphCanvas(QWidget *parent) : QWidget(parent)
{
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(false);
    setMinimumSize(200, 150);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void GraphCanvas::setGraph(const ir::Graph *g)
{
    m_graph = g;
    m_expanded.clear();
    m_selected = -1;
    m_highlightNodes.clear();
    m_markedNodes.clear();
    m_anchor = nullptr;
    relayout(false);
    fitToView();
}

void GraphCanvas::relayout(bool keepCenter)
{
    const QPointF center = toScene(QPointF(width() / 2.0, height() / 2.0));
    std::string selectedName;
    if (m_selected >= 0 && size_t(m_selected) < m_view.items.size())
        selectedName = m_view.items[size_t(m_selected)].label;
    m_view = m_graph ? layout::buildView(*m_graph, m_expanded) : layout::ViewGraph{};
    layout::layeredLayout(m_view);
    m_edgesOf.assign(m_view.items.size(), {});
    for (size_t e = 0; e < m_view.edges.size(); ++e) {
        m_edgesOf[m_view.edges[e].from].push_back(uint32_t(e));
        m_edgesOf[m_view.edges[e].to].push_back(uint32_t(e));
    }
    m_selected = -1;
    for (size_t i = 0; i < m_view.items.size(); ++i)
        if (!selectedName.empty() && m_view.items[i].label == selectedName)
            m_selected = int(i);
    setHighlight(m_highlightNodes, m_anchor);
    setMarked(m_markedNodes);
    rebuildIndex();
    if (keepCenter) {
        // Keep the same scene point under the widget centre where it still exists.
        const QPointF c(std::clamp(center.x(), 0.0, m_view.width), std::clamp(center.y(), 0.0, m_view.height));
        m_offset = QPointF(width() / 2.0, height() / 2.0) - c * m_scale;
    }
    update();
}

void GraphCanvas::rebuildIndex()
{
    m_cols = std::max(1, int(std::ceil(m_view.width / m_cell)));
    m_rows = std::max(1, int(std::ceil(m_view.height / m_cell)));
    m_grid.assign(size_t(m_cols) * size_t(m_rows), {});
    for (size_t i = 0; i < m_view.items.size(); ++i) {
        const auto &it = m_view.items[i];
        const int c0 = std::clamp(int(it.x / m_cell), 0, m_cols - 1), c1 = std::clamp(int((it.x + it.w) / m_cell), 0, m_cols - 1);
        const int r0 = std::clamp(int(it.y / m_cell), 0, m_rows - 1), r1 = std::clamp(int((it.y + it.h) / m_cell), 0, m_rows - 1);
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c)
                m_grid[size_t(r) * size_t(m_cols) + size_t(c)].push_back(uint32_t(i));
    }
    m_stamp.assign(m_view.items.size(), 0);
    m_stampNow = 0;
}

std::vector<int> GraphCanvas::itemsIn(const QRectF &r) const
{
    std::vector<int> out;
    if (m_view.items.empty())
        return out;
    if (++m_stampNow == 0) {
        std::fill(m_stamp.begin(), m_stamp.end(), 0);
        m_stampNow = 1;
    }
    const int c0 = std::clamp(int(std::floor(r.left() / m_cell)), 0, m_cols - 1), c1 = std::clamp(int(std::floor(r.right() / m_cell)), 0, m_cols - 1);
    const int r0 = std::clamp(int(std::floor(r.top() / m_cell)), 0, m_rows - 1), r1 = std::clamp(int(std::floor(r.bottom() / m_cell)), 0, m_rows - 1);
    for (int row = r0; row <= r1; ++row)
        for (int c = c0; c <= c1; ++c)
            for (uint32_t i : m_grid[size_t(row) * size_t(m_cols) + size_t(c)]) {
                if (m_stamp[i] == m_stampNow)
                    continue;
                m_stamp[i] = m_stampNow;
                const auto &it = m_view.items[i];
                if (QRectF(it.x, it.y, it.w, it.h).intersects(r))
                    out.push_back(int(i));
            }
    return out;
}

void GraphCanvas::fitToView()
{
    if (m_view.items.empty() || width() <= 0 || height() <= 0) {
        m_scale = 1;
        m_offset = QPointF(0, 0);
        update();
        return;
    }
    const double margin = 20;
    m_scale = std::min((width() - 2 * margin) / std::max(m_view.width, 1.0), (height() - 2 * margin) / std::max(m_view.height, 1.0));
    m_scale = std::clamp(m_scale, 1e-5, 4.0);
    m_offset = QPointF((width() - m_view.width * m_scale) / 2, (height() - m_view.height * m_scale) / 2);
    update();
}

void GraphCanvas::zoomBy(double factor, QPointF around)
{
    const QPointF s = toScene(around);
    m_scale = std::clamp(m_scale * factor, 1e-5, 8.0);
    m_offset = around - s * m_scale;
    update();
}

int GraphCanvas::itemAt(QPointF pos) const
{
    const QPointF s = toScene(pos);
    for (int i : itemsIn(QRectF(s.x() - 1, s.y() - 1, 2, 2))) {
        const auto &it = m_view.items[size_t(i)];
        if (QRectF(it.x, it.y, it.w, it.h).contains(s))
            return i;
    }
    return -1;
}

QRectF GraphCanvas::itemRect(int item) const
{
    if (item < 0 || size_t(item) >= m_view.items.size())
        return {};
    const auto &it = m_view.items[size_t(item)];
    return QRectF(QPointF(it.x, it.y) * m_scale + m_offset, QSizeF(it.w, it.h) * m_scale);
}

void GraphCanvas::setExpanded(const QString &module, bool expanded)
{
    const std::string m = module.toStdString();
    if (expanded == (m_expanded.count(m) > 0))
        return;
    if (expanded)
        m_expanded.insert(m);
    else {
        // Collapsing a module collapses what lies inside it too.
        for (auto it = m_expanded.begin(); it != m_expanded.end();)
            it = (*it == m || it->rfind(m + ".", 0) == 0) ? m_expanded.erase(it) : std::next(it);
    }
    relayout(true);
    Q_EMIT moduleToggled(module, expanded);
}

void GraphCanvas::expandAll()
{
    if (!m_graph)
        return;
    m_expanded = layout::allModules(*m_graph);
    relayout(false);
    fitToView();
}

void GraphCanvas::collapseAll()
{
    m_expanded.clear();
    relayout(false);
    fitToView();
}

void GraphCanvas::setHighlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor)
{
    m_highlightNodes = nodes;
    m_anchor = anchor;
    m_highlight.assign(m_view.items.size(), 0);
    for (const ir::Node *n : nodes)
        if (n && n->id() < m_view.itemOfNode.size() && m_view.itemOfNode[n->id()] >= 0)
            m_highlight[size_t(m_view.itemOfNode[n->id()])] = std::max<uint8_t>(m_highlight[size_t(m_view.itemOfNode[n->id()])], 1);
    if (anchor && anchor->id() < m_view.itemOfNode.size() && m_view.itemOfNode[anchor->id()] >= 0)
        m_highlight[size_t(m_view.itemOfNode[anchor->id()])] = 2;
    update();
}

void GraphCanvas::setMarked(const std::vector<const ir::Node *> &nodes)
{
    m_markedNodes = nodes;
    m_marked.assign(m_view.items.size(), 0);
    for (const ir::Node *n : nodes)
        if (n && n->id() < m_view.itemOfNode.size() && m_view.itemOfNode[n->id()] >= 0)
            m_marked[size_t(m_view.itemOfNode[n->id()])] = 1;
    update();
}

bool GraphCanvas::selectNode(const QString &name)
{
    if (!m_graph)
        return false;
    const ir::Node *node = nullptr;
    for (ir::Node *n = m_graph->first(); n; n = n->next())
        if (QString::fromStdString(n->name()) == name)
            node = n;
    if (!node)
        return false;
    // Expand the modules that hide it.
    bool changed = false;
    for (const auto &f : node->meta().moduleStack)
        if (!f.path.empty() && m_expanded.insert(f.path).second)
            changed = true;
    if (changed)
        relayout(false);
    m_selected = m_view.itemOfNode[node->id()];
    const auto &it = m_view.items[size_t(m_selected)];
    m_scale = std::max(m_scale, 0.8);
    m_offset = QPointF(width() / 2.0, height() / 2.0) - QPointF(it.x + it.w / 2, it.y + it.h / 2) * m_scale;
    update();
    return true;
}

QString GraphCanvas::selectedLabel() const
{
    return m_selected >= 0 ? QString::fromStdString(m_view.items[size_t(m_selected)].label) : QString();
}

void GraphCanvas::paintScene(QPainter &p, const QRectF &sceneRect, double scale, bool everything)
{
    const bool dark = palette().color(QPalette::Window).lightness() < 128;
    const QColor text = palette().color(QPalette::WindowText), edge = dark ? QColor(140, 140, 150) : QColor(120, 120, 130);
    std::vector<int> items;
    if (everything) {
        items.resize(m_view.items.size());
        for (size_t i = 0; i < items.size(); ++i)
            items[i] = int(i);
    } else {
        items = itemsIn(sceneRect);
    }
    // Edges of visible items (an edge whose both ends are off screen but crosses it is rare in a
    // layered layout and not worth a second index).
    const bool drawEdges = everything || scale > 0.02 || items.size() < 4000;
    if (drawEdges) {
        p.setPen(QPen(edge, scale > 0.5 ? 1.2 : 0.0));
        std::vector<uint8_t> drawn(m_view.edges.size(), 0);
        QVector<QLineF> lines;
        for (int i : items)
            for (uint32_t e : m_edgesOf[size_t(i)]) {
                if (drawn[e])
                    continue;
                drawn[e] = 1;
                const auto &a = m_view.items[m_view.edges[e].from], &b = m_view.items[m_view.edges[e].to];
                lines.push_back(QLineF(a.x + a.w / 2, a.y + a.h, b.x + b.w / 2, b.y));
            }
        p.drawLines(lines);
    }
    const bool boxesOnly = !everything && scale < 0.25;
    const bool textLegible = everything || 26 * scale >= 11;
    QFont f = font();
    f.setPointSizeF(9);
    p.setFont(f);
    for (int i : items) {
        const auto &it = m_view.items[size_t(i)];
        const QRectF r(it.x, it.y, it.w, it.h);
        const QColor fill = fillFor(it, dark);
        const uint8_t hl = m_highlight.empty() ? 0 : m_highlight[size_t(i)];
        if (boxesOnly && hl == 0 && i != m_selected) {
            p.fillRect(r, fill);
            continue;
        }
        QPen pen(hl == 2 ? QColor(220, 40, 40) : hl == 1 ? QColor(240, 140, 0) : i == m_selected ? text : fill.darker(160));
        pen.setWidthF((hl || i == m_selected ? 3.0 : 1.0) / std::max(scale, 0.05));
        if (scale < 0.05)
            pen.setWidthF(hl || i == m_selected ? 3.0 / scale : 0.0);
        p.setPen(pen);
        p.setBrush(fill);
        if (it.kind == ViewItem::Kind::Module)
            p.drawRect(r);
        else
            p.drawRoundedRect(r, 6, 6);
        if (!m_marked.empty() && m_marked[size_t(i)]) {
            p.setPen(Qt::NoPen);
            p.setBrush(QColor(220, 40, 40));
            p.drawEllipse(QPointF(it.x + it.w - 6, it.y + 6), 3.5, 3.5);
        }
        if (textLegible) {
            p.setPen(text);
            const QRectF inner = r.adjusted(6, 2, -6, -2);
            const QString label = QString::fromStdString(it.label);
            const QString detail = QString::fromStdString(it.detail);
            p.drawText(inner, Qt::AlignLeft | Qt::AlignTop, p.fontMetrics().elidedText(label, Qt::ElideRight, int(inner.width())));
            QFont small = f;
            small.setPointSizeF(7.5);
            p.setFont(small);
            p.drawText(inner, Qt::AlignLeft | Qt::AlignBottom, QFontMetrics(small).elidedText(detail, Qt::ElideMiddle, int(inner.width())));
            p.setFont(f);
        }
    }
}

void GraphCanvas::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_view.items.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, m_graph ? tr("empty graph") : tr("Open a graph (File ▸ Open, or drop a file here)"));
        return;
    }
    p.setRenderHint(QPainter::Antialiasing, m_scale > 0.3);
    p.translate(m_offset);
    p.scale(m_scale, m_scale);
    const QRectF visible(toScene(QPointF(0, 0)), toScene(QPointF(width(), height())));
    paintScene(p, visible, m_scale, false);
}

void GraphCanvas::wheelEvent(QWheelEvent *e)
{
    const double steps = e->angleDelta().y() / 120.0;
    zoomBy(std::pow(1.25, steps), e->position());
    e->accept();
}

void GraphCanvas::mousePressEvent(QMouseEvent *e)
{
    if (e->button() != Qt::LeftButton)
        return;
    m_dragFrom = e->pos();
    m_dragging = false;
}

void GraphCanvas::mouseMoveEvent(QMouseEvent *e)
{
    if (!(e->buttons() & Qt::LeftButton))
        return;
    const QPoint d = e->pos() - m_dragFrom;
    if (!m_dragging && d.manhattanLength() < 4)
        return;
    m_dragging = true;
    m_offset += d;
    m_dragFrom = e->pos();
    update();
}

void GraphCanvas::mouseReleaseEvent(QMouseEvent *e)
{
    if (e->button() != Qt::LeftButton || m_dragging) {
        m_dragging = false;
        return;
    }
    const int i = itemAt(e->position());
    m_selected = i;
    update();
    if (i >= 0 && m_view.items[size_t(i)].node)
        Q_EMIT nodeSelected(QString::fromStdString(m_view.items[size_t(i)].label));
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent *e)
{
    const int i = itemAt(e->position());
    if (i < 0)
        return;
    const auto &it = m_view.items[size_t(i)];
    if (it.kind == ViewItem::Kind::Module)
        setExpanded(QString::fromStdString(it.module), true);
    else if (!it.module.empty())
        setExpanded(QString::fromStdString(it.module), false); // double-click a node: fold its module
}

void GraphCanvas::keyPressEvent(QKeyEvent *e)
{
    const QPointF c(width() / 2.0, height() / 2.0);
    if (e->key() == Qt::Key_Plus || e->key() == Qt::Key_Equal)
        zoomBy(1.25, c);
    else if (e->key() == Qt::Key_Minus)
        zoomBy(0.8, c);
    else if (e->key() == Qt::Key_0 || e->key() == Qt::Key_F)
        fitToView();
    else
        QWidget::keyPressEvent(e);
}

bool GraphCanvas::exportSvg(const QString &path)
{
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(QSize(int(std::ceil(m_view.width)) + 40, int(std::ceil(m_view.height)) + 40));
    gen.setViewBox(QRectF(-20, -20, m_view.width + 40, m_view.height + 40));
    gen.setTitle(QStringLiteral("fxlens graph"));
    QPainter p;
    if (!p.begin(&gen))
        return false;
    paintScene(p, QRectF(0, 0, m_view.width, m_view.height), 1.0, true);
    p.end();
    return QFile::exists(path);
}

bool GraphCanvas::exportPng(const QString &path) { return grab().save(path, "PNG"); }

} // namespace fxlens::views
