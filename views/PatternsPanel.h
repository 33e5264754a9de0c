// SPDX-License-Identifier: MIT
// PatternsPanel: every pattern with its candidate matches in the open graph (counted off the GUI
// thread by the document); picking a pattern lists its matches, picking a match outlines it.
#pragma once

#include "ir/Graph.h"
#include "rewrite/Pattern.h"

#include <QWidget>

#include <vector>

class QListWidget;

namespace fxlens::views {

class GraphDocument;
class Selection;
struct MatchCounts;

class PatternsPanel : public QWidget {
    Q_OBJECT
public:
    explicit PatternsPanel(GraphDocument &doc, QWidget *parent = nullptr);
    /// Lists the matches of one pattern in the open graph and outlines the first; returns how many.
    int showMatches(const QString &pattern);
    void showMatch(int row);
    /// A match picked is highlighted in the selection.
    void setSelection(Selection *selection);

Q_SIGNALS:
    void highlightRequested(const std::vector<const ir::Node *> &nodes, const ir::Node *anchor);
    /// The anchors of every candidate (the canvas marks them).
    void anchorsCounted(const std::vector<const ir::Node *> &anchors);

private:
    void counting();
    void counted(const MatchCounts &c);

    GraphDocument &m_doc;
    QListWidget *m_patterns = nullptr, *m_matchList = nullptr;
    std::vector<rewrite::Match> m_matches;
};

} // namespace fxlens::views
