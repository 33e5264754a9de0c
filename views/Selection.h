// SPDX-License-Identifier: MIT
// Selection: what the window has selected, as state: the current node (or module box) and the
// highlighted match or candidate. It knows no panel (hotspot's FilterAndZoomStack): every panel
// that shows or changes the selection connects itself to it (their setSelection()), so no two rows
// or boxes claim to be the selection, and a new panel that follows it touches only its own files.
#pragma once

#include "ir/Graph.h"

#include <QObject>
#include <QString>

#include <vector>

namespace fxlens::views {

class GraphDocument;

class Selection : public QObject {
    Q_OBJECT
public:
    /// Follows `doc` (may be null: then setGraph() says which graph the names are looked up in).
    explicit Selection(GraphDocument *doc, QObject *parent = nullptr);

    /// The graph node names are looked up in; drops the selection and the highlight (quietly: the
    /// panels follow the document themselves).
    void setGraph(const ir::Graph *g);
    const ir::Graph *graph() const { return m_graph; }

    /// Selects a node by name everywhere, the panels making it visible (a filter that hides it is
    /// cleared); false when the graph has no such node.
    bool selectNode(const QString &name);
    /// A panel picked a node (`origin`, which shows it already; nullptr: none); the others follow.
    void setCurrentNode(const ir::Node *node, QObject *origin);
    /// A panel picked a node by name (the canvas); false when the graph has no such node.
    bool setCurrentNode(const QString &name, QObject *origin);
    /// A module box became the selection (its qualified path); no node is current.
    void selectModule(const QString &path, QObject *origin);
    /// Outlines a match (its nodes; its anchor becomes the current node); empty clears.
    void highlight(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);

    /// The current node's name ("" for a module box or none).
    QString currentNode() const { return m_current; }
    /// The selected module box's path ("" when a node or nothing is selected).
    QString currentModule() const { return m_module; }
    const std::vector<const ir::Node *> &highlighted() const { return m_highlight; }
    const ir::Node *anchor() const { return m_anchor; }
    /// The node of the graph named `name`, nullptr when none.
    const ir::Node *find(const QString &name) const;

Q_SIGNALS:
    /// The current node changed (nullptr: none). `origin` is the panel that picked it (it need not
    /// follow), nullptr when asked for by name or by a highlight; `reveal`: panels make it visible
    /// even when a filter hides it (selectNode), else they show it only if they can.
    void currentNodeChanged(const ir::Node *node, QObject *origin, bool reveal);
    /// A module box became the selection.
    void moduleSelected(const QString &path, QObject *origin);
    /// A node became the selection (any panel); "" for a module box or none.
    void nodeSelected(const QString &name);
    /// The highlighted match changed (empty: none).
    void highlightChanged(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);

private:
    void makeCurrent(const ir::Node *node, QObject *origin, bool reveal);

    const ir::Graph *m_graph = nullptr;
    QString m_current, m_module;
    std::vector<const ir::Node *> m_highlight;
    const ir::Node *m_anchor = nullptr;
};

} // namespace fxlens::views
