// SPDX-License-Identifier: MIT
#include "Selection.h"

#include "GraphCanvas.h"
#include "Inspector.h"
#include "NodeList.h"
#include "ProfilePanel.h"

namespace fxlens::views {

Selection::Selection(NodeList &nodes, GraphCanvas &canvas, Inspector &inspector, ProfilePanel &profile, QObject *parent)
    : QObject(parent), m_nodes(nodes), m_canvas(canvas), m_inspector(inspector), m_profile(profile)
{
    connect(&nodes, &NodeList::nodeActivated, this, [this](const ir::Node *n) {
        show(n);
        if (n)
            m_canvas.selectNode(QString::fromStdString(n->name()));
    });
    connect(&canvas, &GraphCanvas::nodeSelected, this, [this](const QString &name) { show(m_nodes.follow(name)); });
    connect(&canvas, &GraphCanvas::moduleSelected, this, [this](const QString &path) {
        m_nodes.clearSelection(); // no node row stays selected beside the module
        m_current.clear();
        if (const ir::Graph *g = m_canvas.graph())
            m_inspector.showModule(*g, path);
        Q_EMIT nodeSelected(QString());
    });
    connect(&inspector, &Inspector::nodeRequested, this, &Selection::selectNode);
    connect(&profile, &ProfilePanel::nodeRequested, this, &Selection::selectNode);
}

void Selection::show(const ir::Node *n)
{
    m_inspector.showNode(n, n ? m_profile.statsFor(n->name()) : QString());
    m_current = n ? QString::fromStdString(n->name()) : QString();
    m_profile.selectNode(m_current); // its kernels and ranges on the timeline
    Q_EMIT nodeSelected(m_current);
}

bool Selection::selectNode(const QString &name)
{
    const ir::Node *n = m_nodes.select(name);
    if (!n)
        return false;
    show(n);
    m_canvas.selectNode(name);
    return true;
}

void Selection::highlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor)
{
    if (anchor)
        m_canvas.selectNode(QString::fromStdString(anchor->name()));
    m_canvas.setHighlight(nodes, anchor);
    if (anchor)
        show(m_nodes.follow(QString::fromStdString(anchor->name())));
}

} // namespace fxlens::views
