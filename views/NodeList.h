// SPDX-License-Identifier: MIT
// NodeList: the node table with its search field (name, target or module; a /regex/ is a regular
// expression). Enter jumps to the first match; the match count is reported.
#pragma once

#include "ir/Graph.h"

#include <QWidget>

class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace fxlens::views {

class GraphDocument;
class NodeTableModel;
class Selection;

class NodeList : public QWidget {
    Q_OBJECT
public:
    explicit NodeList(QWidget *parent = nullptr);
    void setGraph(const ir::Graph *g);
    /// Follows the document's graph; a new graph clears the search (a filter of the previous file
    /// would hide this one's nodes).
    void setDocument(GraphDocument *doc);
    /// Follows the window's selection (nothing selected: no row highlighted) and selects through it.
    void setSelection(Selection *selection);
    /// Filters the rows; returns how many match.
    int setSearch(const QString &text);
    int visibleCount() const;
    /// Makes `name` the current row (clearing a search that hides it); the node, or nullptr.
    const ir::Node *select(const QString &name);
    /// Shows `name` as the current row without emitting nodeActivated (the canvas selected it).
    const ir::Node *follow(const QString &name);
    /// No current row (a module box is the selection).
    void clearSelection();
    QLineEdit *searchField() const { return m_search; }

    /// Lists parameters and constants even without a search (off: hidden until searched for).
    void setShowConstants(bool on);
    /// The nodes the search matches (empty when there is no search).
    std::vector<const ir::Node *> matchedNodes() const;

Q_SIGNALS:
    /// The user picked a row (click, keys, Enter in the search field).
    void nodeActivated(const ir::Node *node);
    void searchChanged(const QString &text, int matches);

private:
    NodeTableModel *m_model = nullptr;
    QSortFilterProxyModel *m_proxy = nullptr;
    QTableView *m_table = nullptr;
    QLineEdit *m_search = nullptr;
    /// Set while the table follows a selection made elsewhere: its row change is not announced
    /// back (the selection model's signals still reach the view, which repaints the old row).
    bool m_following = false;
    QString m_current; ///< the current row's node (kept across edits, which reset the model)
};

} // namespace fxlens::views
