// SPDX-License-Identifier: MIT
// Selection: the one node (or module box) the window shows, kept the same in the node table, on the
// canvas and in the inspector, and the highlighted match or candidate. Every panel selects through
// it, so no two rows or boxes claim to be the selection.
#pragma once

#include "ir/Graph.h"

#include <QObject>
#include <QString>

#include <vector>

namespace fxlens::views {

class GraphCanvas;
class Inspector;
class NodeList;
class ProfilePanel;

class Selection : public QObject {
    Q_OBJECT
public:
    Selection(NodeList &nodes, GraphCanvas &canvas, Inspector &inspector, ProfilePanel &profile, QObject *parent);
    /// Selects a node by name everywhere; false when the graph has no such node.
    bool selectNode(const QString &name);
    /// Outlines a match (its nodes, its anchor selected).
    void highlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);

Q_SIGNALS:
    /// A node became the selection (any panel); "" for a module box or none.
    void nodeSelected(const QString &name);

private:
    void show(const ir::Node *n);

    NodeList &m_nodes;
    GraphCanvas &m_canvas;
    Inspector &m_inspector;
    ProfilePanel &m_profile;
    QString m_current;
};

} // namespace fxlens::views
