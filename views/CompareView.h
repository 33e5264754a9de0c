// SPDX-License-Identifier: MIT
// CompareView: two versions of a graph side by side (copies, so the document can move on), each
// on its own canvas, with the difference by provenance marked: a node of A whose name is not in B
// was removed (red), a node of B whose name is not in A was added (green), a node in both whose
// op, target or arguments differ was changed (amber). Navigation is synchronized: zooming or
// panning one canvas shows the same node (the one at its centre, or its nearest common
// neighbour) at the same zoom in the other.
#pragma once

#include "ir/Graph.h"

#include <QString>
#include <QWidget>

#include <memory>

class QLabel;

namespace fxlens::views {

class GraphCanvas;
class GraphDocument;

class CompareView : public QWidget {
    Q_OBJECT
public:
    CompareView(std::unique_ptr<ir::Graph> a, const QString &labelA, std::unique_ptr<ir::Graph> b, const QString &labelB,
                QWidget *parent = nullptr);
    ~CompareView() override;

    GraphCanvas *left() const { return m_left; }
    GraphCanvas *right() const { return m_right; }
    size_t removed() const { return m_removed; }
    size_t added() const { return m_added; }
    size_t changed() const { return m_changed; }
    QString summary() const;

private:
    void follow(GraphCanvas *from, GraphCanvas *to, const ir::Graph &toGraph);

    std::unique_ptr<ir::Graph> m_a, m_b;
    GraphCanvas *m_left = nullptr, *m_right = nullptr;
    QLabel *m_summary = nullptr;
    size_t m_removed = 0, m_added = 0, m_changed = 0;
    bool m_syncing = false;
};

/// Opens versions `a` and `b` of the document's history side by side in a window of their own
/// (deleted when closed); nullptr with `error` for a version not in the history.
CompareView *compareVersions(GraphDocument &doc, int a, int b, QWidget *parent, QString *error);

} // namespace fxlens::views
