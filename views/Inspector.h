// SPDX-License-Identifier: MIT
// Inspector: the selected node (op, target, arguments with links to the nodes they read, users,
// value, stride, module, measured time, provenance, stack trace) or the selected module box (class,
// path, node count, inputs and outputs, attributes).
#pragma once

#include "ir/Graph.h"

#include <QTextBrowser>

#include <functional>
#include <string>

namespace fxlens::views {

class GraphDocument;
class Selection;

class Inspector : public QTextBrowser {
    Q_OBJECT
public:
    explicit Inspector(QWidget *parent = nullptr);
    /// `profile`: the node's measured figures ("" when none).
    void showNode(const ir::Node *n, const QString &profile);
    /// A module of `g` by its qualified path; false when the graph has no node in it.
    bool showModule(const ir::Graph &g, const QString &path);
    /// Links in the palette's link colour (readable in light and dark themes).
    void updateLinkColor();
    /// Shows the selection's node or module; a link selects its node. `profileStats` gives a node's
    /// measured figures ("" when none).
    void setSelection(Selection *selection, std::function<QString(const std::string &)> profileStats);
    /// Empties when the document's graph is replaced or edited (what it showed may be gone).
    void setDocument(GraphDocument *doc);

Q_SIGNALS:
    void nodeRequested(const QString &name);

protected:
    void changeEvent(QEvent *e) override;
};

} // namespace fxlens::views
