// SPDX-License-Identifier: MIT
// GraphCanvas: stacks of repeated sibling modules (one box "blocks.0–49 ×50" for 50 identical
// blocks: layout::findStacks), unstacking them, and the overview a view opens with.
#include "GraphCanvas.h"

#include "ir/ModuleRange.h"

#include <QContextMenuEvent>
#include <QMenu>

#include <algorithm>

namespace fxlens::views {

void GraphCanvas::findStacks()
{
    m_viewOptions.stacks.clear();
    if (!m_graph)
        return;
    for (auto &s : layout::findStacks(*m_graph))
        if (!m_unstacked.count(s.members.front()))
            m_viewOptions.stacks.push_back(std::move(s));
}

void GraphCanvas::unstack(int index)
{
    if (index < 0 || size_t(index) >= m_viewOptions.stacks.size())
        return;
    const auto &members = m_viewOptions.stacks[size_t(index)].members;
    m_unstacked.insert(members.front());
    // The stack's box becomes its members' boxes where it stood (placeInPlace cannot match a box
    // that was none of them: the view is laid out afresh, the first member held on screen).
    QPointF onScreen;
    for (const auto &it : m_view.items)
        if (it.kind == layout::ViewItem::Kind::Module && it.stack == index && it.stacked)
            onScreen = QPointF(it.x, it.y) * m_scale + m_offset;
    const std::string first = members.front();
    findStacks();
    relayout(true);
    for (const auto &it : m_view.items)
        if (it.kind == layout::ViewItem::Kind::Module && it.module == first)
            m_offset = onScreen - QPointF(it.x, it.y) * m_scale;
    m_untouched = false;
    update();
    Q_EMIT viewChanged();
    Q_EMIT stackUnstacked(QString::fromStdString(first));
}

bool GraphCanvas::unstackMembersOf(const QString &firstMember)
{
    for (size_t i = 0; i < m_viewOptions.stacks.size(); ++i)
        if (m_viewOptions.stacks[i].members.front() == firstMember.toStdString()) {
            unstack(int(i));
            return true;
        }
    return false;
}

void GraphCanvas::contextMenuEvent(QContextMenuEvent *e)
{
    const int i = itemAt(e->pos());
    if (i < 0 || !m_view.items[size_t(i)].stacked || m_view.items[size_t(i)].kind != layout::ViewItem::Kind::Module)
        return QWidget::contextMenuEvent(e);
    const auto item = m_view.items[size_t(i)];
    const auto &stack = m_viewOptions.stacks[size_t(item.stack)];
    // The box's first member stands for all of them (a box holds one run of the stack's members).
    QString representative;
    for (const auto &m : stack.members)
        if (ir::rangeContains(item.module, m) && !isExpanded(QString::fromStdString(m))) {
            representative = QString::fromStdString(m);
            break;
        }
    QMenu menu(this);
    menu.addAction(tr("Unstack %1 (%2 boxes)").arg(QString::fromStdString(item.module)).arg(item.stacked), this,
                   [this, s = item.stack] { unstack(s); });
    menu.addAction(tr("Expand One of Them (%1)").arg(representative), this, [this, representative] { setExpanded(representative, true); });
    menu.exec(e->globalPos());
}

bool GraphCanvas::revealInOverview(int item)
{
    if (item < 0)
        return false;
    const double scale = m_scale;
    const QPointF offset = m_offset;
    const QRect vp = sceneViewport();
    const auto legible = [&] { return 32 * m_scale >= 14 && vp.contains(itemRect(item).toAlignedRect()); }; // the node's text, in view
    fitToView();
    if (legible())
        return true;
    // Else the drawing from its start (its inputs) down to the item, or from its left end to the
    // item in a wide drawing, at the zoom that fits that stretch, centred across: what leads to
    // the item, seen with it.
    constexpr double kMargin = 20;
    const auto &it = m_view.items[size_t(item)];
    const bool tall = m_content.height() >= m_content.width();
    const QRectF stretch = tall ? QRectF(m_content.left(), m_content.top(), m_content.width(), it.y + it.h - m_content.top())
                                : QRectF(m_content.left(), m_content.top(), it.x + it.w - m_content.left(), m_content.height());
    const double fit = std::min(1.0,
                                tall ? (vp.height() - 2 * kMargin) / std::max(stretch.height(), 1.0)
                                     : (vp.width() - 2 * kMargin) / std::max(stretch.width(), 1.0));
    // Zoomed out a few percent a step where that leaves something cut at an edge (the settling
    // pan would take the start out of view to uncut it).
    for (double s = fit; s >= kLandScale; s *= 0.96) {
        m_scale = s;
        m_offset = tall ? QPointF(QRectF(vp).center().x() - stretch.center().x() * s, vp.top() + kMargin - stretch.top() * s)
                        : QPointF(vp.left() + kMargin - stretch.left() * s, QRectF(vp).center().y() - stretch.center().y() * s);
        settle(QRectF(it.x, it.y, it.w, it.h), Settle::Context);
        const QPointF first = onScreen(stretch).topLeft();
        if (legible() && (tall ? first.y() >= vp.top() : first.x() >= vp.left()))
            return true;
    }
    m_scale = scale;
    m_offset = offset;
    return false;
}

void GraphCanvas::foldModules(const std::set<std::string> &modules)
{
    const auto inside = [&](const std::string &path) {
        return std::any_of(modules.begin(), modules.end(), [&](const std::string &m) { return path == m || path.rfind(m + ".", 0) == 0; });
    };
    if (std::erase_if(m_expanded, inside) > 0) // afresh: in place, 50 boxes would keep the members' width
        relayout(false, Placement::Fresh);
}

} // namespace fxlens::views
