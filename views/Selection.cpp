// SPDX-License-Identifier: MIT
#include "Selection.h"

#include "GraphDocument.h"

namespace fxlens::views {

Selection::Selection(GraphDocument *doc, QObject *parent) : QObject(parent)
{
    if (!doc)
        return;
    setGraph(doc->graph());
    connect(doc, &GraphDocument::aboutToReplace, this, [this] { setGraph(nullptr); });
    connect(doc, &GraphDocument::replaced, this, &Selection::setGraph);
    connect(doc, &GraphDocument::changed, this, &Selection::setGraph); // nodes may be gone
}

void Selection::setGraph(const ir::Graph *g)
{
    m_graph = g;
    m_current.clear();
    m_module.clear();
    m_highlight.clear();
    m_anchor = nullptr;
}

const ir::Node *Selection::find(const QString &name) const
{
    if (!m_graph)
        return nullptr;
    const std::string n = name.toStdString();
    for (const ir::Node *node = m_graph->first(); node; node = node->next())
        if (node->name() == n)
            return node;
    return nullptr;
}

void Selection::makeCurrent(const ir::Node *node, QObject *origin, bool reveal)
{
    m_current = node ? QString::fromStdString(node->name()) : QString();
    m_module.clear();
    Q_EMIT currentNodeChanged(node, origin, reveal);
    Q_EMIT nodeSelected(m_current);
}

bool Selection::selectNode(const QString &name)
{
    const ir::Node *n = find(name);
    if (!n)
        return false;
    makeCurrent(n, nullptr, true);
    return true;
}

void Selection::setCurrentNode(const ir::Node *node, QObject *origin) { makeCurrent(node, origin, false); }

bool Selection::setCurrentNode(const QString &name, QObject *origin)
{
    const ir::Node *n = find(name);
    makeCurrent(n, origin, false);
    return n != nullptr;
}

void Selection::selectModule(const QString &path, QObject *origin)
{
    m_current.clear();
    m_module = path;
    Q_EMIT moduleSelected(path, origin);
    Q_EMIT nodeSelected(QString());
}

void Selection::highlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor)
{
    m_highlight = nodes;
    m_anchor = anchor;
    Q_EMIT highlightChanged(nodes, anchor);
    if (anchor)
        makeCurrent(anchor, nullptr, false);
}

} // namespace fxlens::views
